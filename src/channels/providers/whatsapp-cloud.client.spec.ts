import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeMeta, type FakeMeta } from '../../../test/utils/fake-meta.js';
import { sendFailure } from '../../../test/utils/provider-send-failure.js';
import { MAX_RETRY_AFTER_MS } from './graph-api.js';
import type { OutboundContent, SendRequest } from './provider-connector.js';
import { sendWhatsAppCloud } from './whatsapp-cloud.client.js';

const TOKEN = 'EAAG-whatsapp-secret-token-1234567890';
const PHONE_NUMBER_ID = '106540352242922';

/** The send's error, checked to be a ProviderSendError that does not carry the token anywhere. */
const failure = (sending: Promise<unknown>) => sendFailure(sending, TOKEN);

describe('sendWhatsAppCloud', () => {
  let meta: FakeMeta;
  beforeEach(async () => {
    meta = await startFakeMeta({ tokens: { [PHONE_NUMBER_ID]: TOKEN } });
  });
  afterEach(() => meta.close());

  const request = (overrides: Partial<SendRequest> = {}): SendRequest => ({
    baseUrl: meta.url,
    credentials: { phone_number_id: PHONE_NUMBER_ID, access_token: TOKEN, app_secret: 'unused' },
    to: '15551234567',
    content: { kind: 'text', text: 'Your order has shipped' },
    timeoutMs: 2000,
    ...overrides,
  });

  it('sends a text with the bearer token and returns the wamid', async () => {
    const accepted = await sendWhatsAppCloud(request());
    expect(meta.received).toHaveLength(1);
    const [message] = meta.received;
    expect(accepted).toEqual({ providerMessageId: message!.providerMessageId });
    expect(accepted.providerMessageId).toMatch(/^wamid\./);
    expect(message).toMatchObject({ path: `/v21.0/${PHONE_NUMBER_ID}/messages`, channel: 'whatsapp', account: PHONE_NUMBER_ID, to: '15551234567' });
    expect(message!.body).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '15551234567',
      type: 'text',
      text: { body: 'Your order has shipped' },
    });
    expect(meta.requests[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(meta.requests[0]!.headers['content-type']).toBe('application/json');
  });

  it('sends a template with its language as {code} and its components', async () => {
    const components = [{ type: 'body', parameters: [{ type: 'text', text: 'A-1042' }] }];
    const content: OutboundContent = { kind: 'template', template: { name: 'order_update', language: 'pt_BR', components } };
    const accepted = await sendWhatsAppCloud(request({ content }));
    expect(meta.received[0]!.body).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '15551234567',
      type: 'template',
      template: { name: 'order_update', language: { code: 'pt_BR' }, components },
    });
    expect(accepted.providerMessageId).toBe(meta.received[0]!.providerMessageId);
  });

  it('leaves components out of a template that has none', async () => {
    await sendWhatsAppCloud(request({ content: { kind: 'template', template: { name: 'hello_world', language: 'en_US' } } }));
    expect((meta.received[0]!.body as { template: unknown }).template).toEqual({ name: 'hello_world', language: { code: 'en_US' } });
  });

  it('URL-encodes the phone number id into the path', async () => {
    await meta.close();
    meta = await startFakeMeta({ tokens: { '12/34?x': TOKEN } });
    await sendWhatsAppCloud(request({ credentials: { phone_number_id: '12/34?x', access_token: TOKEN } }));
    expect(meta.requests[0]!.path).toBe('/v21.0/12%2F34%3Fx/messages');
    expect(meta.received[0]!.account).toBe('12/34?x');
  });

  it('treats 429 as retryable and reads Retry-After in seconds', async () => {
    meta.upcoming.push({ status: 429, retryAfter: 2 });
    const error = await failure(sendWhatsAppCloud(request()));
    expect(error.retryable).toBe(true);
    expect(error.message).toBe('WhatsApp answered 429 (4: Application request limit reached)');
    expect(error.details).toEqual({ httpStatus: 429, code: '4', title: 'Application request limit reached', retryAfterMs: 2000 });
    expect(meta.received).toHaveLength(0);
  });

  it('reads Retry-After as an HTTP date', async () => {
    meta.upcoming.push({ status: 503, retryAfter: new Date(Date.now() + 5000).toUTCString() });
    const error = await failure(sendWhatsAppCloud(request()));
    expect(error.retryable).toBe(true);
    // An HTTP date has whole seconds: 4–5 s ahead when made, a little less when read.
    expect(error.details.retryAfterMs).toBeGreaterThan(3000);
    expect(error.details.retryAfterMs).toBeLessThanOrEqual(5000);
  });

  it('caps Retry-After at an hour', async () => {
    meta.upcoming.push({ status: 429, retryAfter: 86_400 });
    const error = await failure(sendWhatsAppCloud(request()));
    expect(MAX_RETRY_AFTER_MS).toBe(3_600_000);
    expect(error.details.retryAfterMs).toBe(3_600_000);
  });

  it('treats 500 and 503 as retryable', async () => {
    meta.upcoming.push({ status: 500 }, { status: 503, error: { code: 131016, title: 'Service unavailable' } });
    const first = await failure(sendWhatsAppCloud(request()));
    expect(first.retryable).toBe(true);
    expect(first.details).toEqual({ httpStatus: 500, code: '2', title: 'Service temporarily unavailable' });
    const second = await failure(sendWhatsAppCloud(request()));
    expect(second.retryable).toBe(true);
    expect(second.details).toEqual({ httpStatus: 503, code: '131016', title: 'Service unavailable' });
  });

  it('treats 131047 (outside the 24-hour window) as permanent, with its code and title', async () => {
    meta.upcoming.push({ status: 400, error: { code: 131047, title: 'Re-engagement message' } });
    const error = await failure(sendWhatsAppCloud(request()));
    expect(error.retryable).toBe(false);
    expect(error.message).toBe('WhatsApp answered 400 (131047: Re-engagement message)');
    expect(error.details).toEqual({ httpStatus: 400, code: '131047', title: 'Re-engagement message' });
  });

  it('treats a throttling code in a 400 as retryable', async () => {
    meta.upcoming.push({ status: 400, retryAfter: 7, error: { code: 130429, title: 'Rate limit hit', subcode: 2494055 } });
    const error = await failure(sendWhatsAppCloud(request()));
    expect(error.retryable).toBe(true);
    expect(error.details).toEqual({ httpStatus: 400, code: '130429', title: 'Rate limit hit', retryAfterMs: 7000 });
  });

  it('ignores Retry-After on a permanent refusal', async () => {
    meta.upcoming.push({ status: 400, retryAfter: 7, error: { code: 131026, title: 'Message undeliverable' } });
    const error = await failure(sendWhatsAppCloud(request()));
    expect(error.retryable).toBe(false);
    expect(error.details).toEqual({ httpStatus: 400, code: '131026', title: 'Message undeliverable' });
  });

  it('treats a wrong access token (401, code 190) as permanent', async () => {
    const error = await failure(sendWhatsAppCloud(request({ credentials: { phone_number_id: PHONE_NUMBER_ID, access_token: 'EAAG-revoked' } })));
    expect(error.retryable).toBe(false);
    expect(error.message).toBe('WhatsApp answered 401 (190: Invalid OAuth access token)');
    expect(error.details).toEqual({ httpStatus: 401, code: '190', title: 'Invalid OAuth access token' });
    expect(meta.received).toHaveLength(0);
  });

  it('treats a body Meta refuses (400, code 100) as permanent', async () => {
    const error = await failure(sendWhatsAppCloud(request({ content: { kind: 'text', text: '' } })));
    expect(error.retryable).toBe(false);
    expect(error.details).toEqual({ httpStatus: 400, code: '100', title: 'Invalid parameter' });
  });

  it('cuts the token out of a title that echoes it', async () => {
    meta.upcoming.push({ status: 400, error: { code: 190, message: `Malformed access token ${TOKEN}` } });
    const error = await failure(sendWhatsAppCloud(request()));
    expect(error.details.title).toBe('Malformed access token [redacted]');
    expect(error.message).toBe('WhatsApp answered 400 (190: Malformed access token [redacted])');
  });

  it('treats a hanging answer as retryable once timeoutMs has passed', async () => {
    meta.upcoming.push('hang');
    const started = performance.now();
    const error = await failure(sendWhatsAppCloud(request({ timeoutMs: 200 })));
    const elapsed = performance.now() - started;
    expect(error.retryable).toBe(true);
    expect(error.message).toBe('WhatsApp did not answer within 200 ms');
    expect(error.details).toEqual({ transport: 'timeout' });
    expect(elapsed).toBeGreaterThanOrEqual(190);
    expect(elapsed).toBeLessThan(1000);
  });

  it('treats a dropped connection as retryable', async () => {
    meta.upcoming.push('drop');
    const error = await failure(sendWhatsAppCloud(request()));
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/^WhatsApp could not be reached \(\w+\)$/);
    // No answer, no provider code: only what the metrics class it by.
    expect(error.details).toEqual({ transport: 'network' });
  });

  it('treats a refused connection as retryable', async () => {
    const baseUrl = meta.url;
    await meta.close();
    const error = await failure(sendWhatsAppCloud(request({ baseUrl })));
    expect(error.retryable).toBe(true);
    expect(error.message).toBe('WhatsApp could not be reached (ECONNREFUSED)');
    meta = await startFakeMeta();
  });

  it('refuses to send without a phone number id', async () => {
    const error = await failure(sendWhatsAppCloud(request({ credentials: { access_token: TOKEN } })));
    expect(error.retryable).toBe(false);
    expect(error.message).toBe('WhatsApp credentials have no phone_number_id');
    expect(meta.requests).toHaveLength(0);
  });
});

/** Answers that Meta does not give but a proxy or a broken deployment could: beyond what the fake scripts. */
describe('sendWhatsAppCloud, odd answers', () => {
  async function answering(status: number, headers: Record<string, string>, body: string) {
    const paths: string[] = [];
    const server = createServer((req, res) => {
      paths.push(req.url ?? '');
      req.resume().on('end', () => res.writeHead(status, headers).end(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const send = () =>
      sendWhatsAppCloud({ baseUrl: url, credentials: { phone_number_id: '1', access_token: TOKEN }, to: '15551234567', content: { kind: 'text', text: 'hi' }, timeoutMs: 2000 });
    const close = () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    };
    return { paths, send, close };
  }

  it('treats a 200 without a message id as permanent (the message may have left)', async () => {
    const server = await answering(200, { 'Content-Type': 'application/json' }, '{"messaging_product":"whatsapp","messages":[]}');
    try {
      const error = await failure(server.send());
      expect(error.retryable).toBe(false);
      expect(error.message).toBe('WhatsApp answered 200 without a message id');
      expect(error.details).toEqual({ httpStatus: 200 });
    } finally {
      await server.close();
    }
  });

  it('does not follow a redirect (the token would go along)', async () => {
    const server = await answering(307, { Location: '/elsewhere' }, '');
    try {
      const error = await failure(server.send());
      expect(error.retryable).toBe(false);
      expect(error.message).toBe('WhatsApp answered 307');
      expect(server.paths).toEqual(['/1/messages']);
    } finally {
      await server.close();
    }
  });

  it('treats a 429 as retryable by its status alone (a proxy\'s, without Meta\'s error object)', async () => {
    const server = await answering(429, { 'Content-Type': 'text/plain', 'Retry-After': '3' }, 'slow down');
    try {
      const error = await failure(server.send());
      expect(error.retryable).toBe(true);
      expect(error.message).toBe('WhatsApp answered 429');
      expect(error.details).toEqual({ httpStatus: 429, retryAfterMs: 3000 });
    } finally {
      await server.close();
    }
  });

  it('treats a 502 with a non-JSON body as retryable, without code or title', async () => {
    const server = await answering(502, { 'Content-Type': 'text/html' }, '<html>Bad Gateway</html>');
    try {
      const error = await failure(server.send());
      expect(error.retryable).toBe(true);
      expect(error.message).toBe('WhatsApp answered 502');
      expect(error.details).toEqual({ httpStatus: 502 });
    } finally {
      await server.close();
    }
  });
});
