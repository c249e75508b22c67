import { DomainError } from '../common/errors/domain-error.js';

export class MissingAuthenticationError extends DomainError {
  constructor() {
    super('MISSING_AUTHENTICATION', 401, 'Send a credential as "Authorization: Bearer <credential>"');
  }
}

export class InvalidApiKeyError extends DomainError {
  constructor() {
    super('INVALID_API_KEY', 401, 'The API key is invalid or has been revoked');
  }
}

export class InvalidTokenError extends DomainError {
  constructor(message = 'The access token is invalid or expired') {
    super('INVALID_TOKEN', 401, message);
  }
}

export class InsufficientPermissionsError extends DomainError {
  constructor(required?: string) {
    super(
      'INSUFFICIENT_PERMISSIONS',
      403,
      required ? `This operation needs an API key with ${required} permission` : 'This route declares no access and is refused',
    );
  }
}

export class ScopeInsufficientError extends DomainError {
  constructor(required: string | undefined) {
    super('SCOPE_INSUFFICIENT', 403, required ? `This operation needs the scope ${required}` : 'This operation needs a Full Access API key');
  }
}

export class ApiKeyNotFoundError extends DomainError {
  constructor() {
    super('API_KEY_NOT_FOUND', 404, 'API key not found');
  }
}

export class OrganizationNotFoundError extends DomainError {
  constructor() {
    super('ORGANIZATION_NOT_FOUND', 404, 'Organization not found');
  }
}

export class OrganizationAlreadyExistsError extends DomainError {
  constructor() {
    super('ORGANIZATION_ALREADY_EXISTS', 409, 'An organization with this name exists', { field: 'name' });
  }
}

export class UserAlreadyExistsError extends DomainError {
  constructor() {
    super('USER_ALREADY_EXISTS', 409, 'A user with this email exists', { field: 'email' });
  }
}

export class JwtClientNotFoundError extends DomainError {
  constructor() {
    super('JWT_CLIENT_NOT_FOUND', 404, 'JWT client not found');
  }
}
