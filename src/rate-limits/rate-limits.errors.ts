import { DomainError } from '../common/errors/domain-error.js';
import { rateLimitHeaders, type RateLimitResult } from './rate-limiter.js';

/** 429 with `retry_after` and Retry-After (set by the error filter), and the limit's headers. */
export class RateLimitExceededError extends DomainError {
  constructor(refusing: RateLimitResult, applied: readonly RateLimitResult[] = [refusing]) {
    super('RATE_LIMIT_EXCEEDED', 429, `Rate limit of ${refusing.limit} requests per ${refusing.windowSeconds} s exceeded`, {
      retryAfter: refusing.retryAfter,
      headers: rateLimitHeaders(applied),
    });
  }
}
