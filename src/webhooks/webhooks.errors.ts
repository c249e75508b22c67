import { DomainError } from '../common/errors/domain-error.js';

export class WebhookNotFoundError extends DomainError {
  constructor() {
    super('WEBHOOK_NOT_FOUND', 404, 'Webhook not found');
  }
}

export class WebhookAlreadyExistsError extends DomainError {
  constructor() {
    super('WEBHOOK_ALREADY_EXISTS', 409, 'A webhook with this URL exists', { field: 'url' });
  }
}

export class InvalidWebhookUrlError extends DomainError {
  constructor(message: string) {
    super('INVALID_WEBHOOK_URL', 400, message, { field: 'url' });
  }
}

export class InvalidEventTypesError extends DomainError {
  constructor(message: string, field = 'events') {
    super('INVALID_EVENT_TYPES', 400, message, { field });
  }
}

export class InvalidRetryPolicyError extends DomainError {
  constructor(message: string, field = 'retry_policy') {
    super('INVALID_RETRY_POLICY', 400, message, { field });
  }
}

/** A well-formed URL whose host does not resolve, or resolves only to addresses deliveries may not reach. */
export class WebhookValidationFailedError extends DomainError {
  constructor(message: string) {
    super('WEBHOOK_VALIDATION_FAILED', 422, message, { field: 'url' });
  }
}

export class WebhookLogNotFoundError extends DomainError {
  constructor() {
    super('WEBHOOK_LOG_NOT_FOUND', 404, 'Delivery log entry not found');
  }
}

/** Resend and recover queue deliveries, which an inactive webhook would drop. */
export class WebhookInactiveError extends DomainError {
  constructor() {
    super('WEBHOOK_INACTIVE', 409, 'The webhook is inactive; activate it (PUT active: true) first');
  }
}
