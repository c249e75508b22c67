import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { TextLength } from '../../../common/validation/text-length.decorator.js';
import { ALL_SCOPES } from '../../access.js';
import { TOKEN_ENDPOINT_AUTH_METHODS, type TokenEndpointAuthMethod } from '../entities/oauth-client.entity.js';
import { MAX_REDIRECT_URI_LENGTH } from '../redirect-uri.js';

export const MAX_REDIRECT_URIS = 10;

export class CreateOAuthClientDto {
  @ApiProperty({ example: 'Reporting dashboard', minLength: 1, maxLength: 200 })
  @IsString()
  @TextLength(1, 200)
  name: string;

  @ApiProperty({
    type: [String],
    minItems: 1,
    maxItems: MAX_REDIRECT_URIS,
    description: 'Compared exactly at authorization. https, or http on a loopback IP (127.0.0.1, [::1]); no fragment.',
    example: ['https://dashboard.example.com/oauth/callback'],
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_REDIRECT_URIS)
  @IsString({ each: true })
  @MaxLength(MAX_REDIRECT_URI_LENGTH, { each: true })
  redirect_uris: string[];

  @ApiProperty({ type: [String], enum: ALL_SCOPES, minItems: 1, maxItems: ALL_SCOPES.length, example: ['workflows:read', 'executions:read'] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(ALL_SCOPES.length)
  @IsIn(ALL_SCOPES, { each: true, message: 'each scope must be <resource>:<action> with a known resource and action' })
  scopes: string[];

  @ApiPropertyOptional({
    enum: TOKEN_ENDPOINT_AUTH_METHODS,
    description:
      'How the client authenticates at /oauth/token, /oauth/revoke and /oauth/introspect; the client is then held to it. Omitted: a confidential ' +
      'client that may use either client_secret_basic (HTTP Basic) or client_secret_post (client_id and client_secret in the form). ' +
      '`none`: a public client (no secret), which must use PKCE S256.',
  })
  @IsOptional()
  @IsIn(TOKEN_ENDPOINT_AUTH_METHODS as unknown as string[])
  token_endpoint_auth_method?: TokenEndpointAuthMethod;
}
