import { DomainError } from '../../common/errors/domain-error.js';

/** RFC 6749 §5.2 / §4.1.2.1 error codes (plus RFC 7009's unsupported_token_type). */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'unsupported_token_type'
  | 'server_error';

/**
 * An error of the /oauth/* endpoints. The global filter renders it in the RFC 6749 shape
 * `{error, error_description}` (every error on /oauth/* is rendered so, see ErrorEnvelopeFilter).
 */
export class OAuthError extends DomainError {
  constructor(code: OAuthErrorCode, description: string, status = 400, headers?: Record<string, string>) {
    super(code, status, description, headers ? { headers } : {});
  }
}

/** invalid_client: 401, with the challenge RFC 6749 §5.2 asks for. */
export class InvalidClientError extends OAuthError {
  constructor(description = 'Client authentication failed') {
    super('invalid_client', description, 401, { 'WWW-Authenticate': 'Basic realm="oauth", charset="UTF-8"' });
  }
}

export class OAuthClientNotFoundError extends DomainError {
  constructor() {
    super('OAUTH_CLIENT_NOT_FOUND', 404, 'OAuth client not found');
  }
}
