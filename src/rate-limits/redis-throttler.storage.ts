import type { ThrottlerStorage } from '@nestjs/throttler';
import type { RateLimiter, RateLimitEntry, RateLimitOutcome } from './rate-limiter.js';

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/**
 * @nestjs/throttler's storage interface over the service's Redis limiter. `increment` serves a
 * single named throttler (the package's own guard calls it once per throttler, one round trip
 * each); RateLimitGuard calls `incrementAll` instead, every limit of the request in one Lua script.
 */
export class RedisThrottlerStorage implements ThrottlerStorage {
  constructor(private readonly limiter: RateLimiter) {}

  async increment(key: string, ttl: number, limit: number, _blockDuration: number, throttlerName: string): Promise<ThrottlerStorageRecord> {
    const result = await this.limiter.hit(throttlerName, key, limit, Math.max(1, Math.ceil(ttl / 1000)));
    if (!result) return { totalHits: 0, timeToExpire: 0, isBlocked: false, timeToBlockExpire: 0 };
    return {
      totalHits: result.limit - result.remaining + (result.allowed ? 0 : 1),
      timeToExpire: result.retryAfter,
      isBlocked: !result.allowed,
      timeToBlockExpire: result.allowed ? 0 : result.retryAfter,
    };
  }

  incrementAll(entries: readonly RateLimitEntry[]): Promise<RateLimitOutcome> {
    return this.limiter.hitMany(entries);
  }
}
