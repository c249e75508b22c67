import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { parseRetryAfter } from '../../webhooks/delivery/outcome.js';
import { ProviderSendError } from './provider-connector.js';

/**
 * The longest Retry-After honoured: a longer one (or a far-off HTTP date) says "not today" more
 * than it plans a retry, and the send should not sit scheduled for days on one answer.
 */
export const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;

/**
 * Graph API error codes that mean "later" whatever the HTTP status (Meta answers most of them with
 * 400): 2 and 131016 (service temporarily unavailable), 4, 17, 32, 613 and 80007 (app, user, page,
 * call-type and WhatsApp Business Account rate limits), 130429 (Cloud API throughput), 131048 (spam
 * rate limit), 131056 (too many messages to the same customer). Code 1 ("unknown") is left out:
 * Meta also gives it to malformed requests, which a retry only repeats.
 */
export const RETRYABLE_GRAPH_CODES: ReadonlySet<number> = new Set([2, 4, 17, 32, 613, 80007, 130429, 131016, 131048, 131056]);

/** Provider titles go into error details and logs: bounded, so a long answer cannot flood them. */
const MAX_TITLE_CHARS = 200;

export interface GraphPost {
  /** How errors name the provider: "WhatsApp", "Instagram". */
  provider: string;
  url: string;
  accessToken: string;
  body: unknown;
  timeoutMs: number;
}

/** A credential the account lacks is a configuration fault: retrying cannot fix it. */
export function credential(credentials: Record<string, string>, field: string, provider: string): string {
  const value = credentials[field];
  if (typeof value !== 'string' || value === '') throw new ProviderSendError(`${provider} credentials have no ${field}`, false);
  return value;
}

/**
 * POSTs JSON to a Graph API endpoint with the bearer token and returns the provider's message id,
 * which `readId` finds in a 2xx answer. Every failure is a ProviderSendError (see its doc for what
 * is retryable); its message is built here from status, code and title, never from the raw body.
 */
export async function postGraph(call: GraphPost, readId: (answer: unknown) => unknown): Promise<string> {
  let res: HttpAnswer;
  try {
    res = await httpPost(
      call.url,
      { Authorization: `Bearer ${call.accessToken}`, 'Content-Type': 'application/json', Accept: 'application/json' },
      JSON.stringify(call.body),
      call.timeoutMs,
    );
  } catch (error) {
    if (error instanceof Error && error.name === 'TimeoutError') {
      throw new ProviderSendError(`${call.provider} did not answer within ${call.timeoutMs} ms`, true, { transport: 'timeout' });
    }
    throw new ProviderSendError(`${call.provider} could not be reached (${networkReason(error)})`, true, { transport: 'network' });
  }
  const text = res.text;

  const answer = parseJson(text);
  if (res.status >= 200 && res.status < 300) {
    const id = readId(answer);
    // Not retried: the message may well have left, and a retry could send it twice.
    if (typeof id !== 'string' || id === '') {
      throw new ProviderSendError(`${call.provider} answered ${res.status} without a message id`, false, { httpStatus: res.status });
    }
    return id;
  }

  const error = graphError(answer, call.accessToken);
  const retryable = res.status === 408 || res.status === 429 || res.status >= 500 || (error.code !== undefined && RETRYABLE_GRAPH_CODES.has(error.code));
  const header = res.headers['retry-after'];
  const retryAfter = retryable ? parseRetryAfter(Array.isArray(header) ? header[0] : header) : undefined;
  const said = error.code !== undefined ? ` (${error.code}${error.title ? `: ${error.title}` : ''})` : '';
  throw new ProviderSendError(`${call.provider} answered ${res.status}${said}`, retryable, {
    httpStatus: res.status,
    ...(error.code !== undefined && { code: String(error.code) }),
    ...(error.title && { title: error.title }),
    ...(retryAfter !== undefined && { retryAfterMs: Math.min(retryAfter, MAX_RETRY_AFTER_MS) }),
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The code and a short title from Meta's `{error: {code, message, title?}}`. The title is `title`
 * when present (webhook errors carry it), else `message` without Meta's "(#code) " prefix; the token
 * is cut out in case an answer ever echoes it.
 */
function graphError(answer: unknown, accessToken: string): { code?: number; title?: string } {
  const error = (answer as { error?: unknown } | undefined)?.error;
  if (typeof error !== 'object' || error === null) return {};
  const { code, title, message } = error as { code?: unknown; title?: unknown; message?: unknown };
  const text = typeof title === 'string' && title.trim() !== '' ? title : typeof message === 'string' ? message.replace(/^\(#\d+\)\s*/, '') : '';
  const safe = (accessToken === '' ? text : text.split(accessToken).join('[redacted]')).trim().slice(0, MAX_TITLE_CHARS);
  return { ...(Number.isInteger(code) && { code: code as number }), ...(safe !== '' && { title: safe }) };
}

/** The system's code of a network fault (ECONNREFUSED, ECONNRESET…), never its message. */
function networkReason(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : 'network error';
}

interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/**
 * One keep-alive agent per scheme and process: sends to the provider reuse their connections. node:http
 * rather than fetch: a send is one small JSON POST, and fetch's streams cost the sender several times
 * the CPU of the request itself.
 */
const AGENTS = { 'http:': new http.Agent({ keepAlive: true, maxSockets: 256 }), 'https:': new https.Agent({ keepAlive: true, maxSockets: 256 }) };
/** Meta's answers are small; more than this is read no further. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * POSTs `body` and reads the answer within `timeoutMs` (a TimeoutError past it). Redirects are not
 * followed: a redirect would carry the token elsewhere, and Meta's API never redirects a send.
 */
function httpPost(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | null, answer?: HttpAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(answer as HttpAnswer);
    };
    let target: URL;
    try {
      target = new URL(url);
    } catch (error) {
      finish(error as Error);
      return;
    }
    const transport = target.protocol === 'https:' ? https : target.protocol === 'http:' ? http : undefined;
    if (!transport) {
      finish(Object.assign(new Error(`unsupported scheme ${target.protocol}`), { code: 'ERR_INVALID_PROTOCOL' }));
      return;
    }
    const req = transport.request(
      target,
      { method: 'POST', headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) }, agent: AGENTS[target.protocol as 'http:' | 'https:'] },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= MAX_ANSWER_BYTES) chunks.push(chunk);
        });
        res.on('end', () => finish(null, { status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (error) => finish(error));
        res.on('aborted', () => finish(Object.assign(new Error('the answer was cut short'), { code: 'ECONNRESET' })));
      },
    );
    const timer = setTimeout(() => {
      finish(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { name: 'TimeoutError' }));
      req.destroy();
    }, timeoutMs);
    req.on('error', (error) => finish(error));
    req.end(body);
  });
}
