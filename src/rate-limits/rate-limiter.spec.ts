import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppConfig } from '../config/app-config.js';
import { RateLimiter } from './rate-limiter.js';
import { RedisService } from '../redis/redis.service.js';

const config = AppConfig.fromEnv({}, { LOG_LEVEL: 'silent', REDIS_KEY_PREFIX: `was_unit_limiter_${randomBytes(4).toString('hex')}` });

let redis: RedisService;
let limiter: RateLimiter;

beforeAll(async () => {
  redis = new RedisService(config);
  limiter = new RateLimiter(redis, config);
  // Connected, and the script loaded on this connection (EVAL once, then EVALSHA).
  await limiter.hit('warm-up', 'x', 1, 60);
});

afterAll(async () => {
  const keys = await redis.client.keys(`${config.redisKeyPrefix}:*`);
  if (keys.length > 0) await redis.client.del(...keys);
  await redis.onApplicationShutdown();
});

/** Socket writes of the limiter's connection while `work` runs. */
async function socketWrites<T>(work: () => Promise<T>): Promise<{ result: T; writes: number }> {
  const stream = (redis.client as unknown as { stream: { write: (...args: unknown[]) => boolean } }).stream;
  const original = stream.write;
  let writes = 0;
  stream.write = function (this: unknown, ...args: unknown[]) {
    writes++;
    return original.apply(this, args);
  };
  try {
    return { result: await work(), writes };
  } finally {
    stream.write = original;
  }
}

describe('RateLimiter (real Redis)', () => {
  it('reserves what is left of a window at most, however many ask at once, and 0 once it is used up', async () => {
    const key = `reserve-${randomBytes(4).toString('hex')}`;
    const first = await limiter.reserve('channel-send', key, 10, 60, 4);
    expect(first).toMatchObject({ granted: 4 });
    expect(first!.windowMs).toBeGreaterThan(59_000);
    // Five reservers of 4 at once against the 6 left: 6 granted in all, never more.
    const together = await Promise.all(Array.from({ length: 5 }, () => limiter.reserve('channel-send', key, 10, 60, 4)));
    expect(together.reduce((sum, r) => sum + r!.granted, 0)).toBe(6);
    expect(await limiter.reserve('channel-send', key, 10, 60, 4)).toMatchObject({ granted: 0 });
    // A refused reservation takes nothing: the count stays at the limit, and a plain hit is refused too.
    expect(Number(await redis.client.get(`${config.redisKeyPrefix}:rl:channel-send:${key}`))).toBe(10);
    expect((await limiter.hit('channel-send', key, 10, 60))!.allowed).toBe(false);
  });

  it('scripts asked for in one event-loop turn go out in ONE socket write, each still exact and atomic', async () => {
    const { result, writes } = await socketWrites(() =>
      Promise.all(Array.from({ length: 20 }, (_, i) => limiter.hitMany([{ policy: 'burst', key: 'k', limit: 10, windowSeconds: 60 }, { policy: 'own', key: `k${i}`, limit: 5, windowSeconds: 60 }]))),
    );
    expect(writes).toBe(1);
    expect(result.filter((o) => o.allowed)).toHaveLength(10);
    // Each allowed request got its own count: remaining 9..0, once each.
    expect(result.filter((o) => o.allowed).map((o) => o.results[0].remaining).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // A refused request counted against none of its limits.
    expect(result.filter((o) => !o.allowed).every((o) => o.results[1].remaining === 5)).toBe(true);
  });

  it('a lone request is one plain command, one write', async () => {
    const { result, writes } = await socketWrites(() => limiter.hit('lone', 'k', 3, 60));
    expect(writes).toBe(1);
    expect(result).toMatchObject({ allowed: true, remaining: 2, limit: 3 });
  });
});
