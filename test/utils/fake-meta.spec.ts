import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeMeta, type FakeMeta } from './fake-meta.js';
import { metaSignature } from './meta-signing.js';

describe('startFakeMeta', () => {
  let meta: FakeMeta;
  beforeEach(async () => {
    meta = await startFakeMeta();
  });
  afterEach(() => meta.close());

  const post = async (path: string, body: string, token: string | null = 'any-token') => {
    const res = await fetch(`${meta.url}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(token !== null && { Authorization: `Bearer ${token}` }) },
      body,
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as { error?: Record<string, unknown> } & Record<string, unknown> };
  };
  const text = { messaging_product: 'whatsapp', to: '15551234567', type: 'text', text: { body: 'hi' } };

  it('answers an accepted WhatsApp message as Meta does', async () => {
    const answer = await post('/123/messages', JSON.stringify(text));
    expect(answer.status).toBe(200);
    const id = meta.received[0]!.providerMessageId;
    expect(answer.body).toEqual({ messaging_product: 'whatsapp', contacts: [{ input: '15551234567', wa_id: '15551234567' }], messages: [{ id }] });
  });

  it.each([
    ['not JSON', '{"messaging_product":'],
    ['no messaging_product', JSON.stringify({ ...text, messaging_product: undefined })],
    ['no to', JSON.stringify({ ...text, to: undefined })],
    ['an unknown type', JSON.stringify({ ...text, type: 'hologram' })],
    ['a template without a language', JSON.stringify({ ...text, type: 'template', template: { name: 'x' } })],
  ])('refuses a WhatsApp body with %s (400, code 100)', async (_, body) => {
    const answer = await post('/123/messages', body);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({
      message: '(#100) Invalid parameter',
      type: 'OAuthException',
      code: 100,
      error_data: { messaging_product: 'whatsapp', details: 'Invalid parameter' },
    });
    expect(answer.body.error!.fbtrace_id).toEqual(expect.any(String));
    expect(meta.received).toHaveLength(0);
    expect(meta.requests).toHaveLength(1);
  });

  it('refuses an Instagram body without a recipient', async () => {
    const answer = await post('/me/messages', JSON.stringify({ message: { text: 'hi' } }));
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: 100 });
    expect(answer.body.error!.error_data).toBeUndefined();
  });

  it('refuses a request without a bearer token, and a token other than the account’s', async () => {
    expect((await post('/123/messages', JSON.stringify(text), null)).status).toBe(401);
    await meta.close();
    meta = await startFakeMeta({ tokens: { '123': 'right' } });
    const wrong = await post('/123/messages', JSON.stringify(text), 'wrong');
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toMatchObject({ code: 190, type: 'OAuthException', message: '(#190) Invalid OAuth access token' });
    expect((await post('/456/messages', JSON.stringify(text), 'right')).status).toBe(401);
    expect((await post('/123/messages', JSON.stringify(text), 'right')).status).toBe(200);
  });

  it('answers 404 off its two routes', async () => {
    expect((await post('/123/media', JSON.stringify(text))).status).toBe(404);
  });

  it('answers with the outage status while it lasts, then as usual', async () => {
    meta.setOutage(503, 150, 4);
    const during = await post('/123/messages', JSON.stringify(text));
    expect(during.status).toBe(503);
    expect(during.headers.get('retry-after')).toBe('4');
    expect(during.body.error).toMatchObject({ code: 2 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await post('/123/messages', JSON.stringify(text))).status).toBe(200);
  });

  it('gives a scripted 2xx the usual answer, checks included', async () => {
    meta.upcoming.push({ status: 200 });
    expect((await post('/123/messages', '{}')).status).toBe(400);
  });

  it('holds answers until `hold` settles, and delays them by delayMs', async () => {
    let release!: () => void;
    meta.hold = new Promise((resolve) => (release = resolve));
    let answered = false;
    const pending = post('/123/messages', JSON.stringify(text)).then((answer) => ((answered = true), answer));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(meta.requests).toHaveLength(1);
    expect(answered).toBe(false);
    release();
    expect((await pending).status).toBe(200);

    meta.hold = undefined;
    meta.delayMs = 150;
    const started = performance.now();
    await post('/123/messages', JSON.stringify(text));
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });
});

describe('metaSignature', () => {
  it('is sha256= and the hex HMAC-SHA256 of the raw body (values from openssl dgst -sha256 -hmac)', () => {
    expect(metaSignature('secret', 'hello')).toBe('sha256=88aab3ede8d3adf94d26ab90d3bafd4a2083070c3bcce9c014ee04a443847c0b');
    expect(metaSignature('app-secret-1', Buffer.from('{"object":"whatsapp_business_account","entry":[]}'))).toBe(
      'sha256=0ca28c0f1996234eb6829e59ad3c11a18161f6eb043943d601e420c312432cdf',
    );
  });
});
