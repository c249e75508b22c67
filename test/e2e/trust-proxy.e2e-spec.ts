import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';

/*
 * TRUST_PROXY and the per-address limits, with the limit on 401 answers (3 per address per minute):
 * every request of this file comes from 127.0.0.1, and claims another address in X-Forwarded-For.
 * Each app has a Redis prefix of its own, so no other test's counts meet these.
 */
const prefix = () => `${inject('redisKeyPrefix')}:tp${randomBytes(4).toString('hex')}`;
const address = () => `198.51.100.${1 + (randomBytes(1)[0] as number) % 250}`;

async function exhaust(t: TestApp, forwardedFor: string): Promise<number[]> {
  const statuses = [];
  for (let i = 0; i < 4; i++) {
    statuses.push((await t.http.get('/v1/me').set({ Authorization: `Bearer wfk_guess_${i}`, 'X-Forwarded-For': forwardedFor })).status);
  }
  return statuses;
}

describe('TRUST_PROXY', () => {
  let behindProxy: TestApp;
  let direct: TestApp;
  let org: TestOrganization;

  beforeAll(async () => {
    const limits = { APP_ROLE: 'api', RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '3' };
    behindProxy = await startTestApp({ ...limits, REDIS_KEY_PREFIX: prefix(), TRUST_PROXY: 'loopback' });
    direct = await startTestApp({ ...limits, REDIS_KEY_PREFIX: prefix() });
    org = await createOrganization(direct);
  });

  afterAll(async () => {
    await Promise.all([behindProxy?.close(), direct?.close()]);
  });

  it('behind a trusted proxy (loopback): clients are told apart by X-Forwarded-For; one locked out does not lock out another', async () => {
    const [first, second] = [address(), `2001:db8::${randomBytes(2).toString('hex')}`];
    expect(await exhaust(behindProxy, first)).toEqual([401, 401, 401, 429]);
    // The first client, even with a valid key, waits out the minute.
    expect((await behindProxy.http.get('/v1/me').set({ ...org.auth(), 'X-Forwarded-For': first })).status).toBe(429);
    // The second client, through the same proxy (the same socket address), is not affected.
    expect((await behindProxy.http.get('/v1/me').set({ ...org.auth(), 'X-Forwarded-For': second })).status).toBe(200);
    expect((await behindProxy.http.get('/v1/me').set({ Authorization: 'Bearer wfk_guess', 'X-Forwarded-For': second })).status).toBe(401);
    // The address is the proxy's client: the right-most untrusted entry, not whatever the client put first.
    expect((await behindProxy.http.get('/v1/me').set({ ...org.auth(), 'X-Forwarded-For': `${address()}, ${first}` })).status).toBe(429);
  });

  it('without TRUST_PROXY, X-Forwarded-For is ignored: a client cannot dodge the limit by forging it', async () => {
    expect(await exhaust(direct, address())).toEqual([401, 401, 401, 429]);
    const res = await direct.http.get('/v1/me').set({ ...org.auth(), 'X-Forwarded-For': address() });
    expect(res.status).toBe(429);
  });
});
