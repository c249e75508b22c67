import { InvalidRequestError } from '../common/errors/common.errors.js';
import { DomainError } from '../common/errors/domain-error.js';
import { IDEMPOTENCY_KEY_HEADER } from '../common/http/idempotency-headers.js';

/** Seconds a client is told to wait when Redis cannot vouch for the key. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

export class InvalidIdempotencyKeyError extends InvalidRequestError {
  constructor(message: string) {
    super(message, IDEMPOTENCY_KEY_HEADER);
  }
}

/** The key's first request has not been answered yet. */
export class IdempotencyKeyInUseError extends DomainError {
  constructor() {
    super('IDEMPOTENCY_KEY_IN_USE', 409, `A request with this ${IDEMPOTENCY_KEY_HEADER} is still being processed; retry once it has been answered`, {
      retryAfter: 1,
    });
  }
}

/** The key was first used for another request (method, path, query or body). */
export class IdempotencyKeyReusedError extends DomainError {
  constructor() {
    super('IDEMPOTENCY_KEY_REUSED', 422, `This ${IDEMPOTENCY_KEY_HEADER} was used for a different request; use a new key for a new request`, {
      field: IDEMPOTENCY_KEY_HEADER,
    });
  }
}

/** Redis cannot be asked: the request is not run without the guarantee it asked for. */
export class IdempotencyUnavailableError extends DomainError {
  constructor() {
    super('SERVICE_UNAVAILABLE', 503, `Requests with an ${IDEMPOTENCY_KEY_HEADER} cannot be served right now; retry later with the same key`, {
      retryAfter: UNAVAILABLE_RETRY_AFTER_SECONDS,
    });
  }
}
