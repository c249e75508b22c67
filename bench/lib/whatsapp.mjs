// WhatsApp Cloud API for the bench: a channel account created through the API, Meta's webhook payload for one
// customer's text (shape from Meta's documented examples, as test/utils/meta-payloads.ts builds it) signed the way
// Meta signs (X-Hub-Signature-256), and a minimal fake of the Graph API's send endpoint that records each message
// it accepts. Written for speed (node:http, keep-alive, no per-request logging), not for scripting failures: the
// e2e tests' fake (test/utils/fake-meta.ts) does that.
import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { expectCreated } from './executions-workflow.mjs';

/** The version the fake's base URL ends in, as WHATSAPP_API_URL's default does (https://graph.facebook.com/v21.0). */
export const GRAPH_VERSION = 'v21.0';
const WABA_ID = '102290129340398';
const DISPLAY_PHONE_NUMBER = '15550783881';

/** Credentials of a bench account: a phone number id of digits, a token and an app secret of 16+ printable characters. */
export function benchCredentials() {
  return {
    phone_number_id: String(100_000_000_000_000 + Math.floor(Math.random() * 899_999_999_999_999)),
    access_token: `EAAGbench${randomBytes(24).toString('base64url')}`,
    app_secret: randomBytes(16).toString('hex'),
  };
}

/** POST /v1/channel-accounts (whatsapp, whatsapp_cloud); returns the account (with its id) and the credentials given. */
export async function createWhatsAppAccount(ctx, apiUrl, { name = 'bench whatsapp', credentials = benchCredentials() } = {}) {
  const account = await expectCreated(
    await ctx.api(apiUrl, 'POST', '/v1/channel-accounts', { name, channel: 'whatsapp', provider: 'whatsapp_cloud', credentials }),
    'POST /v1/channel-accounts',
  );
  return { ...account, credentials };
}

/**
 * The JSON text of Meta's webhook payload carrying one text message `{ from, id, text }` from a customer (`from`:
 * their wa_id, digits) to the number `phoneNumberId`: one entry, one `messages` change, the customer in `contacts`.
 */
export function whatsappTextPayload(phoneNumberId, { from, id, text, name = `Customer ${from}`, timestamp = Math.floor(Date.now() / 1000) }) {
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: WABA_ID,
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: DISPLAY_PHONE_NUMBER, phone_number_id: phoneNumberId },
              contacts: [{ profile: { name }, wa_id: from }],
              messages: [{ from, id, timestamp: String(timestamp), type: 'text', text: { body: text } }],
            },
          },
        ],
      },
    ],
  });
}

/** X-Hub-Signature-256 of a raw body: 'sha256=' and the hex HMAC-SHA256 with the app secret. */
export function metaSignature(appSecret, rawBody) {
  return `sha256=${createHmac('sha256', appSecret).update(rawBody).digest('hex')}`;
}

function graphError(res, status, code, title) {
  const body = JSON.stringify({ error: { message: `(#${code}) ${title}`, type: 'OAuthException', code, error_data: { messaging_product: 'whatsapp', details: title }, fbtrace_id: 'bench' } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

/**
 * The fake Graph API on 127.0.0.1: `POST /v21.0/{phone_number_id}/messages` with a well-formed text message (and,
 * when `accessToken` is given, that bearer token) answers 200 as WhatsApp does, with a fresh wamid, and is
 * recorded in `received` ({ t: performance.now(), at: Date.now(), to, text }, in the order accepted; `onMessage`
 * sees each as it is recorded). Anything else is refused as Meta would (404/401/400 with its error object) and
 * counted in `refused`; `connections` counts the TCP connections opened to it. `url` is the base for WHATSAPP_API_URL.
 */
export async function startFakeWhatsApp({ accessToken, onMessage } = {}) {
  const route = new RegExp(`^/${GRAPH_VERSION.replace('.', '\\.')}/(\\d+)/messages$`);
  const idPrefix = `wamid.bench${randomBytes(4).toString('hex')}`;
  let sequence = 0;
  const fake = { url: '', received: [], refused: 0, connections: 0, close: null };

  const server = http.createServer({ keepAlive: true, noDelay: true }, (req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || !route.test(req.url ?? '')) {
        fake.refused += 1;
        return graphError(res, 404, 100, 'Unknown path components');
      }
      if (accessToken !== undefined && req.headers.authorization !== `Bearer ${accessToken}`) {
        fake.refused += 1;
        return graphError(res, 401, 190, 'Invalid OAuth access token');
      }
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = null;
      }
      const to = body?.to;
      const text = body?.text?.body;
      if (body?.messaging_product !== 'whatsapp' || typeof to !== 'string' || to === '' || body.type !== 'text' || typeof text !== 'string' || text === '') {
        fake.refused += 1;
        return graphError(res, 400, 100, 'Invalid parameter');
      }
      const record = { t: performance.now(), at: Date.now(), to, text };
      fake.received.push(record);
      onMessage?.(record);
      const answer = JSON.stringify({ messaging_product: 'whatsapp', contacts: [{ input: to, wa_id: to }], messages: [{ id: `${idPrefix}.${sequence++}` }] });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) }).end(answer);
    });
  });
  // Connections the app opened: with keep-alive, about as many as its sends in flight at once, not one per send.
  server.on('connection', () => (fake.connections += 1));
  // Longer than the app's keep-alive, so that the app's pooled connections are not closed under it.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  fake.url = `http://127.0.0.1:${server.address().port}/${GRAPH_VERSION}`;
  fake.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return fake;
}
