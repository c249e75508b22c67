import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The Graph API version the fake's base URL ends in: like WHATSAPP_API_URL in production
 * (https://graph.facebook.com/v21.0), so a client that drops the base's path fails here too.
 */
export const FAKE_META_VERSION = 'v21.0';

/**
 * The answer to one request, taken from `upcoming`: a status (with Meta's error object, built from
 * `error` or a default for the status, and a Retry-After header when given); a 2xx means "the usual
 * answer", checks included. 'hang' never answers (until close); 'drop' destroys the socket unanswered.
 */
export type Scripted =
  | { status: number; retryAfter?: number | string; error?: { code: number; title?: string; message?: string; subcode?: number } }
  | 'hang'
  | 'drop';

/** A request as it arrived. `body` is the parsed JSON, or the raw text when it is not JSON. */
export interface MetaRequest {
  /** Arrival time (ms since the epoch). */
  at: number;
  method: string;
  /** The request's path as sent, version prefix and URL-encoding included. */
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** A message the fake accepted. */
export interface MetaMessage {
  /** When it was accepted (ms since the epoch): after any delay or hold. */
  at: number;
  path: string;
  channel: 'whatsapp' | 'instagram';
  /** The phone number id from the path (decoded), or 'me' for Instagram. */
  account: string;
  /** WhatsApp's `to`, Instagram's `recipient.id`. */
  to: string;
  body: unknown;
  /** The id the answer carried (wamid.… or mid.…). */
  providerMessageId: string;
  /** Instagram's message tag (`HUMAN_AGENT`), when the message was sent with `messaging_type: MESSAGE_TAG`. */
  tag?: string;
}

/**
 * A fake of Meta's Graph API on loopback (a port the system picks) serving WhatsApp Cloud's
 * `POST /{phone_number_id}/messages` and Instagram's `POST /me/messages` under `url`. A request
 * waits `delayMs`, then for `hold`; then it gets the next `upcoming` answer if any, else the outage
 * status while one lasts, else the usual answer: 401 (code 190) without the right bearer token,
 * 400 (code 100) for a malformed body, otherwise accepted with a fresh message id.
 */
export interface FakeMeta {
  /** The base URL for WHATSAPP_API_URL / INSTAGRAM_API_URL, no trailing slash. */
  readonly url: string;
  /** Every accepted message, in order. */
  readonly received: MetaMessage[];
  /** Every request, refused ones included, in order of arrival. */
  readonly requests: MetaRequest[];
  /** Answers to give next, one per request, before the usual answer. */
  readonly upcoming: Scripted[];
  /** Answers every request with `status` (and Meta's error object) for `forMs` from now. */
  setOutage(status: number, forMs: number, retryAfterSeconds?: number): void;
  /** While set, requests wait for it before answering. */
  hold: Promise<void> | undefined;
  /** How long every answer waits after its request. */
  delayMs: number;
  /** Stops the server, dropping held and hanging requests. */
  close(): Promise<void>;
}

type Channel = MetaMessage['channel'];
type MetaError = NonNullable<Exclude<Scripted, 'hang' | 'drop'>['error']>;

/**
 * `tokens` maps an account (a phone number id, or 'me' for Instagram) to the only bearer token it
 * accepts; when given, an account it does not list is refused too. Without it any bearer token passes.
 */
export async function startFakeMeta(options: { tokens?: Record<string, string> } = {}): Promise<FakeMeta> {
  const open = new Set<ServerResponse>();
  let outage: { status: number; until: number; retryAfter?: number } | undefined;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const path = new URL(req.url ?? '/', 'http://fake-meta').pathname;
      const body = parseBody(raw);
      fake.requests.push({ at: Date.now(), method: req.method ?? '', path, headers: req.headers, body });
      open.add(res);
      if (fake.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, fake.delayMs));
      if (fake.hold) await fake.hold;
      if (res.destroyed) return void open.delete(res);
      const scripted = fake.upcoming.shift();
      if (scripted === 'hang') return;
      open.delete(res);
      if (scripted === 'drop') return void req.socket.destroy();

      const route = routeOf(req.method, path);
      if (scripted && (scripted.status < 200 || scripted.status >= 300)) {
        return answerError(res, route?.channel, scripted.status, scripted.error, scripted.retryAfter);
      }
      if (outage && Date.now() < outage.until) return answerError(res, route?.channel, outage.status, undefined, outage.retryAfter);
      if (!route) return answerError(res, undefined, 404, { code: 100, title: 'Unknown path components' });

      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (token === undefined || (options.tokens && options.tokens[route.account] !== token)) {
        return answerError(res, route.channel, 401, { code: 190, title: 'Invalid OAuth access token' });
      }
      const to = route.channel === 'whatsapp' ? whatsAppRecipient(body) : instagramRecipient(body);
      if (to === undefined) return answerError(res, route.channel, 400, { code: 100, title: 'Invalid parameter' });

      const providerMessageId = `${route.channel === 'whatsapp' ? 'wamid' : 'mid'}.${randomBytes(12).toString('base64url')}`;
      const tag = route.channel === 'instagram' ? (body as { tag?: string }).tag : undefined;
      fake.received.push({ at: Date.now(), path, channel: route.channel, account: route.account, to, body, providerMessageId, ...(tag ? { tag } : {}) });
      const answer =
        route.channel === 'whatsapp'
          ? { messaging_product: 'whatsapp', contacts: [{ input: to, wa_id: to }], messages: [{ id: providerMessageId }] }
          : { recipient_id: to, message_id: providerMessageId };
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const fake: FakeMeta = {
    url: `http://127.0.0.1:${port}/${FAKE_META_VERSION}`,
    received: [],
    requests: [],
    upcoming: [],
    setOutage: (status, forMs, retryAfterSeconds) => {
      outage = { status, until: Date.now() + forMs, retryAfter: retryAfterSeconds };
    },
    hold: undefined,
    delayMs: 0,
    close: async () => {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return fake;
}

function parseBody(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

const ROUTE = new RegExp(`^/${FAKE_META_VERSION.replace('.', '\\.')}/([^/]+)/messages$`);

function routeOf(method: string | undefined, path: string): { channel: Channel; account: string } | undefined {
  const segment = method === 'POST' ? ROUTE.exec(path)?.[1] : undefined;
  if (segment === undefined) return undefined;
  if (segment === 'me') return { channel: 'instagram', account: 'me' };
  try {
    return { channel: 'whatsapp', account: decodeURIComponent(segment) };
  } catch {
    return undefined;
  }
}

/** The `to` of a well-formed text or template message; undefined for anything Meta would refuse. */
function whatsAppRecipient(body: unknown): string | undefined {
  const b = body as { messaging_product?: unknown; to?: unknown; type?: unknown; text?: { body?: unknown }; template?: { name?: unknown; language?: { code?: unknown } } };
  if (typeof b !== 'object' || b === null || b.messaging_product !== 'whatsapp' || !nonEmpty(b.to)) return undefined;
  if (b.type === 'text' && nonEmpty(b.text?.body)) return b.to;
  if (b.type === 'template' && nonEmpty(b.template?.name) && nonEmpty(b.template?.language?.code)) return b.to;
  return undefined;
}

/** Instagram's messaging types, and the message tags it documents for MESSAGE_TAG. */
const INSTAGRAM_MESSAGING_TYPES = new Set(['RESPONSE', 'UPDATE', 'MESSAGE_TAG']);
const INSTAGRAM_TAGS = new Set(['HUMAN_AGENT']);

/**
 * The recipient of a well-formed text message; undefined for anything Meta would refuse: a messaging_type
 * it does not know, a `tag` without MESSAGE_TAG, or MESSAGE_TAG without a known tag.
 */
function instagramRecipient(body: unknown): string | undefined {
  const b = body as { recipient?: { id?: unknown }; message?: { text?: unknown }; messaging_type?: unknown; tag?: unknown };
  if (typeof b !== 'object' || b === null || !nonEmpty(b.recipient?.id) || !nonEmpty(b.message?.text)) return undefined;
  if (b.messaging_type !== undefined && !INSTAGRAM_MESSAGING_TYPES.has(String(b.messaging_type))) return undefined;
  if ((b.messaging_type === 'MESSAGE_TAG') !== (b.tag !== undefined)) return undefined;
  if (b.tag !== undefined && !INSTAGRAM_TAGS.has(String(b.tag))) return undefined;
  return b.recipient.id;
}

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

/** Meta's defaults for a bare status: what the Graph API gives for throttling, outages and the rest. */
function defaultError(status: number): MetaError {
  if (status === 401) return { code: 190, title: 'Invalid OAuth access token' };
  if (status === 429) return { code: 4, title: 'Application request limit reached' };
  if (status >= 500) return { code: 2, title: 'Service temporarily unavailable' };
  return { code: 100, title: 'Invalid parameter' };
}

/** Meta's error object: `message` is "(#code) title" unless scripted, as Meta's is; `error_data` on WhatsApp's route only, as Meta's. */
function answerError(res: ServerResponse, channel: Channel | undefined, status: number, scripted?: MetaError, retryAfter?: number | string): void {
  const error = scripted ?? defaultError(status);
  const title = error.title ?? error.message ?? 'Error';
  const body = {
    error: {
      message: error.message ?? `(#${error.code}) ${title}`,
      type: 'OAuthException',
      code: error.code,
      ...(error.subcode !== undefined && { error_subcode: error.subcode }),
      ...(channel === 'whatsapp' && { error_data: { messaging_product: 'whatsapp', details: title } }),
      fbtrace_id: randomBytes(9).toString('base64url'),
    },
  };
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (retryAfter !== undefined) headers['Retry-After'] = String(retryAfter);
  res.writeHead(status, headers).end(JSON.stringify(body));
}
