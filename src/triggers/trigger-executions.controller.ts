import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../auth/access.js';
import { CurrentPrincipal, RequireAccess } from '../auth/decorators/access.decorators.js';
import { RateLimitClass } from '../rate-limits/rate-limit.decorators.js';
import { ApiData, ApiErrors, ApiPage } from '../common/http/api-docs.js';
import { ok } from '../common/http/envelope.js';
import { paginate } from '../common/pagination/page.query.js';
import { ListExecutionsQuery } from '../executions/dto/list-executions.query.js';
import { MetricsQuery } from '../execution-metrics/dto/metrics.query.js';
import { TriggerMetricsResponse } from '../execution-metrics/dto/metrics.response.js';
import { TriggerExecutionDetailResponse, TriggerExecutionResponse } from '../executions/dto/trigger-execution.response.js';
import { ExecutionsQueryService } from '../executions/executions-query.service.js';
import { ExecutionMetricsService } from '../execution-metrics/execution-metrics.service.js';
import { TriggersService } from './triggers.service.js';

/** Ownership comes from TriggersService; the reads from the executions module, which owns those tables. */
@ApiTags('Triggers')
@Controller('v1/triggers/:trigger_id')
export class TriggerExecutionsController {
  constructor(
    private readonly triggers: TriggersService,
    private readonly executions: ExecutionsQueryService,
    private readonly metrics: ExecutionMetricsService,
  ) {}

  @Get('executions')
  @RequireAccess('executions', 'read')
  @RateLimitClass('triggers', 'execution')
  @ApiOperation({ summary: 'List a trigger\'s firings (input without metadata), newest first' })
  @ApiPage(TriggerExecutionResponse)
  @ApiErrors(400, 404)
  async list(@CurrentPrincipal() principal: Principal, @Param('trigger_id') triggerId: string, @Query() query: ListExecutionsQuery) {
    const trigger = await this.triggers.getOwned(principal.organizationId, triggerId);
    const [items, total, nextCursor] = await this.executions.listTriggerExecutions(principal.organizationId, trigger, query);
    return paginate(items.map(TriggerExecutionResponse.from), total, query, nextCursor);
  }

  @Get('executions/:execution_id')
  @RequireAccess('executions', 'read')
  @RateLimitClass('triggers', 'execution')
  @ApiOperation({ summary: 'Get a trigger firing with its metadata, the workflow execution\'s status and its error' })
  @ApiData(TriggerExecutionDetailResponse)
  @ApiErrors(404)
  async get(@CurrentPrincipal() principal: Principal, @Param('trigger_id') triggerId: string, @Param('execution_id') executionId: string) {
    const trigger = await this.triggers.getOwned(principal.organizationId, triggerId);
    const { execution, workflowStatus } = await this.executions.getTriggerExecution(principal.organizationId, trigger.id, executionId);
    return ok(TriggerExecutionDetailResponse.from(execution, workflowStatus));
  }

  @Get('metrics')
  @RequireAccess('executions', 'read')
  @RateLimitClass('triggers', 'execution')
  @ApiOperation({ summary: 'Firing metrics of a trigger over a period (default: the last 30 days), per time bucket' })
  @ApiData(TriggerMetricsResponse)
  @ApiErrors(400, 404, 422)
  async getMetrics(@CurrentPrincipal() principal: Principal, @Param('trigger_id') triggerId: string, @Query() query: MetricsQuery) {
    const trigger = await this.triggers.getOwned(principal.organizationId, triggerId);
    return ok(await this.metrics.forTrigger(principal.organizationId, trigger.id, query));
  }
}
