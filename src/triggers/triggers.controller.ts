import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../auth/access.js';
import { CurrentPrincipal, RequireAccess } from '../auth/decorators/access.decorators.js';
import { CountsResourceLimit, RateLimitClass } from '../rate-limits/rate-limit.decorators.js';
import { ApiData, ApiDeleted, ApiErrors, ApiPage } from '../common/http/api-docs.js';
import { deleted, ok } from '../common/http/envelope.js';
import { paginate } from '../common/pagination/page.query.js';
import { CreateTriggerDto } from './dto/create-trigger.dto.js';
import { FireTriggerDto } from './dto/fire-trigger.dto.js';
import { FiredExecutionResponse } from './dto/fired-execution.response.js';
import { ListTriggersQuery } from './dto/list-triggers.query.js';
import {
  TriggerActivatedResponse,
  TriggerDeactivatedResponse,
  TriggerPausedResponse,
  TriggerResponse,
  TriggerResumedResponse,
} from './dto/trigger.response.js';
import { UpdateTriggerDto } from './dto/update-trigger.dto.js';
import { TriggerFiringService } from './trigger-firing.service.js';
import { TriggerRateLimits } from '../rate-limits/trigger-rate-limits.service.js';
import { TriggersService } from './triggers.service.js';

@ApiTags('Triggers')
@Controller('v1/triggers')
export class TriggersController {
  constructor(
    private readonly triggers: TriggersService,
    private readonly firing: TriggerFiringService,
  ) {}

  @Get()
  @RequireAccess('triggers', 'read')
  @RateLimitClass('triggers', 'read')
  @ApiOperation({ summary: 'List triggers, newest first (webhook secrets are left out)' })
  @ApiPage(TriggerResponse)
  @ApiErrors(400)
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ListTriggersQuery) {
    const [items, total] = await this.triggers.list(principal.organizationId, query);
    return paginate(items.map((t) => TriggerResponse.from(t, this.triggers.presentConfiguration(t, false))), total, query);
  }

  @Get(':trigger_id')
  @RequireAccess('triggers', 'read')
  @RateLimitClass('triggers', 'read')
  @ApiOperation({ summary: 'Get a trigger' })
  @ApiData(TriggerResponse)
  @ApiErrors(404)
  async get(@CurrentPrincipal() principal: Principal, @Param('trigger_id') id: string) {
    const trigger = await this.triggers.getOwned(principal.organizationId, id);
    return ok(TriggerResponse.from(trigger, this.triggers.presentConfiguration(trigger, true)));
  }

  @Post()
  @HttpCode(201)
  @RequireAccess('triggers', 'write')
  @RateLimitClass('triggers', 'write')
  @ApiOperation({ summary: 'Create a trigger (status active)' })
  @ApiData(TriggerResponse, 201, 'Created')
  @ApiErrors(400, 404, 409, 422)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateTriggerDto) {
    const trigger = await this.triggers.create(principal.organizationId, body);
    return ok(TriggerResponse.from(trigger, this.triggers.presentConfiguration(trigger, true)));
  }

  @Put(':trigger_id')
  @RequireAccess('triggers', 'write')
  @RateLimitClass('triggers', 'write')
  @ApiOperation({ summary: 'Update name, channel or configuration; omitted fields are kept, the status is unchanged' })
  @ApiData(TriggerResponse)
  @ApiErrors(400, 404, 409, 422)
  async update(@CurrentPrincipal() principal: Principal, @Param('trigger_id') id: string, @Body() body: UpdateTriggerDto) {
    const trigger = await this.triggers.update(principal.organizationId, id, body);
    return ok(TriggerResponse.from(trigger, this.triggers.presentConfiguration(trigger, true)));
  }

  @Delete(':trigger_id')
  @RequireAccess('triggers', 'delete')
  @RateLimitClass('triggers', 'delete')
  @ApiOperation({ summary: 'Delete a trigger (and its schedule); a workflow\'s managed trigger is 409' })
  @ApiDeleted()
  @ApiErrors(404, 409)
  async delete(@CurrentPrincipal() principal: Principal, @Param('trigger_id') id: string) {
    await this.triggers.delete(principal.organizationId, id);
    return deleted('Trigger deleted');
  }

  @Post(':trigger_id/activate')
  @HttpCode(200)
  @RequireAccess('triggers', 'write')
  @RateLimitClass('triggers', 'execution')
  @ApiOperation({ summary: 'Activate a trigger (from any state; a workflow\'s managed trigger is 409)' })
  @ApiData(TriggerActivatedResponse)
  @ApiErrors(404, 409)
  async activate(@CurrentPrincipal() principal: Principal, @Param('trigger_id') id: string) {
    const t = await this.triggers.activate(principal.organizationId, id);
    return ok(TriggerActivatedResponse.from(t));
  }

  @Post(':trigger_id/deactivate')
  @HttpCode(200)
  @RequireAccess('triggers', 'write')
  @RateLimitClass('triggers', 'execution')
  @ApiOperation({ summary: 'Deactivate a trigger (from any state; a workflow\'s managed trigger is 409)' })
  @ApiData(TriggerDeactivatedResponse)
  @ApiErrors(404, 409)
  async deactivate(@CurrentPrincipal() principal: Principal, @Param('trigger_id') id: string) {
    const t = await this.triggers.deactivate(principal.organizationId, id);
    return ok(TriggerDeactivatedResponse.from(t));
  }

  @Post(':trigger_id/pause')
  @HttpCode(200)
  @RequireAccess('triggers', 'write')
  @RateLimitClass('triggers', 'execution')
  @ApiOperation({ summary: 'Pause a trigger (from any state; a workflow\'s managed trigger is 409)' })
  @ApiData(TriggerPausedResponse)
  @ApiErrors(404, 409)
  async pause(@CurrentPrincipal() principal: Principal, @Param('trigger_id') id: string) {
    const t = await this.triggers.pause(principal.organizationId, id);
    return ok(TriggerPausedResponse.from(t));
  }

  @Post(':trigger_id/resume')
  @HttpCode(200)
  @RequireAccess('triggers', 'write')
  @RateLimitClass('triggers', 'execution')
  @ApiOperation({ summary: 'Resume a paused trigger (409 INVALID_STATE_TRANSITION from any other state)' })
  @ApiData(TriggerResumedResponse)
  @ApiErrors(404, 409)
  async resume(@CurrentPrincipal() principal: Principal, @Param('trigger_id') id: string) {
    const t = await this.triggers.resume(principal.organizationId, id);
    return ok(TriggerResumedResponse.from(t));
  }

  @Post(':trigger_id/fire')
  @HttpCode(202)
  @RequireAccess('triggers', 'write')
  @RateLimitClass('triggers', 'execution')
  @CountsResourceLimit(TriggerRateLimits, "trigger-rate-limit: the trigger's own `rate_limit`/h")
  @ApiOperation({ summary: 'Fire an api trigger (limited by its rate_limit per hour)' })
  @ApiData(FiredExecutionResponse, 202, 'Accepted (status failed with an error when the trigger or workflow is not active)')
  @ApiErrors(400, 404, 429)
  async fire(
    @CurrentPrincipal() principal: Principal,
    @Param('trigger_id') triggerId: string,
    @Body() body: FireTriggerDto,
    @Headers('user-agent') userAgent?: string,
  ) {
    // The trigger's own rate_limit was counted by the request throttler with the credential's and
    // the class's limits, in one round trip (TriggerRateLimits); its headers show the tightest.
    const result = await this.firing.fireApiTrigger(principal.organizationId, triggerId, body, userAgent ?? null, principal.credentialType);
    return ok(FiredExecutionResponse.from(result));
  }
}
