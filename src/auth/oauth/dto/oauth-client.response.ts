import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ALL_SCOPES } from '../../access.js';
import { acceptedAuthMethods, TOKEN_ENDPOINT_AUTH_METHODS, type OAuthClient, type TokenEndpointAuthMethod } from '../entities/oauth-client.entity.js';
import { isoTime } from '../../../common/iso-time.js';

export class OAuthClientResponse {
  @ApiProperty() id: string;
  @ApiProperty({ description: 'The client_id of the OAuth requests (equal to id)' }) client_id: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: [String] }) redirect_uris: string[];
  @ApiProperty({ type: [String], enum: ALL_SCOPES }) scopes: string[];
  @ApiProperty({
    enum: TOKEN_ENDPOINT_AUTH_METHODS,
    description: 'The method registered; for a client registered without one, client_secret_basic (the RFC 7591 default), though it may use either listed in token_endpoint_auth_methods',
  })
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  @ApiProperty({
    type: [String],
    enum: TOKEN_ENDPOINT_AUTH_METHODS,
    description: 'Every method the client may authenticate with at /oauth/token, /oauth/revoke and /oauth/introspect: the one registered, or both secret methods when none was',
  })
  token_endpoint_auth_methods: TokenEndpointAuthMethod[];
  @ApiProperty({ format: 'date-time' }) created_at: string;

  static from(client: OAuthClient): OAuthClientResponse {
    return {
      id: client.id,
      client_id: client.id,
      name: client.name,
      redirect_uris: client.redirectUris,
      scopes: client.scopes,
      token_endpoint_auth_method: client.tokenEndpointAuthMethod ?? 'client_secret_basic',
      token_endpoint_auth_methods: [...acceptedAuthMethods(client.tokenEndpointAuthMethod)],
      created_at: isoTime(client.createdAt),
    };
  }
}

export class CreatedOAuthClientResponse extends OAuthClientResponse {
  @ApiPropertyOptional({ description: 'Shown once, here; stored only as a hash. Absent for public clients (token_endpoint_auth_method none).' })
  client_secret?: string;

  /** With the secret generated at registration (none for a public client). */
  static override from(client: OAuthClient & { secret?: string }): CreatedOAuthClientResponse {
    const response = OAuthClientResponse.from(client);
    return client.secret === undefined ? response : { ...response, client_secret: client.secret };
  }
}
