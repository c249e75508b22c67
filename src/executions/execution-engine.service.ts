import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { isDatabaseUnavailable } from '../database/postgres-errors.js';
import { isRedisUnavailable } from '../redis/redis-errors.js';
import type { WorkflowNode } from '../workflows/node-types/node-type.js';
import { currentTraceparent, inSpan, tracingEnabled } from '../common/tracing/trace-context.js';
import { WorkflowsService } from '../workflows/workflows.service.js';
import { ChannelErrorCodes } from '../channels/channels.errors.js';
import { RedisService } from '../redis/redis.service.js';
import { ANSWERED_CHANNELS, ANSWERED_RUNS_CHANNEL } from './channels/answered-channels.js';
import { CHANNEL_ADAPTERS, type ChannelAdapters, type MessageTemplate } from './channels/channel-adapter.js';
import { ChannelSendDispatcher } from './channels/channel-send.dispatcher.js';
import type { ExecutionState, WorkflowExecution, ExecutionStatus } from './entities/workflow-execution.entity.js';
import { ExecutionErrorCodes } from './executions.errors.js';
import { NODE_HANDLERS, NodeFailure, TransientNodeError, type NodeContext, type NodeHandler, type NodeOutcome } from './nodes/node-handler.js';
import { RunWrites } from './run-writes.js';
import { RunsRepository, type LoadedExecution } from './runs.repository.js';

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

/** What a transition decided: its result, and whether it changed the execution (then it is committed). */
interface Decision {
  result: RunResult;
  changed: boolean;
}

/** WhatsApp and Instagram take free-form messages only this long after the customer's last message. */
export const REPLY_WINDOW_MS = 24 * 3_600_000;
/** Providers whose sends outside the window must be templates (the rest, such as voice, have no window). */
const WINDOWED_PROVIDERS = new Set(['whatsapp_cloud', 'instagram']);
const TEMPLATE_PROVIDERS = new Set(['whatsapp_cloud']);

/** Whether the customer's reply window is open on the account now (always, for a provider without one). */
function replyWindowOpen(account: { provider: string; lastInboundAt: Date | null }): boolean {
  return !WINDOWED_PROVIDERS.has(account.provider) || (account.lastInboundAt !== null && Date.now() - account.lastInboundAt.getTime() < REPLY_WINDOW_MS);
}

/** Commits lost to a concurrent change in a row before the job gives up (and Bull retries it). */
const MAX_CONFLICTS = 5;

/**
 * Runs an execution from its cursor until it finishes or waits for the customer. A run reads
 * the execution (with its unread replies), runs the nodes collecting every write — steps,
 * messages sent, customer updates, events, the new cursor — and commits them all in one
 * statement that applies only if the execution has not changed since it was read
 * (RunsRepository). So a worker killed mid-run leaves nothing behind and the retried job does the
 * same work once; of two concurrent runs of one execution one commits and the other starts over
 * from the new state (steps are also unique per execution and node).
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
    private readonly runs: RunsRepository,
    private readonly config: AppConfig,
    private readonly sends: ChannelSendDispatcher,
    private readonly redis: RedisService,
  ) {
    this.handlers = new Map(handlers.map((h) => [h.type, h]));
  }

  async run(executionId: string): Promise<RunResult> {
    return this.transition(executionId, async ({ execution, replies, account }, writes) => {
      if (execution.status !== 'running') return { result: { status: execution.status }, changed: false };
      // A duplicate job for a waiting execution with nothing new to read.
      if (execution.waiting && replies.length === 0) return { result: { status: 'running', waitsUntil: execution.waitExpiresAt ?? undefined }, changed: false };

      const configuration = await this.workflows.getVersion(execution.workflowId, execution.workflowVersion);
      if (!configuration) {
        return this.finish(execution, writes, 'failed', { code: ExecutionErrorCodes.workflowVersionMissing, message: 'The workflow version of this execution no longer exists' });
      }
      const nodes = new Map(configuration.nodes.map((n) => [n.id, n]));
      const state = { ...execution.state };
      const ctx = this.context(execution, state, replies, account, writes);

      // A firing leaves no cursor (it does not read the configuration): start at the first node.
      let node: WorkflowNode | undefined = state.cursor === undefined ? configuration.nodes[0] : nodes.get(state.cursor);
      state.cursor = node?.id;
      while (node) {
        const handler = this.handlers.get(node.type);
        const startedAt = new Date();
        // The context as it was before this node: a failed step leaves it so (a retry starts from it).
        const before = structuredClone(state);
        const { outcome, attempt } = await this.runNodeTraced(handler, { ...ctx, node }, writes, before);

        if (outcome.status === 'waiting') {
          execution.state = { ...state, cursor: node.id };
          execution.waiting = true;
          execution.waitExpiresAt = new Date(Date.now() + this.config.conversationTimeoutMs);
          return { result: { status: 'running', waitsUntil: execution.waitExpiresAt }, changed: true };
        }

        const stepStart = outcome.status === 'completed' && outcome.startedAt ? outcome.startedAt : startedAt;
        const completedAt = new Date();
        writes.steps.push({
          nodeId: node.id,
          type: node.type,
          status: outcome.status,
          startedAt: stepStart,
          completedAt,
          durationMs: storableDuration(completedAt.getTime() - stepStart.getTime()),
          input: outcome.input,
          output: outcome.output ?? (outcome.status === 'failed' ? { error: outcome.error } : {}),
          attempt,
        });

        if (outcome.status === 'failed') {
          execution.state = { ...before, cursor: node.id };
          return this.finish(execution, writes, 'failed', { ...outcome.error, node_id: node.id });
        }
        node = node.next ? nodes.get(node.next) : undefined;
        state.cursor = node?.id;
      }

      execution.state = { ...state, cursor: undefined };
      return this.finish(execution, writes, 'success', null);
    });
  }

  /**
   * Runs a node. Its own failure (NodeFailure) is a failed step at once. Any other error is taken
   * as transient (a provider outage, the database or network): what the attempt wrote and changed
   * is undone and the node is attempted again after a back-off (NODE_RETRY_BASE_DELAY_MS, doubled
   * each time), up to NODE_RETRY_ATTEMPTS in all; then it is a failed step that says how many.
   * The worker waits in between (a few seconds at most with the defaults): a crash loses only the
   * count, and the job is retried from the last commit. An error in the commit itself (the
   * database down) is not the node's: it is thrown, and Bull retries the job. So is PostgreSQL or
   * Redis still unreachable after the last attempt: an outage outlasting the node's back-off is the
   * job's to wait out (Bull's attempts and the sweep), not a reason to fail the customer's execution.
   */
  /** runNode in a span of its own when traces are on (ids, type and outcome only: no input or output). */
  private runNodeTraced(handler: NodeHandler | undefined, ctx: NodeContext, writes: RunWrites, before: ExecutionState): Promise<{ outcome: NodeOutcome; attempt: number }> {
    if (!tracingEnabled()) return this.runNode(handler, ctx, writes, before);
    return inSpan(`node ${ctx.node.type}`, { 'execution.id': ctx.execution.id, 'node.id': ctx.node.id, 'node.type': ctx.node.type }, async (span) => {
      const result = await this.runNode(handler, ctx, writes, before);
      span?.setAttributes({ 'node.status': result.outcome.status, 'node.attempt': result.attempt });
      return result;
    });
  }

  private async runNode(
    handler: NodeHandler | undefined,
    ctx: NodeContext,
    writes: RunWrites,
    /** A copy of ctx.state before the node's first attempt, to start each later one from. */
    before: ExecutionState,
  ): Promise<{ outcome: NodeOutcome; attempt: number }> {
    if (!handler) {
      return { outcome: { status: 'failed', input: {}, error: { code: ExecutionErrorCodes.nodeFailed, message: `No handler for node type ${ctx.node.type}` } }, attempt: 1 };
    }
    const { attempts, baseDelayMs } = this.config.nodeRetry;
    for (let attempt = 1; ; attempt += 1) {
      const mark = writes.mark();
      try {
        return { outcome: await handler.run(ctx), attempt };
      } catch (error) {
        if (error instanceof NodeFailure) return { outcome: { status: 'failed', input: {}, error: { code: error.code, message: error.message } }, attempt };
        writes.rollback(mark);
        for (const key of Object.keys(ctx.state)) delete ctx.state[key as keyof typeof ctx.state];
        Object.assign(ctx.state, structuredClone(before));
        const cause = error instanceof Error ? error.message : String(error);
        if (attempt >= attempts) {
          if (isDatabaseUnavailable(error) || isRedisUnavailable(error)) throw error;
          this.logger.warn(`Execution ${ctx.execution.id}: node ${ctx.node.id} failed transiently on each of ${attempt} attempts: ${cause}`);
          // A provider's message is written for clients; a driver's or a bug's is not (it stays in the log).
          const reason = error instanceof TransientNodeError ? error.message : 'a temporary error (database, network or an unexpected fault)';
          return {
            outcome: {
              status: 'failed',
              input: {},
              error: { code: ExecutionErrorCodes.nodeRetriesExhausted, message: `The node failed after ${attempt} attempts: ${reason}` },
            },
            attempt,
          };
        }
        const delay = baseDelayMs * 2 ** (attempt - 1);
        this.logger.log(`Execution ${ctx.execution.id}: node ${ctx.node.id} attempt ${attempt} failed (${cause}); again in ${delay} ms`);
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /**
   * Fails an execution whose wait for the customer has run out. Idempotent. Not while a reply is
   * waiting to be read: it arrived in time (its run job reads it).
   */
  async expire(executionId: string): Promise<RunResult> {
    return this.transition(executionId, async ({ execution, replies }, writes) => {
      if (execution.status !== 'running' || !execution.waiting) return { result: { status: execution.status }, changed: false };
      if (replies.length > 0) return { result: { status: 'running' }, changed: false };
      if (execution.waitExpiresAt && execution.waitExpiresAt.getTime() > Date.now()) {
        return { result: { status: 'running', waitsUntil: execution.waitExpiresAt }, changed: false };
      }
      return this.finish(execution, writes, 'failed', {
        code: ExecutionErrorCodes.conversationTimeout,
        message: 'The customer did not reply in time',
        node_id: execution.state.cursor,
      });
    });
  }

  /**
   * Ends a running or waiting execution as failed with EXECUTION_CANCELLED (POST .../cancel), as a
   * run would: one commit that applies only if the row is still as read, so a run in progress
   * meanwhile either commits first (then this decides again from its state) or finds the execution
   * failed when its own commit misses, and stops; a later job, expiry or reply finds it finished.
   * Returns false when the execution had already ended (or does not exist).
   */
  async cancel(executionId: string): Promise<boolean> {
    let cancelled = false;
    await this.transition(executionId, async ({ execution }, writes) => {
      // Decided again after a lost commit: only the decision that commits counts.
      cancelled = execution.status === 'running';
      if (!cancelled) return { result: { status: execution.status }, changed: false };
      return this.finish(execution, writes, 'failed', {
        code: ExecutionErrorCodes.cancelled,
        message: 'The execution was cancelled',
        ...(execution.state.cursor !== undefined ? { node_id: execution.state.cursor } : {}),
      });
    });
    return cancelled;
  }

  /**
   * Ends the customer's running executions (waiting or not) as failed with EXECUTION_HANDED_OFF: a
   * person took their conversation over. Each is a transition committed like `cancel` (conditional on
   * the row's version): a run in progress either commits first (then this decides again from its
   * state) or misses its own commit, finds the execution failed, and stops. Returns the ids it ended.
   */
  async handOff(organizationId: string, customerId: string): Promise<string[]> {
    const running: { id: string }[] = await this.dataSource.query(
      `SELECT id FROM workflow_executions WHERE customer_id = $1 AND organization_id = $2 AND status = 'running'`,
      [customerId, organizationId],
    );
    const ended: string[] = [];
    for (const { id } of running) {
      let handedOff = false;
      await this.transition(id, async ({ execution }, writes) => {
        // Decided again after a lost commit: only the decision that commits counts.
        handedOff = execution.status === 'running';
        if (!handedOff) return { result: { status: execution.status }, changed: false };
        return this.finish(execution, writes, 'failed', {
          code: ExecutionErrorCodes.handedOff,
          message: "A person took the customer's conversation over",
          ...(execution.state.cursor !== undefined ? { node_id: execution.state.cursor } : {}),
        });
      });
      if (handedOff) ended.push(id);
    }
    return ended;
  }

  /**
   * Ends a running or waiting execution of a phone call whose call ended (Twilio's terminal
   * CallStatus: completed, busy, no-answer, failed, canceled) as failed with CALL_ENDED, as cancel
   * does. False when it had already ended.
   */
  async endCall(executionId: string, callStatus: string): Promise<boolean> {
    let ended = false;
    await this.transition(executionId, async ({ execution }, writes) => {
      ended = execution.status === 'running';
      if (!ended) return { result: { status: execution.status }, changed: false };
      return this.finish(execution, writes, 'failed', {
        code: ExecutionErrorCodes.callEnded,
        message: `The call ended (${callStatus}) before the workflow did`,
        ...(execution.state.cursor !== undefined ? { node_id: execution.state.cursor } : {}),
      });
    });
    return ended;
  }

  /** Fails an execution whose run job kept failing (called after the last attempt). */
  async abandon(executionId: string, reason: string): Promise<void> {
    await this.transition(executionId, async ({ execution }, writes) => {
      if (execution.status !== 'running') return { result: { status: execution.status }, changed: false };
      return this.finish(execution, writes, 'failed', { code: ExecutionErrorCodes.nodeFailed, message: reason, node_id: execution.state.cursor });
    });
  }

  /**
   * Reads the execution, lets `decide` work out its next state and writes, and commits them if
   * the execution is still as read; if another run or an expiry changed it meanwhile, decides
   * again from the new state.
   */
  private async transition(executionId: string, decide: (loaded: LoadedExecution, writes: RunWrites) => Promise<Decision>): Promise<RunResult> {
    for (let attempt = 1; ; attempt += 1) {
      const loaded = await this.runs.load(executionId);
      if (!loaded) return { status: 'missing' };
      const writes = new RunWrites();
      // Traces on: the run's events carry its span's context to the webhook deliveries they cause.
      writes.traceparent = currentTraceparent();
      const { result, changed } = await decide(loaded, writes);
      if (!changed) return result;
      if (await this.runs.commit({ execution: loaded.execution, version: loaded.version, writes })) {
        const { execution } = loaded;
        // A run's messages go to one customer through one account: the first one's send queues the next.
        const first = writes.messages.find((m) => m.queued);
        if (first) await this.sends.dispatch([first.id]);
        if (execution.channelAccountId !== null && execution.channel !== null && ANSWERED_CHANNELS.has(execution.channel)) this.announce(execution.id);
        if (execution.status === 'failed') this.logger.warn(`Execution ${execution.id} failed: ${execution.error?.code} ${execution.error?.message}`);
        return result;
      }
      if (attempt === MAX_CONFLICTS) throw new Error(`Execution ${executionId} kept changing while it ran (${attempt} attempts)`);
    }
  }

  /**
   * Wakes the process holding the call's request (channels module, VoiceTurnWaiter). Not awaited, and
   * a lost announcement costs only time: the waiting request reads the state again at its timeout.
   */
  private announce(executionId: string): void {
    this.redis.publish(ANSWERED_RUNS_CHANNEL, executionId).catch((error: Error) => this.logger.warn(`Could not announce the run of ${executionId}: ${error.message}`));
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
    execution: WorkflowExecution,
    state: WorkflowExecution['state'],
    replies: { id: string; content: string }[],
    account: LoadedExecution['account'],
    writes: RunWrites,
  ): Omit<NodeContext, 'node'> {
    const adapter = (execution.channel && this.channels.get(execution.channel)) || this.channels.fallback;
    return {
      execution,
      state,
      nextReply: () => {
        // The replies read so far are the ones consumed: a node attempt undone makes its replies unread again.
        const reply = replies[writes.consumed.length];
        if (!reply) return undefined;
        writes.consumed.push(reply.id);
        state.lastMessage = reply.content;
        return reply.content;
      },
      send: async (content: string, options: { template?: MessageTemplate } = {}) => {
        if (!execution.customerId || !execution.customerRef) {
          throw new NodeFailure(ExecutionErrorCodes.noRecipient, 'This execution has no customer to send to (fire it with a customer_id)');
        }
        let template: MessageTemplate | undefined;
        // A call's messages are spoken while the caller is on the line: no reply window.
        if (execution.channelAccountId && !(execution.channel !== null && ANSWERED_CHANNELS.has(execution.channel))) {
          // The account as the run's load read it (null: deleted); the window as of this send.
          if (!account) throw new NodeFailure(ChannelErrorCodes.accountDeleted, 'The channel account this conversation replies through was deleted');
          if (!replyWindowOpen(account)) {
            if (!options.template || !TEMPLATE_PROVIDERS.has(account.provider)) {
              throw new NodeFailure(
                ChannelErrorCodes.windowClosed,
                options.template
                  ? 'The customer last wrote more than 24 hours ago, and this provider has no message templates'
                  : "The customer last wrote more than 24 hours ago: only a template may be sent (the message node's template)",
              );
            }
            template = options.template;
          }
        }
        const { messageId } = adapter.send(writes, {
          organizationId: execution.organizationId,
          customerId: execution.customerId,
          customerRef: execution.customerRef,
          channel: execution.channel ?? 'unknown',
          content,
          executionId: execution.id,
          nodeId: state.cursor ?? '',
          channelAccountId: execution.channelAccountId,
          template,
        });
        state.lastResponse = content;
        return { messageId };
      },
      updateCustomer: async (attributes) => {
        if (!execution.customerId || !execution.customerRef) return;
        writes.mergeCustomerAttributes(attributes);
        writes.events.push({
          organizationId: execution.organizationId,
          type: 'customer.updated',
          data: { customer_id: execution.customerRef, attributes, changed: Object.keys(attributes) },
        });
      },
    };
  }

  /**
   * Finishes the execution in the run's writes; the commit also completes its trigger execution
   * and counts it on the workflow (RunsRepository.commit).
   */
  private finish(execution: WorkflowExecution, writes: RunWrites, status: 'success' | 'failed', error: ExecutionError | null): Decision {
    const completedAt = new Date();
    const durationMs = storableDuration(completedAt.getTime() - execution.startedAt.getTime());
    execution.status = status;
    execution.waiting = false;
    execution.waitExpiresAt = null;
    execution.completedAt = completedAt;
    execution.durationMs = durationMs;
    execution.error = error;
    execution.output = { response: execution.state.lastResponse ?? null, next_action: status === 'success' ? 'end' : 'abort' };
    const data = {
      workflow_id: execution.workflowId,
      execution_id: execution.id,
      status,
      duration_ms: durationMs,
      customer_id: execution.customerRef,
      channel: execution.channel,
    };
    writes.events.push(
      { organizationId: execution.organizationId, type: 'workflow.completed', data },
      ...(status === 'failed' ? [{ organizationId: execution.organizationId, type: 'workflow.failed' as const, data: { ...data, error } }] : []),
    );
    return { result: { status }, changed: true };
  }
}

/**
 * The `duration_ms` columns are 32-bit: a duration saturates at their largest value (about 24.8 days)
 * instead of failing the commit forever. An execution can wait that long (CONVERSATION_TIMEOUT has no
 * upper bound), and one left running by a lost job is finished by the sweep however old it is.
 */
export const MAX_STORED_DURATION_MS = 2_147_483_647;
export function storableDuration(ms: number): number {
  return Math.min(Math.max(0, ms), MAX_STORED_DURATION_MS);
}
