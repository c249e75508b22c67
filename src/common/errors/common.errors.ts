import { DomainError } from './domain-error.js';

export class InvalidRequestError extends DomainError {
  constructor(message: string, field?: string) {
    super('INVALID_REQUEST', 400, message, { field });
  }
}

export class MissingRequiredFieldError extends DomainError {
  constructor(field: string) {
    super('MISSING_REQUIRED_FIELD', 400, `${field} is required`, { field });
  }
}

export class RouteNotFoundError extends DomainError {
  constructor(method: string, path: string) {
    super('NOT_FOUND', 404, `No route for ${method} ${path}`);
  }
}

export class PayloadTooLargeError extends DomainError {
  constructor(limit: string) {
    super('PAYLOAD_TOO_LARGE', 413, `Request body exceeds the ${limit} limit`);
  }
}

export class InternalError extends DomainError {
  constructor(requestId: string | undefined) {
    super('INTERNAL_ERROR', 500, 'An unexpected error occurred', {
      details: requestId ? `Quote request id ${requestId} when reporting this error` : undefined,
    });
  }
}

export class UnsupportedMediaTypeError extends DomainError {
  constructor(received: string, accepted: readonly string[]) {
    super('UNSUPPORTED_MEDIA_TYPE', 415, `Content-Type ${received} is not accepted here; send ${accepted.join(' or ')}`);
  }
}

/** A method the path does not serve; `Allow` lists the ones it does (RFC 9110 §15.5.6). */
export class MethodNotAllowedError extends DomainError {
  constructor(method: string, allowed: readonly string[]) {
    super('METHOD_NOT_ALLOWED', 405, `${method} is not allowed here; allowed: ${allowed.join(', ')}`, { headers: { Allow: allowed.join(', ') } });
  }
}

/**
 * A dependency (PostgreSQL, Redis) does not answer, or the process is shutting down: nothing was
 * done that the client must undo, and the same request may be sent again after `Retry-After`.
 */
export class ServiceUnavailableError extends DomainError {
  constructor(message = 'The service is temporarily unavailable; retry after the number of seconds in Retry-After', retryAfterSeconds = 5) {
    super('SERVICE_UNAVAILABLE', 503, message, { retryAfter: retryAfterSeconds });
  }
}
