import { DomainError } from '../common/errors/domain-error.js';
import { rateLimitHeaders, type RateLimitResult } from '../redis/rate-limiter.js';

export class InvalidSignatureError extends DomainError {
  constructor() {
    super('INVALID_SIGNATURE', 401, 'X-Service-Signature is missing or does not match the body');
  }
}

export class MethodNotAllowedError extends DomainError {
  constructor(allowed: string) {
    super('METHOD_NOT_ALLOWED', 405, `This webhook trigger accepts ${allowed} only`, { headers: { Allow: allowed } });
  }
}

export class RateLimitExceededError extends DomainError {
  constructor(limit: RateLimitResult) {
    super('RATE_LIMIT_EXCEEDED', 429, `Rate limit of ${limit.limit} exceeded`, { retryAfter: limit.retryAfter, headers: rateLimitHeaders(limit) });
  }
}

export class CredentialTypeRefusedError extends DomainError {
  constructor(authentication: string) {
    super('INSUFFICIENT_PERMISSIONS', 403, `This api trigger is fired with ${authentication} credentials only`);
  }
}

export class NotAnApiTriggerError extends DomainError {
  constructor() {
    super('INVALID_REQUEST', 400, 'Only api triggers are fired at this endpoint; webhook triggers at their url, message triggers by POST /v1/messages');
  }
}
