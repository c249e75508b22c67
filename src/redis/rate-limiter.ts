import { Injectable } from '@nestjs/common';
import { RedisService } from './redis.service.js';

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets. */
  resetAt: number;
  /** Seconds until the window resets (for Retry-After). */
  retryAfter: number;
}

/**
 * Fixed-window counters in Redis, shared by every API process: one INCR per request, the
 * window's expiry set when the window opens.
 */
@Injectable()
export class RateLimiter {
  constructor(private readonly redis: RedisService) {}

  async hit(name: string, limit: number, windowSeconds: number): Promise<RateLimitResult> {
    const windowMs = windowSeconds * 1000;
    const key = this.redis.key('ratelimit', name);
    const replies = await this.redis.client.multi().incr(key).pexpire(key, windowMs, 'NX').pttl(key).exec();
    if (!replies) throw new Error('Rate limit transaction was aborted');
    const count = Number(replies[0][1]);
    const ttlMs = Math.max(0, Number(replies[2][1]));
    const retryAfter = Math.max(1, Math.ceil(ttlMs / 1000));
    return {
      allowed: count <= limit,
      limit,
      remaining: Math.max(0, limit - count),
      resetAt: Math.ceil((Date.now() + ttlMs) / 1000),
      retryAfter,
    };
  }
}

/** The specification's rate-limit response headers. */
export function rateLimitHeaders(result: RateLimitResult): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(result.limit),
    'X-RateLimit-Remaining': String(result.remaining),
    'X-RateLimit-Reset': String(result.resetAt),
  };
}
