import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { row } from '../database/rows.js';
import { EventsService } from '../events/events.service.js';
import { WorkflowsService } from '../workflows/workflows.service.js';
import { ConversationsService } from './conversations.service.js';
import { TriggerExecution } from './entities/trigger-execution.entity.js';
import { WorkflowExecution } from './entities/workflow-execution.entity.js';
import { ExecutionErrorCodes } from './executions.errors.js';
import { EXECUTIONS_QUEUE, ExecutionJobs, type RunJob } from './executions.queue.js';
import type { FireInput, FireResult } from './fire.types.js';

/** Attempts of a run job before the execution is failed; runs are idempotent, so retrying is safe. */
export const RUN_ATTEMPTS = 5;

/**
 * Starts executions. A firing writes the trigger execution and the workflow execution in one
 * transaction (with the caller's own writes, such as the trigger's counters), then enqueues
 * the run. If the enqueue is lost (Redis down, crash), the engine's sweep finds the running
 * execution and enqueues it again.
 */
@Injectable()
export class ExecutionsService {
  private readonly logger = new Logger(ExecutionsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectQueue(EXECUTIONS_QUEUE) private readonly queue: Queue,
    private readonly workflows: WorkflowsService,
    private readonly conversations: ConversationsService,
    private readonly events: EventsService,
  ) {}

  async fire(input: FireInput, alsoInTransaction?: (manager: EntityManager) => Promise<void>): Promise<FireResult> {
    const result = await this.dataSource.transaction(async (manager) => {
      const started = await this.startInTransaction(manager, input);
      // Last, so a hot row the caller updates (the trigger's counters) is locked only briefly.
      await alsoInTransaction?.(manager);
      return started;
    });
    if (result.workflowExecutionId) await this.enqueue(result.workflowExecutionId);
    return result;
  }

  /** Queues a run of the execution (first run, or after a reply was routed to it). */
  async enqueue(executionId: string): Promise<void> {
    try {
      await this.queue.add(ExecutionJobs.run, { executionId } satisfies RunJob, {
        attempts: RUN_ATTEMPTS,
        backoff: { type: 'exponential', delay: 500 },
        removeOnComplete: true,
        removeOnFail: 1000,
      });
    } catch (error) {
      // The execution is committed as running; the sweep will enqueue it once Redis answers.
      this.logger.error(`Could not enqueue execution ${executionId}; the sweep will retry: ${(error as Error).message}`);
    }
  }

  private async startInTransaction(manager: EntityManager, input: FireInput): Promise<FireResult> {
    const now = new Date();
    const triggerExecutionId = randomUUID();
    const triggerInput = {
      message: input.message ?? null,
      customer_id: input.customerRef ?? null,
      channel: input.channel ?? null,
      ...(input.data !== undefined ? { data: input.data } : {}),
      metadata: input.metadata,
    };
    const triggerExecutions = manager.getRepository(TriggerExecution);

    const workflow = await this.workflows.getRunnable(manager, input.organizationId, input.workflowId);
    const refusal =
      input.refusal ??
      (!workflow || workflow.status !== 'active'
        ? { code: ExecutionErrorCodes.workflowInactive, message: 'The workflow is not active' }
        : undefined);
    if (refusal || !workflow) {
      const error = refusal ?? { code: ExecutionErrorCodes.workflowInactive, message: 'The workflow is not active' };
      await triggerExecutions.insert(row<TriggerExecution>({
        id: triggerExecutionId,
        organizationId: input.organizationId,
        triggerId: input.triggerId,
        workflowId: input.workflowId,
        workflowExecutionId: null,
        status: 'failed',
        input: triggerInput,
        error,
        triggeredAt: now,
        completedAt: now,
        durationMs: 0,
      }));
      return { triggerId: input.triggerId, triggerExecutionId, workflowExecutionId: null, status: 'failed', error };
    }

    const channel = input.channel ?? workflow.channel ?? null;
    const customer = input.customerRef
      ? await this.conversations.upsertCustomer(manager, input.organizationId, input.customerRef, channel)
      : null;
    const configuration = await this.workflows.getVersion(workflow.id, workflow.version);
    const executionId = randomUUID();
    await manager.getRepository(WorkflowExecution).insert(row<WorkflowExecution>({
      id: executionId,
      organizationId: input.organizationId,
      workflowId: workflow.id,
      workflowVersion: workflow.version,
      triggerId: input.triggerId,
      triggerExecutionId,
      customerId: customer?.id ?? null,
      customerRef: input.customerRef ?? null,
      channel,
      status: 'running',
      input: { message: input.message ?? null, ...(input.data !== undefined ? { data: input.data } : {}) },
      state: { cursor: configuration?.nodes[0]?.id, lastMessage: input.message ?? undefined },
      startedAt: now,
    }));
    await triggerExecutions.insert(row<TriggerExecution>({
      id: triggerExecutionId,
      organizationId: input.organizationId,
      triggerId: input.triggerId,
      workflowId: workflow.id,
      workflowExecutionId: executionId,
      status: 'running',
      input: triggerInput,
      error: null,
      triggeredAt: now,
    }));
    await this.workflows.recordExecutionStarted(manager, workflow.id);
    await this.events.record(
      manager,
      {
        organizationId: input.organizationId,
        type: 'trigger.activated',
        data: { trigger_id: input.triggerId, trigger_execution_id: triggerExecutionId, workflow_id: workflow.id, workflow_execution_id: executionId },
      },
      {
        organizationId: input.organizationId,
        type: 'workflow.started',
        data: { workflow_id: workflow.id, execution_id: executionId, customer_id: input.customerRef ?? null, channel, trigger_id: input.triggerId },
      },
    );
    return { triggerId: input.triggerId, triggerExecutionId, workflowExecutionId: executionId, status: 'running', error: null };
  }
}
