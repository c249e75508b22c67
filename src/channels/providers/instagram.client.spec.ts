import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeMeta, type FakeMeta } from '../../../test/utils/fake-meta.js';
import { sendFailure } from '../../../test/utils/provider-send-failure.js';
import { sendInstagram } from './instagram.client.js';
import type { SendRequest } from './provider-connector.js';

const TOKEN = 'IGAA-instagram-secret-token-0987654321';
const IGSID = '7012345678901234';

/** The send's error, checked to be a ProviderSendError that does not carry the token anywhere. */
const failure = (sending: Promise<unknown>) => sendFailure(sending, TOKEN);

describe('sendInstagram', () => {
  let meta: FakeMeta;
  beforeEach(async () => {
    meta = await startFakeMeta({ tokens: { me: TOKEN } });
  });
  afterEach(() => meta.close());

  const request = (overrides: Partial<SendRequest> = {}): SendRequest => ({
    baseUrl: meta.url,
    credentials: { account_id: '17841400000000000', access_token: TOKEN, app_secret: 'unused' },
    to: IGSID,
    content: { kind: 'text', text: 'Thanks for your message!' },
    timeoutMs: 2000,
    ...overrides,
  });

  it('sends a text to /me/messages with the bearer token and returns the message id', async () => {
    const accepted = await sendInstagram(request());
    expect(meta.received).toHaveLength(1);
    const [message] = meta.received;
    expect(accepted).toEqual({ providerMessageId: message!.providerMessageId });
    expect(accepted.providerMessageId).toMatch(/^mid\./);
    expect(message).toMatchObject({ path: '/v21.0/me/messages', channel: 'instagram', account: 'me', to: IGSID });
    expect(message!.body).toEqual({ recipient: { id: IGSID }, message: { text: 'Thanks for your message!' } });
    expect(meta.requests[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it("sends a person's message with the HUMAN_AGENT tag (messaging_type MESSAGE_TAG)", async () => {
    await sendInstagram(request({ content: { kind: 'text', text: 'Anna here, from support.', humanAgent: true } }));
    expect(meta.received[0]!.body).toEqual({ recipient: { id: IGSID }, messaging_type: 'MESSAGE_TAG', tag: 'HUMAN_AGENT', message: { text: 'Anna here, from support.' } });
    expect(meta.received[0]!.tag).toBe('HUMAN_AGENT');
  });

  it('refuses a template without asking Instagram', async () => {
    const error = await failure(sendInstagram(request({ content: { kind: 'template', template: { name: 'hello_world', language: 'en_US' } } })));
    expect(error.retryable).toBe(false);
    expect(error.message).toBe('Instagram has no message templates');
    expect(meta.requests).toHaveLength(0);
  });

  it('treats 429 as retryable and reads Retry-After in seconds', async () => {
    meta.upcoming.push({ status: 429, retryAfter: 2 });
    const error = await failure(sendInstagram(request()));
    expect(error.retryable).toBe(true);
    expect(error.message).toBe('Instagram answered 429 (4: Application request limit reached)');
    expect(error.details).toEqual({ httpStatus: 429, code: '4', title: 'Application request limit reached', retryAfterMs: 2000 });
  });

  it('reads Retry-After as an HTTP date', async () => {
    meta.upcoming.push({ status: 503, retryAfter: new Date(Date.now() + 10_000).toUTCString() });
    const error = await failure(sendInstagram(request()));
    expect(error.retryable).toBe(true);
    expect(error.details.retryAfterMs).toBeGreaterThan(8000);
    expect(error.details.retryAfterMs).toBeLessThanOrEqual(10_000);
  });

  it('treats 500 and 503 as retryable', async () => {
    meta.setOutage(500, 60_000);
    const first = await failure(sendInstagram(request()));
    expect(first.retryable).toBe(true);
    expect(first.details).toEqual({ httpStatus: 500, code: '2', title: 'Service temporarily unavailable' });
    meta.setOutage(503, 60_000, 30);
    const second = await failure(sendInstagram(request()));
    expect(second.retryable).toBe(true);
    expect(second.details).toEqual({ httpStatus: 503, code: '2', title: 'Service temporarily unavailable', retryAfterMs: 30_000 });
  });

  it('treats a send outside the messaging window as permanent, with its code and title', async () => {
    meta.upcoming.push({ status: 400, error: { code: 10, subcode: 2534022, message: '(#10) This message is sent outside of allowed window.' } });
    const error = await failure(sendInstagram(request()));
    expect(error.retryable).toBe(false);
    expect(error.message).toBe('Instagram answered 400 (10: This message is sent outside of allowed window.)');
    expect(error.details).toEqual({ httpStatus: 400, code: '10', title: 'This message is sent outside of allowed window.' });
  });

  it('treats a throttling code in a 400 as retryable', async () => {
    meta.upcoming.push({ status: 400, error: { code: 613, title: 'Calls to this api have exceeded the rate limit.' } });
    const error = await failure(sendInstagram(request()));
    expect(error.retryable).toBe(true);
    expect(error.details).toEqual({ httpStatus: 400, code: '613', title: 'Calls to this api have exceeded the rate limit.' });
  });

  it('treats a wrong access token (401, code 190) as permanent', async () => {
    const error = await failure(sendInstagram(request({ credentials: { access_token: 'IGAA-expired' } })));
    expect(error.retryable).toBe(false);
    expect(error.message).toBe('Instagram answered 401 (190: Invalid OAuth access token)');
    expect(error.details).toEqual({ httpStatus: 401, code: '190', title: 'Invalid OAuth access token' });
    expect(meta.received).toHaveLength(0);
  });

  it('treats a hanging answer as retryable once timeoutMs has passed', async () => {
    meta.upcoming.push('hang');
    const started = performance.now();
    const error = await failure(sendInstagram(request({ timeoutMs: 200 })));
    const elapsed = performance.now() - started;
    expect(error.retryable).toBe(true);
    expect(error.message).toBe('Instagram did not answer within 200 ms');
    expect(elapsed).toBeGreaterThanOrEqual(190);
    expect(elapsed).toBeLessThan(1000);
  });

  it('treats a dropped connection as retryable', async () => {
    meta.upcoming.push('drop');
    const error = await failure(sendInstagram(request()));
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/^Instagram could not be reached \(\w+\)$/);
  });

  it('refuses to send without an access token', async () => {
    const error = await failure(sendInstagram(request({ credentials: { account_id: '17841400000000000' } })));
    expect(error.retryable).toBe(false);
    expect(error.message).toBe('Instagram credentials have no access_token');
    expect(meta.requests).toHaveLength(0);
  });
});
