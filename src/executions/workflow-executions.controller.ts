import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../auth/access.js';
import { CurrentPrincipal, RequireAccess } from '../auth/decorators/access.decorators.js';
import { RateLimitClass } from '../rate-limits/rate-limit.decorators.js';
import { ApiData, ApiErrors, ApiPage } from '../common/http/api-docs.js';
import { ok } from '../common/http/envelope.js';
import { paginate } from '../common/pagination/page.query.js';
import { ListExecutionsQuery } from './dto/list-executions.query.js';
import { MetricsQuery } from './dto/metrics.query.js';
import { WorkflowMetricsResponse } from './dto/metrics.response.js';
import { WorkflowExecutionDetailResponse, WorkflowExecutionResponse } from './dto/workflow-execution.response.js';
import { ExecutionsQueryService } from './executions-query.service.js';
import { ExecutionMetricsService } from './metrics.service.js';

@ApiTags('Workflows')
@Controller('v1/workflows/:workflow_id')
export class WorkflowExecutionsController {
  constructor(
    private readonly executions: ExecutionsQueryService,
    private readonly metrics: ExecutionMetricsService,
  ) {}

  @Get('executions')
  @RequireAccess('executions', 'read')
  @RateLimitClass('workflows', 'execution')
  @ApiOperation({ summary: 'List a workflow\'s executions (without steps), newest first' })
  @ApiPage(WorkflowExecutionResponse)
  @ApiErrors(400, 404)
  async list(@CurrentPrincipal() principal: Principal, @Param('workflow_id') workflowId: string, @Query() query: ListExecutionsQuery) {
    const [items, total, nextCursor] = await this.executions.listWorkflowExecutions(principal.organizationId, workflowId, query);
    return paginate(items.map(WorkflowExecutionResponse.from), total, query, nextCursor);
  }

  @Get('executions/:execution_id')
  @RequireAccess('executions', 'read')
  @RateLimitClass('workflows', 'execution')
  @ApiOperation({ summary: 'Get a workflow execution with its steps and error' })
  @ApiData(WorkflowExecutionDetailResponse)
  @ApiErrors(404)
  async get(@CurrentPrincipal() principal: Principal, @Param('workflow_id') workflowId: string, @Param('execution_id') executionId: string) {
    const { execution, steps } = await this.executions.getWorkflowExecution(principal.organizationId, workflowId, executionId);
    return ok(WorkflowExecutionDetailResponse.from({ ...execution, steps }));
  }

  @Get('metrics')
  @RequireAccess('executions', 'read')
  @RateLimitClass('workflows', 'execution')
  @ApiOperation({ summary: 'Execution and message metrics of a workflow over a period (default: the last 30 days), per time bucket' })
  @ApiData(WorkflowMetricsResponse)
  @ApiErrors(400, 404, 422)
  async getMetrics(@CurrentPrincipal() principal: Principal, @Param('workflow_id') workflowId: string, @Query() query: MetricsQuery) {
    return ok(await this.metrics.forWorkflow(principal.organizationId, workflowId, query));
  }
}
