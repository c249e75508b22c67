import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { isUuid } from '../common/ids/uuid.js';
import { uuidv7 } from '../common/ids/uuid-v7.js';
import { WorkflowsService } from '../workflows/workflows.service.js';
import { countWorkflowStarts } from '../workflows/workflows.sql.js';
import { insertOutboxEvents } from '../events/outbox.sql.js';
import type { ExecutionStep } from './entities/execution-step.entity.js';
import type { WorkflowExecution } from './entities/workflow-execution.entity.js';
import { ExecutionEngine } from './execution-engine.service.js';
import { ExecutionAlreadyFinishedError, ExecutionNotFoundError, ExecutionNotRetryableError } from './executions.errors.js';
import { ExecutionsQueryService } from './executions-query.service.js';
import { ExecutionsService } from './executions.service.js';

/**
 * A retry in one statement: the new execution (running, on the original's pinned version, with its
 * input, customer and channel, its state as the failed step left it — the cursor on that step, the
 * context before it, without a form's progress, which restarts), the workflow's execution_count and
 * the `workflow.started` event. Only of a failed execution of the caller's workflow, and only once:
 * the retry claims the original's key in workflow_execution_retries first (its primary key; of two
 * concurrent retries, the second waits for the first and inserts nothing). The executions are
 * partitioned by month, so a unique index on their retry_of is not possible.
 */
const RETRY = `
  WITH original AS (
    SELECT id, organization_id, workflow_id, workflow_version, trigger_id, customer_id, customer_ref, channel, input, state
      FROM workflow_executions
     WHERE id = $1 AND organization_id = $2 AND workflow_id = $3 AND status = 'failed'
  ), claim AS (
    INSERT INTO workflow_execution_retries (retry_of, execution_id) SELECT id, $4 FROM original
    ON CONFLICT (retry_of) DO NOTHING
    RETURNING retry_of
  ), retry AS (
    INSERT INTO workflow_executions
      (id, organization_id, workflow_id, workflow_version, trigger_id, customer_id, customer_ref, channel, status, input, state, started_at, retry_of)
    SELECT $4, o.organization_id, o.workflow_id, o.workflow_version, o.trigger_id, o.customer_id, o.customer_ref, o.channel, 'running', o.input, o.state - 'form', $5, o.id
      FROM original o JOIN claim c ON c.retry_of = o.id
    RETURNING id, organization_id, workflow_id, trigger_id, customer_ref, channel, retry_of
  ), counted AS (
    ${countWorkflowStarts('SELECT workflow_id, 1 AS started FROM retry')}
  ), events AS (
    ${insertOutboxEvents(`
    SELECT organization_id, 'workflow.started',
           jsonb_build_object('workflow_id', workflow_id, 'execution_id', id, 'customer_id', customer_ref, 'trigger_id', trigger_id,
                              'channel', channel, 'retry_of', retry_of)
      FROM retry`)}
  )
  SELECT id FROM retry`;

/**
 * Operations on one execution (docs/DECISIONS.md, "Execution engine", "Retry and cancel"): retry a failed one as a new, linked
 * execution from the step that failed; cancel a running or waiting one. Every read is scoped by
 * the caller's organization and the workflow of the path; anything else is 404 as if absent.
 */
@Injectable()
export class ExecutionOperationsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly workflows: WorkflowsService,
    private readonly engine: ExecutionEngine,
    private readonly executions: ExecutionsService,
    private readonly queries: ExecutionsQueryService,
  ) {}

  /**
   * Starts a new execution that re-runs a failed one from its failed step (see RETRY) and queues
   * its run. 409 EXECUTION_NOT_RETRYABLE when the execution is running or succeeded, or was
   * already retried (the message names the retry).
   */
  async retry(organizationId: string, workflowId: string, executionId: string): Promise<{ execution: WorkflowExecution; steps: ExecutionStep[] }> {
    const workflow = await this.workflows.getOwned(organizationId, workflowId);
    if (!isUuid(executionId)) throw new ExecutionNotFoundError();
    const id = uuidv7();
    const inserted: { id: string }[] = await this.dataSource.query(RETRY, [executionId, organizationId, workflow.id, id, new Date()]);
    if (inserted.length === 0) {
      const [original]: { status: string; retried_by: string | null }[] = await this.dataSource.query(
        `SELECT status, (SELECT execution_id FROM workflow_execution_retries WHERE retry_of = $1) AS retried_by
           FROM workflow_executions WHERE id = $1 AND organization_id = $2 AND workflow_id = $3`,
        [executionId, organizationId, workflow.id],
      );
      if (!original) throw new ExecutionNotFoundError();
      if (original.retried_by) throw new ExecutionNotRetryableError(`The execution was already retried by execution ${original.retried_by}`);
      throw new ExecutionNotRetryableError(`Only a failed execution can be retried (this one is ${original.status})`);
    }
    await this.executions.enqueue(id);
    return this.queries.getWorkflowExecution(organizationId, workflow.id, id);
  }

  /**
   * Ends a running or waiting execution as failed with EXECUTION_CANCELLED (ExecutionEngine.cancel:
   * the same conditional commit as a run, with its events, trigger execution and counters). 409
   * EXECUTION_ALREADY_FINISHED when it had already ended.
   */
  async cancel(organizationId: string, workflowId: string, executionId: string): Promise<{ execution: WorkflowExecution; steps: ExecutionStep[] }> {
    const { execution } = await this.queries.getWorkflowExecution(organizationId, workflowId, executionId);
    if (!(await this.engine.cancel(execution.id))) {
      const { execution: ended } = await this.queries.getWorkflowExecution(organizationId, workflowId, executionId);
      throw new ExecutionAlreadyFinishedError(ended.status);
    }
    return this.queries.getWorkflowExecution(organizationId, workflowId, executionId);
  }
}
