import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Principal } from '../auth/access.js';
import { CurrentPrincipal, RequireAccess } from '../auth/decorators/access.decorators.js';
import { RateLimitClass } from '../rate-limits/rate-limit.decorators.js';
import { ApiData, ApiErrors, ApiPage } from '../common/http/api-docs.js';
import { ok } from '../common/http/envelope.js';
import { paginate } from '../common/pagination/page.query.js';
import { ListExecutionsQuery } from './dto/list-executions.query.js';
import { MetricsQuery } from '../execution-metrics/dto/metrics.query.js';
import { WorkflowMetricsResponse } from '../execution-metrics/dto/metrics.response.js';
import { WorkflowExecutionDetailResponse, WorkflowExecutionResponse } from './dto/workflow-execution.response.js';
import { ExecutionOperationsService } from './execution-operations.service.js';
import { ExecutionsQueryService } from './executions-query.service.js';
import { ExecutionMetricsService } from '../execution-metrics/execution-metrics.service.js';

@ApiTags('Workflows')
@Controller('v1/workflows/:workflow_id')
export class WorkflowExecutionsController {
  constructor(
    private readonly executions: ExecutionsQueryService,
    private readonly metrics: ExecutionMetricsService,
    private readonly operations: ExecutionOperationsService,
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

  @Post('executions/:execution_id/retry')
  @HttpCode(201)
  @RequireAccess('executions', 'write')
  @RateLimitClass('workflows', 'execution')
  @ApiOperation({
    summary: 'Retry a failed execution: a new execution (retry_of = this one) from the step that failed',
    description:
      'Creates and queues a new execution linked to the failed one (`retry_of`). It runs the workflow version the original pinned, '
      + 'with its input, customer and channel, from the node that failed (or, for an expired or cancelled wait, the node that waited; '
      + 'a form there asks again from its first field), with the context as it was before that node. The workflow\'s status is not '
      + 'checked: the pinned version runs. An execution is retried at most once; retry the retry to try again. '
      + '404 WORKFLOW_NOT_FOUND / EXECUTION_NOT_FOUND (another organization\'s, another workflow\'s or a malformed id); '
      + '409 EXECUTION_NOT_RETRYABLE when the execution is running or succeeded, or was already retried.',
  })
  @ApiData(WorkflowExecutionDetailResponse, 201, 'Created: the new execution, running')
  @ApiErrors(404, 409)
  async retry(@CurrentPrincipal() principal: Principal, @Param('workflow_id') workflowId: string, @Param('execution_id') executionId: string) {
    const { execution, steps } = await this.operations.retry(principal.organizationId, workflowId, executionId);
    return ok(WorkflowExecutionDetailResponse.from({ ...execution, steps }));
  }

  @Post('executions/:execution_id/cancel')
  @HttpCode(200)
  @RequireAccess('executions', 'write')
  @RateLimitClass('workflows', 'execution')
  @ApiOperation({
    summary: 'Cancel a running or waiting execution: it ends failed with error EXECUTION_CANCELLED',
    description:
      'Ends the execution at once, as a failing run would (workflow.completed and workflow.failed events, the trigger execution and '
      + 'the workflow\'s counters). A run in progress does not commit over it, and a job, an expiry or a customer\'s reply arriving '
      + 'later does not resume it. 404 WORKFLOW_NOT_FOUND / EXECUTION_NOT_FOUND; 409 EXECUTION_ALREADY_FINISHED when it had already ended.',
  })
  @ApiData(WorkflowExecutionDetailResponse, 200, 'The cancelled execution')
  @ApiErrors(404, 409)
  async cancel(@CurrentPrincipal() principal: Principal, @Param('workflow_id') workflowId: string, @Param('execution_id') executionId: string) {
    const { execution, steps } = await this.operations.cancel(principal.organizationId, workflowId, executionId);
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
