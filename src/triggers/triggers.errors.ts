import { DomainError } from '../common/errors/domain-error.js';

export class TriggerNotFoundError extends DomainError {
  constructor() {
    super('TRIGGER_NOT_FOUND', 404, 'Trigger not found');
  }
}

export class TriggerAlreadyExistsError extends DomainError {
  constructor() {
    super('TRIGGER_ALREADY_EXISTS', 409, 'A trigger with this name exists', { field: 'name' });
  }
}

/** The configuration breaks its type's rules; `field` points at the offending value. */
export class InvalidTriggerConfigError extends DomainError {
  constructor(message: string, field: string) {
    super('INVALID_TRIGGER_CONFIG', 400, message, { field });
  }
}

/** A schedule's cron expression does not parse; `details` carries the parser's reason. */
export class InvalidCronExpressionError extends DomainError {
  constructor(field: string, reason: string) {
    super('INVALID_CRON_EXPRESSION', 422, 'cron_expression is not a valid cron expression', { field, details: reason });
  }
}

export class InvalidStateTransitionError extends DomainError {
  constructor(message: string) {
    super('INVALID_STATE_TRANSITION', 409, message);
  }
}

/** A workflow's managed trigger changes with the workflow's configuration.trigger and status only. */
export class ManagedTriggerError extends InvalidStateTransitionError {
  constructor(workflowId: string) {
    super(`This trigger follows workflow ${workflowId}'s configuration.trigger and status: change the workflow instead`);
  }
}

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
