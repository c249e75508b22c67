import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppConfig } from '../config/app-config.js';
import { RedisService } from '../redis/redis.service.js';
import { IdempotencyStore, LOCK_TTL_SECONDS, RESPONSE_TTL_SECONDS } from './idempotency.store.js';

const config = AppConfig.fromEnv({}, { LOG_LEVEL: 'silent', REDIS_KEY_PREFIX: `was_unit_idem_${randomBytes(4).toString('hex')}` });

let redis: RedisService;
let store: IdempotencyStore;
let seq = 0;
const newKey = () => store.key(['org', 'api_key', 'k', `key-${++seq}`]);
const answer = { status: 202, headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{"data":{}}' };

beforeAll(() => {
  redis = new RedisService(config);
  store = new IdempotencyStore(redis);
});

afterAll(async () => {
  const keys = await redis.client.keys(`${config.redisKeyPrefix}:*`);
  if (keys.length > 0) await redis.client.del(...keys);
  await redis.onApplicationShutdown();
});

describe('IdempotencyStore (real Redis)', () => {
  it('claims once: the same fingerprint is in use until answered, then replayed; another is a mismatch', async () => {
    const key = newKey();
    const claim = await store.claim(key, 'fp');
    expect(claim.kind).toBe('claimed');
    expect(await redis.client.ttl(key)).toBeLessThanOrEqual(LOCK_TTL_SECONDS);
    expect(await store.claim(key, 'fp')).toEqual({ kind: 'in_use' });
    expect(await store.claim(key, 'other')).toEqual({ kind: 'mismatch' });
    if (claim.kind !== 'claimed') return;
    expect(await store.complete(key, claim.token, answer)).toBe(true);
    expect(await store.claim(key, 'fp')).toEqual({ kind: 'stored', response: answer });
    expect(await store.claim(key, 'other')).toEqual({ kind: 'mismatch' });
    expect(await redis.client.ttl(key)).toBeGreaterThan(RESPONSE_TTL_SECONDS - 60);
  });

  it('only the claimant answers or releases: a claim that expired and was taken again is not overwritten', async () => {
    const key = newKey();
    const first = await store.claim(key, 'fp');
    // The first claim's lock expired; another request claimed the key.
    await redis.client.del(key);
    const second = await store.claim(key, 'fp');
    if (first.kind !== 'claimed' || second.kind !== 'claimed') throw new Error('expected two claims');
    expect(await store.complete(key, first.token, answer)).toBe(false);
    await store.release(key, first.token);
    expect(await store.claim(key, 'fp')).toEqual({ kind: 'in_use' });
    await store.release(key, second.token);
    expect((await store.claim(key, 'fp')).kind).toBe('claimed');
  });
});
