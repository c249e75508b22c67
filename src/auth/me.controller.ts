import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { ApiData } from '../common/http/api-docs.js';
import { ok } from '../common/http/envelope.js';
import { PERMISSION_LEVELS, type CredentialType, type PermissionLevel, type Principal } from './access.js';
import { AnyCredential, CurrentPrincipal } from './decorators/access.decorators.js';

export class MeResponse {
  @ApiProperty({ enum: ['api_key', 'oauth', 'jwt'] }) credential_type: CredentialType;
  @ApiProperty() credential_id: string;
  @ApiProperty() name: string;
  @ApiProperty() organization_id: string;
  @ApiPropertyOptional({ enum: PERMISSION_LEVELS, description: 'API keys only' }) permission_level?: PermissionLevel;
  @ApiPropertyOptional({ type: [String], description: 'OAuth tokens and JWTs only' }) scopes?: string[];
  @ApiPropertyOptional({ description: 'OAuth tokens only: the user who authorized the client (credential_id is the client)' }) user_id?: string;

  static from(p: Principal): MeResponse {
    const me: MeResponse = { credential_type: p.credentialType, credential_id: p.credentialId, name: p.name, organization_id: p.organizationId };
    if (p.permissionLevel) me.permission_level = p.permissionLevel;
    if (p.scopes) me.scopes = p.scopes;
    if (p.userId) me.user_id = p.userId;
    return me;
  }
}

@ApiTags('Authentication')
@Controller('v1/me')
export class MeController {
  @Get()
  @AnyCredential()
  @ApiOperation({ summary: 'Describe the credential of this request' })
  @ApiData(MeResponse)
  me(@CurrentPrincipal() principal: Principal) {
    return ok(MeResponse.from(principal));
  }
}
