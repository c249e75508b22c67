import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { JobOptions, Queue } from 'bull';
import type { DataSource } from 'typeorm';
import { Batcher } from '../common/batcher.js';
import { currentTraceparent, inSpan, SpanKind, tracingEnabled } from '../common/tracing/trace-context.js';
import { ExecutionErrorCodes } from './executions.errors.js';
import { EXECUTIONS_QUEUE, ExecutionJobs, type RunJob } from './executions.queue.js';
import type { FireInput, FireResult } from './fire.types.js';
import type { ExecutionStatus } from './entities/workflow-execution.entity.js';
import { SqlStatement } from '../database/sql-statement.js';
import { RedisUnavailableError, withRedisDeadline } from '../redis/redis-errors.js';
import { uuidv7 } from '../common/ids/uuid-v7.js';
import { insertOutboxEvents } from '../events/outbox.sql.js';
import { countRefusedFiring, countTriggerFirings } from '../triggers/triggers.sql.js';
import { countWorkflowStarts, workflowToFire } from '../workflows/workflows.sql.js';

/** How long adding run jobs may wait on Redis before the request goes on without (see enqueue). */
const ENQUEUE_DEADLINE_MS = 1000;
/** How often runs that could not be queued are tried again while Redis is down. */
const REQUEUE_EVERY_MS = 1000;

/** Attempts of a run job before the execution is failed; runs are idempotent, so retrying is safe. */
export const RUN_ATTEMPTS = 5;

const RUN_JOB_OPTIONS: JobOptions = {
  attempts: RUN_ATTEMPTS,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: true,
  removeOnFail: 1000,
};

/**
 * Firings as one statement (an implicit transaction, one round trip). For each firing whose
 * workflow is active (read in the same statement, so the check and the version pinned see the
 * same snapshot as the insert), it writes the workflow execution and the trigger execution, the
 * customer (unless the caller has just stored it), the events, and the workflow's and the
 * trigger's counters; it returns the executions it started (a firing left out was refused).
 * Every firing of a workflow updates the same two counter rows, whose row locks last until the
 * commit: inside one statement, and once for all the firings sharing it (see Batcher), rather
 * than once per firing and across round trips to a busy process, which serialised every firing
 * (and finishing run) of the workflow behind them. A batch never holds two firings that would
 * upsert the same customer (one INSERT cannot update a row twice).
 */
const START = new SqlStatement<{ execution_id: string }>(
  `
  WITH firing AS (
    SELECT f.*, w.version, COALESCE(f.channel, w.channel) AS resolved_channel
      FROM jsonb_to_recordset($1::jsonb) AS f(
             execution_id uuid, trigger_execution_id uuid, organization_id uuid, trigger_id uuid, workflow_id uuid, customer_ref varchar,
             customer_id uuid, channel varchar, channel_account_id uuid, input jsonb, state jsonb, trigger_input jsonb, started_at timestamptz,
             activated_event jsonb, started_event jsonb, customer_event jsonb)
      -- Each firing's workflow by primary key (the other conditions outside, so that no other
      -- index looks better): planned as a plain join, a scan of the whole table could win (the
      -- JSON input counts as 100 rows) and stay cached with the named statement.
      CROSS JOIN LATERAL ${workflowToFire('f.workflow_id')} w
     WHERE w.organization_id = f.organization_id AND w.status = 'active'
  ), upserted AS (
    INSERT INTO customers (organization_id, external_id, channel, first_seen_at, last_seen_at)
    SELECT organization_id, customer_ref, resolved_channel, now(), now() FROM firing WHERE customer_ref IS NOT NULL AND customer_id IS NULL
    ON CONFLICT (organization_id, external_id) DO UPDATE
      SET last_seen_at = now(), channel = COALESCE(EXCLUDED.channel, customers.channel), updated_at = now()
    RETURNING id, organization_id, external_id, (xmax = 0) AS inserted
  ), customer AS (
    SELECT f.execution_id, COALESCE(f.customer_id, u.id) AS id, COALESCE(u.inserted, false) AS inserted
      FROM firing f
      LEFT JOIN upserted u ON f.customer_id IS NULL AND u.organization_id = f.organization_id AND u.external_id = f.customer_ref
  ), execution AS (
    INSERT INTO workflow_executions
      (id, organization_id, workflow_id, workflow_version, trigger_id, trigger_execution_id, customer_id, customer_ref, channel, channel_account_id,
       status, input, state, started_at)
    SELECT f.execution_id, f.organization_id, f.workflow_id, f.version, f.trigger_id, f.trigger_execution_id, c.id, f.customer_ref,
           f.resolved_channel, f.channel_account_id, 'running', f.input, f.state, f.started_at
      FROM firing f JOIN customer c ON c.execution_id = f.execution_id
  ), trigger_execution AS (
    INSERT INTO trigger_executions (id, organization_id, trigger_id, workflow_id, workflow_execution_id, status, input, triggered_at)
    SELECT f.trigger_execution_id, f.organization_id, f.trigger_id, f.workflow_id, f.execution_id, 'running', f.trigger_input, f.started_at
      FROM firing f WHERE f.trigger_id IS NOT NULL
  ), events AS (
    ${insertOutboxEvents(`
    SELECT f.organization_id, 'customer.created', f.customer_event || jsonb_build_object('channel', f.resolved_channel)
      FROM firing f JOIN customer c ON c.execution_id = f.execution_id WHERE c.inserted
    UNION ALL
    SELECT f.organization_id, 'trigger.activated', f.activated_event FROM firing f WHERE f.trigger_id IS NOT NULL
    UNION ALL
    SELECT f.organization_id, 'workflow.started', f.started_event || jsonb_build_object('channel', f.resolved_channel) FROM firing f`)}
  ), workflow_counted AS (
    ${countWorkflowStarts('SELECT workflow_id, count(*)::int AS started FROM firing GROUP BY workflow_id ORDER BY workflow_id')}
  ), trigger_counted AS (
    ${countTriggerFirings('SELECT trigger_id, count(*)::int AS started FROM firing WHERE trigger_id IS NOT NULL GROUP BY trigger_id ORDER BY trigger_id')}
  )
  SELECT execution_id FROM firing`,
  { prepareAs: 'executions.start' },
);

/**
 * Where an execution stands for a call's next turn (ExecutionsService.conversationTurn). Named, with the id as
 * `(SELECT $1::uuid)` so that the planner does not prune the months' partitions while planning: with the value
 * in sight, every plan made for a call looked cheaper than the generic one, and the statement was planned anew
 * at each turn (0.8 ms, seven times its running time).
 */
const CONVERSATION_TURN = new SqlStatement<{ status: ExecutionStatus; waiting: boolean; replies_pending: boolean; said: { content: string; at: string }[] }>(
  `
  SELECT e.status, e.waiting,
         EXISTS (SELECT 1 FROM messages m WHERE m.execution_id = e.id AND m.direction = 'inbound' AND m.consumed_at IS NULL) AS replies_pending,
         COALESCE((SELECT json_agg(json_build_object('content', m.content, 'at', m.created_at) ORDER BY m.created_at, m.id)
                     FROM messages m
                    WHERE m.execution_id = e.id AND m.direction = 'outbound' AND ($3::timestamptz IS NULL OR m.created_at > $3::timestamptz)), '[]'::json) AS said
    FROM workflow_executions e
   WHERE e.id = (SELECT $1::uuid) AND e.organization_id = $2`,
  { prepareAs: 'executions.conversation-turn' },
);

/** A firing about to be started, as the start statement reads it. */
interface Firing {
  execution_id: string;
  trigger_execution_id: string | null;
  organization_id: string;
  trigger_id: string | null;
  workflow_id: string;
  customer_ref: string | null;
  customer_id: string | null;
  channel: string | null;
  channel_account_id: string | null;
  input: Record<string, unknown>;
  state: Record<string, unknown>;
  trigger_input: Record<string, unknown>;
  started_at: Date;
  activated_event: Record<string, unknown>;
  started_event: Record<string, unknown>;
  customer_event: Record<string, unknown>;
}

/** A refused firing: a failed trigger execution, still counted on the trigger (one statement, as above). */
const REFUSE = new SqlStatement(
  `
  WITH trigger_execution AS (
    INSERT INTO trigger_executions (id, organization_id, trigger_id, workflow_id, workflow_execution_id, status, input, error, triggered_at, completed_at, duration_ms)
    VALUES ($1::uuid, $2::uuid, $3::uuid, $4::uuid, NULL, 'failed', $5::jsonb, $6::jsonb, $7::timestamptz, $7::timestamptz, 0)
  )
  ${countRefusedFiring('$3::uuid')}`,
  { prepareAs: 'executions.refuse' },
);

/**
 * Starts executions. A firing writes the trigger execution and the workflow execution, the
 * workflow's and the trigger's counters and the events atomically, then enqueues the run. If
 * the enqueue is lost (Redis down, crash), the engine's sweep finds the running execution and
 * enqueues it again.
 */
@Injectable()
export class ExecutionsService {
  private readonly logger = new Logger(ExecutionsService.name);
  // A failed batch is not retried item by item: Redis, not an item, is what failed (see enqueue).
  private readonly enqueues = new Batcher<RunJob, void>((jobs) => this.enqueueMany(jobs), { retrySingly: () => false });
  private readonly starts = new Batcher<Firing, boolean>(
    (firings) => this.startMany(firings),
    { keys: (f) => [f.customer_ref !== null && f.customer_id === null ? `${f.organization_id}:${f.customer_ref}` : null] },
  );

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectQueue(EXECUTIONS_QUEUE) private readonly queue: Queue,
  ) {}

  async fire(input: FireInput): Promise<FireResult> {
    const now = new Date();
    const triggerExecutionId = input.triggerId === null ? null : uuidv7();
    const executionId = uuidv7();
    const customerRef = input.customerRef ?? null;
    const triggerInput = {
      message: input.message ?? null,
      customer_id: customerRef,
      channel: input.channel ?? null,
      ...(input.data !== undefined ? { data: input.data } : {}),
      metadata: input.metadata,
    };
    if (!input.refusal) {
      const started = await this.starts.submit({
        execution_id: executionId,
        trigger_execution_id: triggerExecutionId,
        organization_id: input.organizationId,
        trigger_id: input.triggerId,
        workflow_id: input.workflowId,
        customer_ref: customerRef,
        customer_id: customerRef === null ? null : (input.customerId ?? null),
        channel: input.channel ?? null,
        channel_account_id: input.channelAccountId ?? null,
        input: { message: input.message ?? null, ...(input.data !== undefined ? { data: input.data } : {}) },
        // No cursor: the first run starts at the first node of the version pinned here.
        state: { lastMessage: input.message ?? undefined },
        trigger_input: triggerInput,
        started_at: now,
        // The events' channel is the workflow's when the firing has none: the statement adds it.
        activated_event: { trigger_id: input.triggerId, trigger_execution_id: triggerExecutionId, workflow_id: input.workflowId, workflow_execution_id: executionId },
        started_event: { workflow_id: input.workflowId, execution_id: executionId, customer_id: customerRef, trigger_id: input.triggerId },
        customer_event: { customer_id: customerRef },
      });
      if (started) {
        await this.enqueue(executionId);
        return { triggerId: input.triggerId, triggerExecutionId, workflowExecutionId: executionId, status: 'running', error: null };
      }
    }
    const error = input.refusal ?? { code: ExecutionErrorCodes.workflowInactive, message: 'The workflow is not active' };
    // Without a trigger there is no trigger execution to record the refusal on.
    if (input.triggerId === null || triggerExecutionId === null) return { triggerId: null, triggerExecutionId: null, workflowExecutionId: null, status: 'failed', error };
    await REFUSE.run(this.dataSource, [
      triggerExecutionId,
      input.organizationId,
      input.triggerId,
      input.workflowId,
      JSON.stringify(triggerInput),
      JSON.stringify(error),
      now,
    ]);
    return { triggerId: input.triggerId, triggerExecutionId, workflowExecutionId: null, status: 'failed', error };
  }

  /**
   * Adds run jobs in one Redis round trip (MULTI of the adds), however many requests share it.
   * Fails at once while Bull's connection is down, and after ENQUEUE_DEADLINE_MS without an
   * answer: the client would otherwise hold the command (and the request) until Redis returns.
   */
  private async enqueueMany(jobs: RunJob[]): Promise<void[]> {
    const client = this.queue.client;
    if (client.status !== 'ready') throw new RedisUnavailableError(`the executions queue's connection is ${client.status}`);
    const adding = this.queue.addBulk(jobs.map((data) => ({ name: ExecutionJobs.run, data, opts: RUN_JOB_OPTIONS })));
    // Given up on, the adds may still reach Redis later: a second run job of an execution is harmless (see the engine).
    adding.catch(() => undefined);
    await withRedisDeadline(adding, ENQUEUE_DEADLINE_MS, 'adding run jobs');
    return jobs.map(() => undefined);
  }

  /** Starts the firings whose workflow is active, in one statement; true for each started. */
  private async startMany(firings: Firing[]): Promise<boolean[]> {
    const started = new Set((await START.run(this.dataSource, [JSON.stringify(firings)])).map((r) => r.execution_id));
    return firings.map((f) => started.has(f.execution_id));
  }

  /**
   * Whether a schedule trigger already has a firing for this slot (`input.metadata.scheduled_for`, an
   * ISO instant): a tick run twice, after a worker died between the firing's commit and the job's
   * completion, must fire nothing. A firing happens at or after its slot, so only the trigger's
   * firings since then are read (its index on trigger and time), with an hour for clock skew between
   * hosts (and `now()` for a tick run before its slot, as tests do).
   */
  async scheduleSlotFired(triggerId: string, slot: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `SELECT 1 FROM trigger_executions WHERE trigger_id = $1 AND triggered_at >= least($2::timestamptz, now()) - interval '1 hour' AND input->'metadata'->>'scheduled_for' = $3 LIMIT 1`,
      [triggerId, slot, slot],
    );
    return rows.length > 0;
  }

  /**
   * Queues a run of the execution (first run, or after a reply was routed to it). The execution
   * is committed as running before, so a failure here loses nothing: the run is kept to be queued
   * again every second until Redis answers (and, should this process end first, the worker's
   * sweep queues it from PostgreSQL). The caller's request is answered either way.
   */
  async enqueue(executionId: string): Promise<void> {
    try {
      // Traces on: a producer span whose context the job carries (the worker's run span is its child).
      if (tracingEnabled()) {
        await inSpan('executions.enqueue', { 'execution.id': executionId }, () => this.enqueues.submit({ executionId, traceparent: currentTraceparent() }), { kind: SpanKind.PRODUCER });
      } else {
        await this.enqueues.submit({ executionId });
      }
    } catch (error) {
      if (this.unqueued.size === 0) this.logger.warn(`Could not queue runs (${(error as Error).message}); retrying every ${REQUEUE_EVERY_MS} ms`);
      this.unqueued.add(executionId);
      this.requeueLater();
    }
  }

  /** Runs that could not be queued yet, oldest first (a Set keeps insertion order). */
  private readonly unqueued = new Set<string>();
  private requeueTimer?: NodeJS.Timeout;

  private requeueLater(): void {
    if (this.requeueTimer) return;
    this.requeueTimer = setTimeout(() => void this.requeue(), REQUEUE_EVERY_MS);
    // A process shutting down does not wait for it: the sweep finds what is left.
    this.requeueTimer.unref();
  }

  private async requeue(): Promise<void> {
    const ids = [...this.unqueued].slice(0, 500);
    try {
      await this.enqueueMany(ids.map((executionId) => ({ executionId })));
      for (const id of ids) this.unqueued.delete(id);
      this.logger.log(`Queued ${ids.length} run(s) that waited for Redis`);
    } catch {
      // Still down; next time.
    } finally {
      this.requeueTimer = undefined;
      if (this.unqueued.size > 0) this.requeueLater();
    }
  }

  /**
   * Where an execution stands for a phone call's next turn (the channels module's TwiML): its status,
   * whether it waits for the customer with no reply left to read (so a turn may be answered), and the
   * outbound messages it committed after `after` (a message's created_at as given back here, or null
   * for all), in conversation order. Null when the execution does not exist in the organization.
   */
  async conversationTurn(organizationId: string, executionId: string, after: string | null): Promise<ConversationTurn | null> {
    const [row] = await CONVERSATION_TURN.run(this.dataSource, [executionId, organizationId, after]);
    if (!row) return null;
    return { status: row.status, awaitsCustomer: row.status === 'running' && row.waiting && !row.replies_pending, said: row.said };
  }

  /** How many runs wait for Redis to be queued (tests, metrics). */
  get unqueuedCount(): number {
    return this.unqueued.size;
  }
}

/** See ExecutionsService.conversationTurn. */
export interface ConversationTurn {
  status: ExecutionStatus;
  /** Running, waiting for the customer, and every reply routed to it already read by a run. */
  awaitsCustomer: boolean;
  /** Outbound messages after the given time, oldest first; `at` is their created_at, to pass back as `after`. */
  said: { content: string; at: string }[];
}
