import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { ApiData } from '../common/http/api-docs.js';
import { ok } from '../common/http/envelope.js';
import { AppConfig } from '../config/app-config.js';
import { OrganizationLimits, type EffectiveLimit, type EffectiveLimits } from '../rate-limits/organization-limits.js';
import { PERMISSION_LEVELS, type CredentialType, type PermissionLevel, type Principal } from './access.js';
import { AnyCredential, CurrentPrincipal } from './decorators/access.decorators.js';
import { formatExecutionRetention } from './organizations/execution-retention.js';
import { OrganizationsService } from './organizations/organizations.service.js';

export class EffectiveLimitDto implements EffectiveLimit {
  @ApiProperty({ description: 'Requests per hour per credential', example: 1000 }) value: number;
  @ApiProperty({ enum: ['default', 'override'], description: "`default`: the deployment's figure; `override`: set for this organization (CLI `org:limits`)" })
  source: 'default' | 'override';
}

/** The organization's request limits in force, per credential and per hour (docs/API.md, "Rate limits"). */
export class OrganizationLimitsDto implements EffectiveLimits {
  @ApiProperty({ type: EffectiveLimitDto, description: 'Every /v1 request of a credential' }) per_credential_per_hour: EffectiveLimitDto;
  @ApiProperty({ type: EffectiveLimitDto, description: 'Workflow and trigger list/get, per resource' }) read_per_hour: EffectiveLimitDto;
  @ApiProperty({ type: EffectiveLimitDto, description: 'Workflow and trigger create/update, per resource' }) write_per_hour: EffectiveLimitDto;
  @ApiProperty({ type: EffectiveLimitDto, description: 'Workflow and trigger delete, per resource' }) delete_per_hour: EffectiveLimitDto;
  @ApiProperty({ type: EffectiveLimitDto, description: 'Execution operations (activate, fire, retry, executions reads...), per resource' }) execution_per_hour: EffectiveLimitDto;
  @ApiProperty({ type: EffectiveLimitDto, description: 'Analytics: real-time metrics' }) analytics_realtime_per_hour: EffectiveLimitDto;
  @ApiProperty({ type: EffectiveLimitDto, description: 'Analytics: historical metrics' }) analytics_historical_per_hour: EffectiveLimitDto;
  @ApiProperty({ type: EffectiveLimitDto, description: 'Analytics: custom reports' }) analytics_reports_per_hour: EffectiveLimitDto;
  @ApiProperty({ type: EffectiveLimitDto, description: 'Analytics: data export' }) analytics_export_per_hour: EffectiveLimitDto;
}

export class MeOrganizationDto {
  @ApiProperty() id: string;
  @ApiProperty({ description: 'Whether this deployment enforces rate limits at all (RATE_LIMITS_ENABLED)' }) rate_limits_enabled: boolean;
  @ApiProperty({ type: OrganizationLimitsDto }) limits: OrganizationLimitsDto;
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
  @ApiProperty({ type: MeOrganizationDto, description: "The credential's organization and the request limits this service applies to it" }) organization: MeOrganizationDto;

  static from(p: Principal, organization: MeOrganizationDto): MeResponse {
    const me: MeResponse = { credential_type: p.credentialType, credential_id: p.credentialId, name: p.name, organization_id: p.organizationId, organization };
    if (p.permissionLevel) me.permission_level = p.permissionLevel;
    if (p.scopes) me.scopes = p.scopes;
    if (p.userId) me.user_id = p.userId;
    return me;
  }
}

@ApiTags('Authentication')
@Controller('v1/me')
export class MeController {
  constructor(
    private readonly limits: OrganizationLimits,
    private readonly config: AppConfig,
    private readonly organizations: OrganizationsService,
  ) {}

  @Get()
  @AnyCredential()
  @ApiOperation({ summary: 'Describe the credential of this request, and the request limits of its organization' })
  @ApiData(MeResponse)
  async me(@CurrentPrincipal() principal: Principal) {
    const stored = await this.organizations.findById(principal.organizationId);
    const organization = {
      id: principal.organizationId,
      rate_limits_enabled: this.config.rateLimitsEnabled,
      limits: this.limits.effective(principal.organizationId),
      execution_retention: formatExecutionRetention(stored?.executionRetentionMs ?? null),
    };
    return ok(MeResponse.from(principal, organization));
  }
}
