import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** RFC 6749 §5.2: every error of /oauth/* and /.well-known/*. */
export class OAuthErrorResponse {
  @ApiProperty({ example: 'invalid_grant', description: 'RFC 6749 error code (invalid_request, invalid_client, invalid_grant, unsupported_grant_type, invalid_scope, ...)' })
  error: string;

  @ApiPropertyOptional({ description: 'What went wrong, for the developer' })
  error_description?: string;
}

/** RFC 6749 §5.1. */
export class TokenResponseDto {
  @ApiProperty({ description: 'A JWT signed by the service (typ at+jwt); send as `Authorization: Bearer` on /v1' }) access_token: string;
  @ApiProperty({ enum: ['Bearer'] }) token_type: string;
  @ApiProperty({ example: 3600 }) expires_in: number;
  @ApiProperty({ description: 'Single use: each refresh answers a new one, and reusing an old one revokes the grant' }) refresh_token: string;
  @ApiProperty({ example: 'workflows:read executions:read', description: 'Space-separated scopes granted' }) scope: string;
}

/** RFC 7662 §2.2. */
export class IntrospectionResponseDto {
  @ApiProperty() active: boolean;
  @ApiPropertyOptional({ enum: ['Bearer', 'refresh_token'] }) token_type?: string;
  @ApiPropertyOptional() scope?: string;
  @ApiPropertyOptional() client_id?: string;
  @ApiPropertyOptional({ description: 'The user who authorized the client' }) sub?: string;
  @ApiPropertyOptional() iss?: string;
  @ApiPropertyOptional() exp?: number;
  @ApiPropertyOptional() iat?: number;
  @ApiPropertyOptional() jti?: string;
}

/** RFC 8414 §2 (with RFC 9207's authorization_response_iss_parameter_supported). */
export class AuthorizationServerMetadataDto {
  @ApiProperty() issuer: string;
  @ApiProperty() authorization_endpoint: string;
  @ApiProperty() token_endpoint: string;
  @ApiProperty() revocation_endpoint: string;
  @ApiProperty() introspection_endpoint: string;
  @ApiProperty({ type: [String] }) response_types_supported: string[];
  @ApiProperty({ type: [String] }) response_modes_supported: string[];
  @ApiProperty({ type: [String] }) grant_types_supported: string[];
  @ApiProperty({ type: [String] }) code_challenge_methods_supported: string[];
  @ApiProperty({
    type: [String],
    description: 'Every method the server takes. A client is held to the method it registered; a confidential client registered without one may use client_secret_basic or client_secret_post',
  })
  token_endpoint_auth_methods_supported: string[];
  @ApiProperty({ type: [String] }) revocation_endpoint_auth_methods_supported: string[];
  @ApiProperty({ type: [String] }) introspection_endpoint_auth_methods_supported: string[];
  @ApiProperty({ type: [String] }) scopes_supported: string[];
  @ApiProperty() authorization_response_iss_parameter_supported: boolean;
}
