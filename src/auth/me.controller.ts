import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { ApiData } from '../common/http/api-docs.js';
import { ok } from '../common/http/envelope.js';
import { PERMISSION_LEVELS, type CredentialType, type PermissionLevel, type Principal } from './access.js';
import { AnyCredential, CurrentPrincipal } from './decorators/access.decorators.js';
import { Organization } from './organizations/entities/organization.entity.js';
import { formatExecutionRetention } from './organizations/execution-retention.js';
import { OrganizationsService } from './organizations/organizations.service.js';

export class MeOrganization {
  @ApiProperty() id: string;
  @ApiProperty({
    type: String,
    nullable: true,
    example: '30d',
    description: "The organization's execution data retention override (a duration, or off: kept forever); null: the service's EXECUTION_RETENTION",
  })
  execution_retention: string | null;
}

export class MeResponse {
  @ApiProperty({ enum: ['api_key', 'oauth', 'jwt'] }) credential_type: CredentialType;
  @ApiProperty() credential_id: string;
  @ApiProperty() name: string;
  @ApiProperty() organization_id: string;
  @ApiPropertyOptional({ enum: PERMISSION_LEVELS, description: 'API keys only' }) permission_level?: PermissionLevel;
  @ApiPropertyOptional({ type: [String], description: 'OAuth tokens and JWTs only' }) scopes?: string[];
  @ApiPropertyOptional({ description: 'OAuth tokens only: the user who authorized the client (credential_id is the client)' }) user_id?: string;
  @ApiProperty({ type: MeOrganization }) organization: MeOrganization;

  static from(p: Principal, organization: Organization | null): MeResponse {
    const me: MeResponse = {
      credential_type: p.credentialType,
      credential_id: p.credentialId,
      name: p.name,
      organization_id: p.organizationId,
      organization: { id: p.organizationId, execution_retention: formatExecutionRetention(organization?.executionRetentionMs ?? null) },
    };
    if (p.permissionLevel) me.permission_level = p.permissionLevel;
    if (p.scopes) me.scopes = p.scopes;
    if (p.userId) me.user_id = p.userId;
    return me;
  }
}

@ApiTags('Authentication')
@Controller('v1/me')
export class MeController {
  constructor(private readonly organizations: OrganizationsService) {}

  @Get()
  @AnyCredential()
  @ApiOperation({ summary: 'Describe the credential of this request' })
  @ApiData(MeResponse)
  async me(@CurrentPrincipal() principal: Principal) {
    return ok(MeResponse.from(principal, await this.organizations.findById(principal.organizationId)));
  }
}
