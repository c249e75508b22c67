import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import type { DataSource, FindOptionsSelect, Repository } from 'typeorm';
import { DELIVERY_STATES_SQL } from '../channels/channels.sql.js';
import { parseDateFilter } from '../common/date-range.js';
import { decodeCursor, encodeCursor } from '../common/pagination/cursor.js';
import { isUuid } from '../common/ids/uuid.js';
import { WorkflowsService } from '../workflows/workflows.service.js';
import type { ListExecutionsQuery } from './dto/list-executions.query.js';
import { ExecutionStep } from './entities/execution-step.entity.js';
import { TriggerExecution } from './entities/trigger-execution.entity.js';
import { WorkflowExecution, type ExecutionStatus } from './entities/workflow-execution.entity.js';
import { ExecutionListsRepository, type Keyed, type PageStart } from './execution-lists.repository.js';
import { ExecutionNotFoundError } from './executions.errors.js';

/** What list items and the detail view show: the engine's bookkeeping (state, waits) stays inside. */
const EXECUTION_COLUMNS: FindOptionsSelect<WorkflowExecution> = {
  id: true, workflowId: true, status: true, startedAt: true, completedAt: true, durationMs: true, customerRef: true,
  channel: true, input: true, output: true, workflowVersion: true, triggerId: true, retryOf: true,
};
/** A page of a cursor-walkable list: its rows, the total, and the `after` of the next page (null on the last). */
export type ListPage<T> = [T[], number, string | null];

/** `after` (decoded; 400 on field `after` when not a cursor) wins over `page`. */
function pageStart(query: ListExecutionsQuery): PageStart {
  return query.after !== undefined ? { after: decodeCursor(query.after) } : { offset: query.offset };
}

/** A full page has a next cursor (its last row's key), unless an offset page is known to end the list. */
function withCursor<T extends Keyed>(rows: T[], total: number, start: PageStart, limit: number): ListPage<T> {
  const last = rows[rows.length - 1];
  const more = rows.length === limit && (start.after !== undefined || start.offset + limit < total);
  return [rows, total, more && last ? encodeCursor({ micros: last.sortKey, id: last.id }) : null];
}

/**
 * The read side of executions: lists and details of workflow executions and trigger
 * executions. Every query is scoped by the caller's
 * organization; a parent (workflow) of another organization is 404 as if absent.
 * Trigger methods take a trigger id the caller already owns (TriggersService.getOwned): this
 * module cannot depend on the triggers module, which depends on it.
 */
@Injectable()
export class ExecutionsQueryService {
  constructor(
    @InjectRepository(WorkflowExecution) private readonly executions: Repository<WorkflowExecution>,
    @InjectRepository(ExecutionStep) private readonly steps: Repository<ExecutionStep>,
    @InjectRepository(TriggerExecution) private readonly triggerExecutions: Repository<TriggerExecution>,
    private readonly workflows: WorkflowsService,
    private readonly lists: ExecutionListsRepository,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /**
   * A workflow's executions, newest first (started_at, then id). The workflow's counters are
   * exact (each started execution counts in execution_count, each finished one in success_count
   * or failure_count, in the statement that writes it), so without a date range the total is read
   * from them; with one, the matches are counted.
   */
  async listWorkflowExecutions(organizationId: string, workflowId: string, query: ListExecutionsQuery): Promise<ListPage<WorkflowExecution>> {
    const workflow = await this.workflows.getOwned(organizationId, workflowId);
    const range = parseDateFilter(query);
    let knownTotal: number | null = null;
    if (!range.start && !range.end) {
      const finished = workflow.successCount + workflow.failureCount;
      knownTotal = {
        all: workflow.executionCount,
        success: workflow.successCount,
        failed: workflow.failureCount,
        running: workflow.executionCount - finished,
      }[query.status ?? 'all'];
    }
    const start = pageStart(query);
    const [rows, total] = await this.lists.workflowPage(organizationId, workflow.id, { status: query.status, range }, start, query.limit, knownTotal);
    return withCursor(rows, total, start, query.limit);
  }

  /** One execution of the workflow with its steps in the order they started. */
  async getWorkflowExecution(
    organizationId: string,
    workflowId: string,
    executionId: string,
  ): Promise<{ execution: WorkflowExecution; steps: ExecutionStep[] }> {
    const workflow = await this.workflows.getOwned(organizationId, workflowId);
    if (!isUuid(executionId)) throw new ExecutionNotFoundError();
    const execution = await this.executions.findOne({
      select: { ...EXECUTION_COLUMNS, error: true, channelAccountId: true },
      where: { id: executionId, workflowId: workflow.id, organizationId },
    });
    if (!execution) throw new ExecutionNotFoundError();
    const steps = await this.steps.find({ where: { executionId: execution.id }, order: { startedAt: 'ASC', createdAt: 'ASC', id: 'ASC' } });
    if (execution.channelAccountId) await this.withDeliveries(steps);
    return { execution, steps };
  }

  /**
   * The steps that sent through a channel account show where each message stands now:
   * `delivery_status` (queued, sending, sent, delivered, read, failed), the provider's message id
   * once it accepted it, and `delivery_error` {code, title} when it failed.
   */
  private async withDeliveries(steps: ExecutionStep[]): Promise<void> {
    const ids = steps.map((s) => s.output?.message_id).filter((id): id is string => typeof id === 'string' && isUuid(id));
    if (ids.length === 0) return;
    const rows = (await this.dataSource.query(DELIVERY_STATES_SQL, [ids])) as {
      message_id: string;
      status: string;
      error_code: string | null;
      error_title: string | null;
      provider_message_id: string | null;
    }[];
    const byId = new Map(rows.map((r) => [r.message_id, r]));
    for (const step of steps) {
      const delivery = byId.get(step.output?.message_id as string);
      if (!delivery) continue;
      step.output = {
        ...step.output,
        delivery_status: delivery.status,
        provider_message_id: delivery.provider_message_id,
        ...(delivery.error_code !== null ? { delivery_error: { code: delivery.error_code, title: delivery.error_title } } : {}),
      };
    }
  }

  /**
   * An owned trigger's executions, newest first (triggered_at, then id). The trigger's
   * execution_count counts every firing (accepted or refused) in the statement that records it,
   * so the unfiltered total is the caller's `executionCount`; filtered, the matches are counted.
   */
  async listTriggerExecutions(
    organizationId: string,
    trigger: { id: string; executionCount: number },
    query: ListExecutionsQuery,
  ): Promise<ListPage<TriggerExecution>> {
    const range = parseDateFilter(query);
    const knownTotal = !query.status && !range.start && !range.end ? trigger.executionCount : null;
    const start = pageStart(query);
    const [rows, total] = await this.lists.triggerPage(organizationId, trigger.id, { status: query.status, range }, start, query.limit, knownTotal);
    return withCursor(rows, total, start, query.limit);
  }

  /** One firing of an owned trigger, with the status of the workflow execution it started (null when none). */
  async getTriggerExecution(
    organizationId: string,
    triggerId: string,
    executionId: string,
  ): Promise<{ execution: TriggerExecution; workflowStatus: ExecutionStatus | null }> {
    if (!isUuid(executionId)) throw new ExecutionNotFoundError();
    const execution = await this.triggerExecutions.findOne({ where: { id: executionId, triggerId, organizationId } });
    if (!execution) throw new ExecutionNotFoundError();
    const workflowExecution = execution.workflowExecutionId
      ? await this.executions.findOne({ select: { id: true, status: true }, where: { id: execution.workflowExecutionId, organizationId } })
      : null;
    return { execution, workflowStatus: workflowExecution?.status ?? null };
  }
}
