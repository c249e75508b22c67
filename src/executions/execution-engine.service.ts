import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { row } from '../database/rows.js';
import { EventsService } from '../events/events.service.js';
import type { WorkflowNode } from '../workflows/node-types/node-type.js';
import { WorkflowsService } from '../workflows/workflows.service.js';
import { CHANNEL_ADAPTERS, type ChannelAdapters } from './channels/channel-adapter.js';
import { ConversationsService } from './conversations.service.js';
import { ExecutionStep } from './entities/execution-step.entity.js';
import { WorkflowExecution, type ExecutionStatus } from './entities/workflow-execution.entity.js';
import { ExecutionErrorCodes } from './executions.errors.js';
import { NODE_HANDLERS, NodeFailure, type NodeContext, type NodeHandler, type NodeOutcome } from './nodes/node-handler.js';

interface ExecutionError {
  code: string;
  message: string;
  node_id?: string;
}

/** What happened in one run, for the processor to act on after the commit. */
export interface RunResult {
  status: ExecutionStatus | 'missing';
  /** Set when the execution now waits for the customer until this time. */
  waitsUntil?: Date;
}

/**
 * Runs an execution from its cursor until it finishes or waits for the customer. One run is
 * one transaction holding the execution's row lock: every step, every message sent, every
 * customer update and the new cursor commit together, so a worker killed mid-run leaves
 * nothing behind and the retried job does the same work once (steps are unique per
 * execution and node).
 */
@Injectable()
export class ExecutionEngine {
  private readonly logger = new Logger(ExecutionEngine.name);
  private readonly handlers: ReadonlyMap<string, NodeHandler>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(NODE_HANDLERS) handlers: NodeHandler[],
    @Inject(CHANNEL_ADAPTERS) private readonly channels: ChannelAdapters,
    private readonly workflows: WorkflowsService,
    private readonly conversations: ConversationsService,
    private readonly events: EventsService,
    private readonly config: AppConfig,
  ) {
    this.handlers = new Map(handlers.map((h) => [h.type, h]));
  }

  async run(executionId: string): Promise<RunResult> {
    return this.dataSource.transaction(async (manager) => {
      const execution = await manager.getRepository(WorkflowExecution).findOne({ where: { id: executionId }, lock: { mode: 'pessimistic_write' } });
      if (!execution) return { status: 'missing' };
      if (execution.status !== 'running') return { status: execution.status };

      const replies: { id: string; content: string }[] = await manager.query(
        `SELECT id, content FROM messages WHERE execution_id = $1 AND direction = 'inbound' AND consumed_at IS NULL ORDER BY created_at, id`,
        [execution.id],
      );
      // A duplicate job for a waiting execution with nothing new to read.
      if (execution.waiting && replies.length === 0) return { status: 'running', waitsUntil: execution.waitExpiresAt ?? undefined };

      const configuration = await this.workflows.getVersion(execution.workflowId, execution.workflowVersion);
      if (!configuration) {
        return this.finish(manager, execution, 'failed', { code: ExecutionErrorCodes.workflowVersionMissing, message: 'The workflow version of this execution no longer exists' });
      }
      const nodes = new Map(configuration.nodes.map((n) => [n.id, n]));
      const consumed: string[] = [];
      const state = { ...execution.state };
      const ctx = this.context(manager, execution, state, replies, consumed);

      let node: WorkflowNode | undefined = state.cursor ? nodes.get(state.cursor) : undefined;
      while (node) {
        const handler = this.handlers.get(node.type);
        const startedAt = new Date();
        const outcome = await this.runNode(handler, { ...ctx, node });

        if (outcome.status === 'waiting') {
          await this.markConsumed(manager, consumed);
          execution.state = { ...state, cursor: node.id };
          execution.waiting = true;
          execution.waitExpiresAt = new Date(Date.now() + this.config.conversationTimeoutMs);
          await manager.getRepository(WorkflowExecution).save(execution);
          return { status: 'running', waitsUntil: execution.waitExpiresAt };
        }

        const stepStart = outcome.status === 'completed' && outcome.startedAt ? outcome.startedAt : startedAt;
        const completedAt = new Date();
        await manager
          .createQueryBuilder()
          .insert()
          .into(ExecutionStep)
          .values(
            row<ExecutionStep>({
              executionId: execution.id,
              nodeId: node.id,
              type: node.type,
              status: outcome.status,
              startedAt: stepStart,
              completedAt,
              durationMs: completedAt.getTime() - stepStart.getTime(),
              input: outcome.input,
              output: outcome.output ?? (outcome.status === 'failed' ? { error: outcome.error } : {}),
            }),
          )
          .orIgnore()
          .execute();

        if (outcome.status === 'failed') {
          await this.markConsumed(manager, consumed);
          execution.state = { ...state, cursor: node.id };
          return this.finish(manager, execution, 'failed', { ...outcome.error, node_id: node.id });
        }
        node = node.next ? nodes.get(node.next) : undefined;
        state.cursor = node?.id;
      }

      await this.markConsumed(manager, consumed);
      execution.state = { ...state, cursor: undefined };
      return this.finish(manager, execution, 'success', null);
    });
  }

  /** A node's own failure becomes a failed step; anything else (database, bugs) is thrown so the job retries. */
  private async runNode(handler: NodeHandler | undefined, ctx: NodeContext): Promise<NodeOutcome> {
    if (!handler) return { status: 'failed', input: {}, error: { code: ExecutionErrorCodes.nodeFailed, message: `No handler for node type ${ctx.node.type}` } };
    try {
      return await handler.run(ctx);
    } catch (error) {
      if (error instanceof NodeFailure) return { status: 'failed', input: {}, error: { code: error.code, message: error.message } };
      throw error;
    }
  }

  /** Fails an execution whose wait for the customer has run out. Idempotent. */
  async expire(executionId: string): Promise<RunResult> {
    return this.dataSource.transaction(async (manager) => {
      const execution = await manager.getRepository(WorkflowExecution).findOne({ where: { id: executionId }, lock: { mode: 'pessimistic_write' } });
      if (!execution) return { status: 'missing' };
      if (execution.status !== 'running' || !execution.waiting) return { status: execution.status };
      if (execution.waitExpiresAt && execution.waitExpiresAt.getTime() > Date.now()) {
        return { status: 'running', waitsUntil: execution.waitExpiresAt };
      }
      return this.finish(manager, execution, 'failed', {
        code: ExecutionErrorCodes.conversationTimeout,
        message: 'The customer did not reply in time',
        node_id: execution.state.cursor,
      });
    });
  }

  /** Fails an execution whose run job kept failing (called after the last attempt). */
  async abandon(executionId: string, reason: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const execution = await manager.getRepository(WorkflowExecution).findOne({ where: { id: executionId }, lock: { mode: 'pessimistic_write' } });
      if (!execution || execution.status !== 'running') return;
      await this.finish(manager, execution, 'failed', { code: ExecutionErrorCodes.nodeFailed, message: reason, node_id: execution.state.cursor });
    });
  }

  /** Executions to look at again: overdue waits, and running ones left without a job (lost enqueue, crash). */
  async findStale(staleAfterMs: number, limit = 500): Promise<{ expired: string[]; orphaned: string[] }> {
    const expired: { id: string }[] = await this.dataSource.query(
      `SELECT id FROM workflow_executions WHERE status = 'running' AND waiting AND wait_expires_at <= now() LIMIT $1`,
      [limit],
    );
    const orphaned: { id: string }[] = await this.dataSource.query(
      `SELECT e.id FROM workflow_executions e
        WHERE e.status = 'running' AND e.updated_at < now() - make_interval(secs => $1::double precision / 1000)
          AND (NOT e.waiting OR EXISTS (SELECT 1 FROM messages m WHERE m.execution_id = e.id AND m.direction = 'inbound' AND m.consumed_at IS NULL))
        LIMIT $2`,
      [staleAfterMs, limit],
    );
    return { expired: expired.map((r) => r.id), orphaned: orphaned.map((r) => r.id) };
  }

  private context(
    manager: EntityManager,
    execution: WorkflowExecution,
    state: WorkflowExecution['state'],
    replies: { id: string; content: string }[],
    consumed: string[],
  ): Omit<NodeContext, 'node'> {
    let next = 0;
    const adapter = (execution.channel && this.channels.get(execution.channel)) || this.channels.fallback;
    return {
      execution,
      state,
      nextReply: () => {
        const reply = replies[next];
        if (!reply) return undefined;
        next += 1;
        consumed.push(reply.id);
        state.lastMessage = reply.content;
        return reply.content;
      },
      send: async (content: string) => {
        if (!execution.customerId || !execution.customerRef) {
          throw new NodeFailure(ExecutionErrorCodes.noRecipient, 'This execution has no customer to send to (fire it with a customer_id)');
        }
        const message = await adapter.send(manager, {
          organizationId: execution.organizationId,
          customerId: execution.customerId,
          customerRef: execution.customerRef,
          channel: execution.channel ?? 'unknown',
          content,
          executionId: execution.id,
          nodeId: state.cursor ?? '',
        });
        state.lastResponse = content;
        return { messageId: message.id };
      },
      updateCustomer: async (attributes) => {
        if (!execution.customerId || !execution.customerRef) return;
        await this.conversations.updateAttributes(manager, execution.organizationId, execution.customerId, execution.customerRef, attributes);
      },
    };
  }

  private async markConsumed(manager: EntityManager, ids: string[]): Promise<void> {
    if (ids.length > 0) await manager.query(`UPDATE messages SET consumed_at = now() WHERE id = ANY($1::uuid[])`, [ids]);
  }

  private async finish(manager: EntityManager, execution: WorkflowExecution, status: 'success' | 'failed', error: ExecutionError | null): Promise<RunResult> {
    const completedAt = new Date();
    const durationMs = completedAt.getTime() - execution.startedAt.getTime();
    execution.status = status;
    execution.waiting = false;
    execution.waitExpiresAt = null;
    execution.completedAt = completedAt;
    execution.durationMs = durationMs;
    execution.error = error;
    execution.output = { response: execution.state.lastResponse ?? null, next_action: status === 'success' ? 'end' : 'abort' };
    await manager.getRepository(WorkflowExecution).save(execution);
    if (execution.triggerExecutionId) {
      await manager.query(
        `UPDATE trigger_executions SET status = $2, completed_at = $3,
                duration_ms = GREATEST(0, (EXTRACT(EPOCH FROM ($3::timestamptz - triggered_at)) * 1000)::int),
                error = $4::jsonb
          WHERE id = $1`,
        [execution.triggerExecutionId, status, completedAt, error ? JSON.stringify({ code: error.code, message: error.message }) : null],
      );
    }
    const data = {
      workflow_id: execution.workflowId,
      execution_id: execution.id,
      status,
      duration_ms: durationMs,
      customer_id: execution.customerRef,
      channel: execution.channel,
    };
    await this.events.record(
      manager,
      { organizationId: execution.organizationId, type: 'workflow.completed', data },
      ...(status === 'failed' ? [{ organizationId: execution.organizationId, type: 'workflow.failed' as const, data: { ...data, error } }] : []),
    );
    // Last, so the workflow's counter row is locked only for the end of the transaction.
    await this.workflows.recordExecutionFinished(manager, execution.workflowId, status === 'success');
    if (status === 'failed') this.logger.warn(`Execution ${execution.id} failed: ${error?.code} ${error?.message}`);
    return { status };
  }
}
