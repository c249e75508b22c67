import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiExtraModels, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../auth/access.js';
import { CurrentPrincipal, RequireAccess } from '../auth/decorators/access.decorators.js';
import { ApiData, ApiErrors, ApiPage } from '../common/http/api-docs.js';
import { ok } from '../common/http/envelope.js';
import { paginate } from '../common/pagination/page.query.js';
import { AnalyticsService } from './analytics.service.js';
import { EngagementQuery, JourneyQuery, PerformanceQuery, RealtimeQuery, WorkflowAnalyticsQuery, WorkflowListQuery } from './dto/analytics.query.js';
import {
  ChannelEngagementResponse,
  ChannelPerformanceResponse,
  EngagementResponse,
  GroupFigures,
  JourneyResponse,
  PerformanceResponse,
  RealtimeChannelMetrics,
  RealtimeResponse,
  WorkflowAnalyticsResponse,
  WorkflowSummaryAnalytics,
  PERCENTILE_BOUND,
} from './dto/analytics.response.js';
import { RateLimitClass } from '../rate-limits/rate-limit.decorators.js';

@ApiTags('Analytics')
@ApiExtraModels(GroupFigures, ChannelPerformanceResponse, ChannelEngagementResponse, RealtimeChannelMetrics)
@Controller('v1/analytics')
export class AnalyticsController {
  constructor(private readonly analytics: AnalyticsService) {}

  @Get('workflows')
  @RequireAccess('analytics', 'read')
  @RateLimitClass('analytics', 'historical')
  @ApiOperation({ summary: 'Summary metrics of every workflow over a period (default: the last 30 days), sortable by executions or success_rate' })
  @ApiPage(WorkflowSummaryAnalytics)
  @ApiErrors(400)
  async listWorkflows(@CurrentPrincipal() principal: Principal, @Query() query: WorkflowListQuery) {
    const { items, total } = await this.analytics.workflowList(principal.organizationId, query);
    return paginate(items, total, query);
  }

  @Get('workflows/:workflow_id')
  @RequireAccess('analytics', 'read')
  @RateLimitClass('analytics', 'historical')
  @ApiOperation({ summary: 'Metrics, trends and per-bucket figures of a workflow over a period (default: the last 30 days)' })
  @ApiData(WorkflowAnalyticsResponse)
  @ApiErrors(400, 404, 422)
  async workflow(@CurrentPrincipal() principal: Principal, @Param('workflow_id') workflowId: string, @Query() query: WorkflowAnalyticsQuery) {
    return ok(await this.analytics.workflow(principal.organizationId, workflowId, query));
  }

  @Get('workflows/:workflow_id/performance')
  @RequireAccess('analytics', 'read')
  @RateLimitClass('analytics', 'historical')
  @ApiOperation({
    summary: 'Execution times (percentiles within 0.9901 %), throughput, error rate by error code, node and channel performance of a workflow',
    description:
      'average_ms, counts, error rates (by the recorded error code, `UNKNOWN` without one), peak hour and channel figures are exact. ' +
      `median_ms, p95_ms, p99_ms: ${PERCENTILE_BOUND} ` +
      'The whole UTC days of the period come from daily rollups and its partial days from the executions themselves; peak_hour (the busiest local ' +
      'clock hour) comes from hourly rollups when the zone\'s offsets over the period are whole hours, else (e.g. Asia/Kolkata) from every execution of the period (slower).',
  })
  @ApiData(PerformanceResponse)
  @ApiErrors(400, 404)
  async performance(@CurrentPrincipal() principal: Principal, @Param('workflow_id') workflowId: string, @Query() query: PerformanceQuery) {
    return ok(await this.analytics.performance(principal.organizationId, workflowId, query));
  }

  @Get('customers/engagement')
  @RequireAccess('analytics', 'read')
  @RateLimitClass('analytics', 'historical')
  @ApiOperation({ summary: 'Customer activity, sessions (messages with gaps under 30 minutes), satisfaction and NPS over a period' })
  @ApiData(EngagementResponse)
  @ApiErrors(400)
  async engagement(@CurrentPrincipal() principal: Principal, @Query() query: EngagementQuery) {
    return ok(await this.analytics.engagement(principal.organizationId, query));
  }

  @Get('customers/journey')
  @RequireAccess('analytics', 'read')
  @RateLimitClass('analytics', 'historical')
  @ApiOperation({ summary: 'How far the journeys (executions) of a workflow got along its nodes, and where and why they dropped off' })
  @ApiData(JourneyResponse)
  @ApiErrors(400, 404)
  async journey(@CurrentPrincipal() principal: Principal, @Query() query: JourneyQuery) {
    return ok(await this.analytics.journey(principal.organizationId, query));
  }

  @Get('realtime')
  @RequireAccess('analytics', 'read')
  @RateLimitClass('analytics', 'realtime')
  @ApiOperation({ summary: 'The last hour and now: running executions, messages, response times, system health and readings' })
  @ApiData(RealtimeResponse)
  @ApiErrors(400)
  async realtime(@CurrentPrincipal() principal: Principal, @Query() query: RealtimeQuery) {
    return ok(await this.analytics.realtime(principal.organizationId, query));
  }
}
