import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';

type Answer = { status: number; headers: Record<string, string> };

/** Every kind of answer a /v1 client meets: success, 401, 404, 415, 429, and the probes and pages around them. */
async function answers(t: TestApp, org: TestOrganization): Promise<Record<string, Answer>> {
  const out: Record<string, Answer> = {};
  out.ok = await t.http.get('/v1/me').set(org.auth());
  out.unknownRoute = await t.http.get('/v1/no-such-route').set(org.auth());
  out.unsupportedType = await t.http.post('/v1/workflows').set({ ...org.auth(), 'Content-Type': 'text/plain' }).send('x');
  for (let i = 0; i < 3; i++) out[`unauthorized${i}`] = await t.http.get('/v1/me').set({ Authorization: `Bearer wfk_guess_${i}` });
  out.tooMany = await t.http.get('/v1/me').set({ Authorization: 'Bearer wfk_guess_again' });
  out.health = await t.http.get('/health/live');
  out.openapi = await t.http.get('/openapi.json');
  return out;
}

describe('hardening headers', () => {
  let https: TestApp;
  let http: TestApp;
  let org: TestOrganization;
  let clientId: string;

  beforeAll(async () => {
    const own = { APP_ROLE: 'api', RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '2' };
    https = await startTestApp({ ...own, PUBLIC_BASE_URL: 'https://api.example.test', REDIS_KEY_PREFIX: `${inject('redisKeyPrefix')}:sh${randomBytes(3).toString('hex')}` });
    http = await startTestApp({ ...own, PUBLIC_BASE_URL: 'http://127.0.0.1:3000', REDIS_KEY_PREFIX: `${inject('redisKeyPrefix')}:sh${randomBytes(3).toString('hex')}` });
    org = await createOrganization(https);
    // Before any test spends the address's 401 allowance (after which every /v1 request from it is 429).
    const registered = await https.http.post('/v1/oauth/clients').set(org.auth()).send({ name: 'page', redirect_uris: ['http://127.0.0.1:7/cb'], scopes: ['workflows:read'] });
    expect(registered.status).toBe(201);
    clientId = registered.body.data.client_id as string;
  });

  afterAll(async () => {
    await Promise.all([https?.close(), http?.close()]);
  });

  it('every answer carries X-Content-Type-Options: nosniff, and HSTS when PUBLIC_BASE_URL is https', async () => {
    const got = await answers(https, org);
    expect(Object.fromEntries(Object.entries(got).map(([k, r]) => [k, r.status]))).toMatchObject({ ok: 200, unknownRoute: 404, unsupportedType: 415, unauthorized0: 401, tooMany: 429, health: 200 });
    for (const [kind, res] of Object.entries(got)) {
      expect(res.headers['x-content-type-options'], kind).toBe('nosniff');
      expect(res.headers['strict-transport-security'], kind).toMatch(/^max-age=\d{7,}; includeSubDomains$/);
    }
  });

  it('never sends HSTS when PUBLIC_BASE_URL is http; nosniff still', async () => {
    for (const [kind, res] of Object.entries(await answers(http, org))) {
      expect(res.headers['x-content-type-options'], kind).toBe('nosniff');
      expect(res.headers['strict-transport-security'], kind).toBeUndefined();
    }
  });

  it('the API explorer (/docs) may not be framed', async () => {
    const res = await https.http.get('/docs/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('the OAuth consent page keeps its CSP, frame denial and nosniff', async () => {
    const params = new URLSearchParams({
      client_id: clientId,
      redirect_uri: 'http://127.0.0.1:7/cb',
      response_type: 'code',
      state: 's',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    const res = await https.http.get(`/oauth/authorize?${params}`);
    expect(res.status, res.text).toBe(200);
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['content-security-policy']).toMatch(/default-src 'none'.*frame-ancestors 'none'/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['strict-transport-security']).toMatch(/^max-age=/);
  });
});
