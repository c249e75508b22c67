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
