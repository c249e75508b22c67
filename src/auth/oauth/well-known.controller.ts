import { Controller, Get, Header } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ALL_SCOPES } from '../access.js';
import { Public } from '../decorators/access.decorators.js';
import { AuthorizationServerMetadataDto } from './dto/oauth.responses.js';
import { TOKEN_ENDPOINT_AUTH_METHODS } from './entities/oauth-client.entity.js';
import { OAuthService } from './oauth.service.js';

/** RFC 8414 discovery, so that standard clients find the endpoints from the issuer alone. */
@ApiTags('OAuth 2.0')
@Public()
@Controller('.well-known')
export class WellKnownController {
  constructor(private readonly oauth: OAuthService) {}

  @Get('oauth-authorization-server')
  @Header('Cache-Control', 'public, max-age=3600')
  @ApiOperation({
    summary: 'OAuth 2.0 authorization server metadata (RFC 8414)',
    description:
      'The *_auth_methods_supported lists name every method the server takes. A client is held to the token_endpoint_auth_method it registered; ' +
      'a confidential client registered without one may use client_secret_basic or client_secret_post at the token, revocation and introspection endpoints.',
  })
  @ApiResponse({ status: 200, description: 'The metadata document', type: AuthorizationServerMetadataDto })
  metadata(): AuthorizationServerMetadataDto {
    const issuer = this.oauth.issuer;
    return {
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      introspection_endpoint: `${issuer}/oauth/introspect`,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: [...TOKEN_ENDPOINT_AUTH_METHODS],
      revocation_endpoint_auth_methods_supported: [...TOKEN_ENDPOINT_AUTH_METHODS],
      introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      scopes_supported: ALL_SCOPES,
      authorization_response_iss_parameter_supported: true,
    };
  }
}
