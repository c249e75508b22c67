import { DomainError } from '../common/errors/domain-error.js';

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
