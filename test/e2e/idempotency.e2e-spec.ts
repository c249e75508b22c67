import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { Principal } from '../../src/auth/access.js';
import { idempotencyScope, requestFingerprint } from '../../src/idempotency/idempotency-key.js';
import { IdempotencyStore, LOCK_TTL_SECONDS, RESPONSE_TTL_SECONDS } from '../../src/idempotency/idempotency.store.js';
import { RedisService } from '../../src/redis/redis.service.js';
import { TriggerFiringService } from '../../src/triggers/trigger-firing.service.js';
import { createTrigger } from '../factories/triggers.js';
import { createWorkflow } from '../factories/workflows.js';
import { createOrganization, RATE_LIMITS_OUT_OF_REACH, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';

/**
 * Idempotency-Key on POST under /v1 (docs/API.md, "Idempotency keys"): a retry after a lost answer replays it instead of
 * starting a workflow twice. Two API instances share the Redis prefix, as two processes would.
 */
describe('Idempotency-Key', () => {
  let t: TestApp;
  let other: TestApp;
  let org: TestOrganization;
  let db: DataSource;
  let workflowId: string;
  let apiTriggerId: string;
  let seq = 0;

  const overrides = { ...RATE_LIMITS_OUT_OF_REACH, APP_ROLE: 'api', REDIS_KEY_PREFIX: `${inject('redisKeyPrefix')}:idem` };

  beforeAll(async () => {
    t = await startTestApp(overrides);
    other = await startTestApp(overrides);
    org = await createOrganization(t);
    db = t.app.get(DataSource);
    workflowId = (await createWorkflow(t, org, { configuration: { nodes: [{ id: 'hi', type: 'message', content: 'Hello' }] } })).id;
    expect((await t.http.post(`/v1/workflows/${workflowId}/activate`).set(org.auth())).status).toBe(200);
    const message = await createTrigger(t, org, workflowId, 'message', { keywords: ['idem'] });
    const api = await createTrigger(t, org, workflowId, 'api', { rate_limit: 1000 });
    apiTriggerId = api.id;
    for (const id of [message.id, api.id]) expect((await t.http.post(`/v1/triggers/${id}/activate`).set(org.auth())).status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await other?.close();
    await t?.close();
  });

  const newKey = () => `key-${Date.now()}-${++seq}`;
  const customer = () => `+1777${String(++seq).padStart(7, '0')}`;
  const message = (app: TestApp, key: string | undefined, body: Record<string, unknown>, level: 'read_write' | 'full_access' = 'read_write') => {
    const req = app.http.post('/v1/messages').set(org.auth(level));
    if (key !== undefined) req.set('Idempotency-Key', key);
    return req.send(body);
  };
  const fire = (app: TestApp, key: string, body: Record<string, unknown>, triggerId = apiTriggerId) =>
    app.http.post(`/v1/triggers/${triggerId}/fire`).set(org.auth('read_write')).set('Idempotency-Key', key).send(body);
  const executionsOf = async (customerRef: string): Promise<number> =>
    (await db.query('SELECT count(*)::int AS n FROM workflow_executions WHERE organization_id = $1 AND customer_ref = $2', [org.id, customerRef]))[0].n;
  const firings = async (triggerId: string): Promise<number> =>
    (await db.query('SELECT count(*)::int AS n FROM trigger_executions WHERE trigger_id = $1', [triggerId]))[0].n;

  /** The principal of a level's key, as the guard scopes keys by it. */
  async function principalOf(level: 'read_write' | 'full_access'): Promise<Principal> {
    const me = (await t.http.get('/v1/me').set(org.auth(level)).expect(200)).body.data as { credential_id: string; organization_id: string; name: string };
    return { credentialType: 'api_key', credentialId: me.credential_id, organizationId: me.organization_id, name: me.name };
  }

  it('a repeated POST /v1/messages is answered from the first answer and starts ONE execution', async () => {
    const key = newKey();
    const body = { channel: 'whatsapp', customer_id: customer(), message: 'idem please' };
    const first = await message(t, key, body);
    expect(first.status).toBe(202);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(first.body.data.executions).toHaveLength(1);

    const again = await message(t, key, { message: body.message, customer_id: body.customer_id, channel: body.channel });
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(again.text).toBe(first.text);
    expect(await executionsOf(body.customer_id)).toBe(1);
  });

  it('a repeated fire on ANOTHER instance sharing Redis is replayed: one trigger execution', async () => {
    const key = newKey();
    const before = await firings(apiTriggerId);
    const body = { customer_id: customer(), channel: 'whatsapp', message: 'go' };
    const first = await fire(t, key, body);
    expect(first.status).toBe(202);
    const again = await fire(other, key, body);
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await firings(apiTriggerId)).toBe(before + 1);
    expect(await executionsOf(body.customer_id)).toBe(1);
  });

  it('stores the answer for 24 h (the TTL in Redis), scoped by organization and credential', async () => {
    const key = newKey();
    await message(t, key, { channel: 'whatsapp', customer_id: customer(), message: 'idem' }).expect(202);
    const store = t.app.get(IdempotencyStore);
    const redisKey = store.key(idempotencyScope(await principalOf('read_write'), key));
    const ttl = await t.app.get(RedisService).client.ttl(redisKey);
    expect(ttl).toBeGreaterThan(RESPONSE_TTL_SECONDS - 120);
    expect(ttl).toBeLessThanOrEqual(RESPONSE_TTL_SECONDS);
  });

  it('the same key with another body, or on another path, is 422 IDEMPOTENCY_KEY_REUSED and runs nothing', async () => {
    const key = newKey();
    const who = customer();
    await message(t, key, { channel: 'whatsapp', customer_id: who, message: 'idem' }).expect(202);
    const other = customer();
    const changed = await message(t, key, { channel: 'whatsapp', customer_id: other, message: 'idem' });
    expect(changed.status).toBe(422);
    expect(changed.body.error).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', field: 'Idempotency-Key' });
    const elsewhere = await fire(t, key, { customer_id: other, channel: 'whatsapp', message: 'idem' });
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await executionsOf(other)).toBe(0);
  });

  it('while the first request holds the key, a repeat is 409 IDEMPOTENCY_KEY_IN_USE with Retry-After; once released it runs', async () => {
    const key = newKey();
    const body = { channel: 'whatsapp', customer_id: customer(), message: 'idem' };
    // The first request, in flight: its claim, made as the guard makes it.
    const store = t.app.get(IdempotencyStore);
    const redisKey = store.key(idempotencyScope(await principalOf('read_write'), key));
    const claim = await store.claim(redisKey, requestFingerprint({ method: 'POST', path: '/v1/messages', query: {}, body }));
    expect(claim.kind).toBe('claimed');
    // A crashed request's claim expires by itself.
    const lockTtl = await t.app.get(RedisService).client.ttl(redisKey);
    expect(lockTtl).toBeGreaterThan(0);
    expect(lockTtl).toBeLessThanOrEqual(LOCK_TTL_SECONDS);

    const repeat = await message(other, key, body);
    expect(repeat.status).toBe(409);
    expect(repeat.body.error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(repeat.headers['retry-after']).toBe('1');
    expect(await executionsOf(body.customer_id)).toBe(0);

    if (claim.kind === 'claimed') await store.release(redisKey, claim.token);
    expect((await message(t, key, body)).status).toBe(202);
    expect(await executionsOf(body.customer_id)).toBe(1);
  });

  it('identical requests sent at once: exactly one runs; the others are 409 or its replay', async () => {
    const key = newKey();
    const body = { customer_id: customer(), channel: 'whatsapp', message: 'burst' };
    const answers = await Promise.all([t, other, t, other, t, other].map((app) => fire(app, key, body)));
    const original = answers.filter((a) => a.status === 202 && a.headers['idempotent-replayed'] === undefined);
    expect(original).toHaveLength(1);
    for (const a of answers) {
      if (a.status === 409) expect(a.body.error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
      else expect(a.status === 202 && a.text === original[0].text).toBe(true);
    }
    expect(await executionsOf(body.customer_id)).toBe(1);
  });

  it('keys are per credential: another API key with the same key and body runs its own request', async () => {
    const key = newKey();
    const body = { channel: 'whatsapp', customer_id: customer(), message: 'idem' };
    const mine = await message(t, key, body, 'read_write');
    const theirs = await message(t, key, body, 'full_access');
    expect([mine.status, theirs.status]).toEqual([202, 202]);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    // Received twice (what the second message then does for the customer is the engine's business).
    expect(theirs.body.data.message_id).not.toBe(mine.body.data.message_id);
  });

  it('a request refused by validation (400) does not use up the key: corrected, it runs', async () => {
    const key = newKey();
    const body = { channel: 'whatsapp', customer_id: customer(), message: 'idem' };
    const refused = await message(t, key, { channel: body.channel, message: body.message });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('MISSING_REQUIRED_FIELD');
    const corrected = await message(t, key, body);
    expect(corrected.status).toBe(202);
    expect(corrected.headers['idempotent-replayed']).toBeUndefined();
    expect(await executionsOf(body.customer_id)).toBe(1);
  });

  it('a handler\'s error answer (404) is stored and replayed in its envelope', async () => {
    const key = newKey();
    const missing = '00000000-0000-4000-8000-000000000000';
    const first = await fire(t, key, {}, missing);
    expect(first.status).toBe(404);
    expect(first.body.error.code).toBe('TRIGGER_NOT_FOUND');
    const again = await fire(other, key, {}, missing);
    expect(again.status).toBe(404);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
  });

  it('a 5xx is not stored: the retry with the same key runs', async () => {
    const key = newKey();
    const body = { customer_id: customer(), channel: 'whatsapp', message: 'flaky' };
    const firing = vi.spyOn(t.app.get(TriggerFiringService), 'fireApiTrigger').mockRejectedValueOnce(new Error('database went away'));
    try {
      const failed = await fire(t, key, body);
      expect(failed.status).toBe(500);
      expect(failed.body.error.code).toBe('INTERNAL_ERROR');
    } finally {
      firing.mockRestore();
    }
    const retried = await fire(other, key, body);
    expect(retried.status).toBe(202);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(await executionsOf(body.customer_id)).toBe(1);
  });

  it('a malformed key is 400 INVALID_REQUEST with field Idempotency-Key', async () => {
    const res = await message(t, 'k'.repeat(256), { channel: 'whatsapp', customer_id: customer(), message: 'idem' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'Idempotency-Key' });
  });

  it('requests without the header never ask the key store (no Redis round trip)', async () => {
    const claim = vi.spyOn(t.app.get(IdempotencyStore), 'claim');
    try {
      await message(t, undefined, { channel: 'whatsapp', customer_id: customer(), message: 'idem' }).expect(202);
      await t.http.get('/v1/me').set(org.auth()).set('Idempotency-Key', newKey()).expect(200);
      expect(claim).not.toHaveBeenCalled();
      await message(t, newKey(), { channel: 'whatsapp', customer_id: customer(), message: 'idem' }).expect(202);
      expect(claim).toHaveBeenCalledTimes(1);
    } finally {
      claim.mockRestore();
    }
  });

  it('Redis unreachable: a request with a key is 503 SERVICE_UNAVAILABLE with Retry-After; one without is served', async () => {
    const cut = await startTestApp(overrides);
    try {
      cut.app.get(RedisService).client.disconnect();
      const keyed = await cut.http.post('/v1/messages').set(org.auth('read_write')).set('Idempotency-Key', newKey()).send({ channel: 'whatsapp', customer_id: customer(), message: 'idem' });
      expect(keyed.status).toBe(503);
      expect(keyed.body.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(Number(keyed.headers['retry-after'])).toBeGreaterThan(0);
      const plain = await cut.http.post('/v1/messages').set(org.auth('read_write')).send({ channel: 'whatsapp', customer_id: customer(), message: 'idem' });
      expect(plain.status).toBe(202);
    } finally {
      await cut.close();
    }
  });
});
