import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { WorkflowExecution } from './entities/workflow-execution.entity.js';
import { Batcher } from '../common/batcher.js';
import { isUuid } from '../common/ids/uuid.js';
import { SqlStatement } from '../database/sql-statement.js';
import type { RunWrites } from './run-writes.js';
import { insertOutboxEventsTraced } from '../events/outbox.sql.js';
import { countWorkflowOutcomes } from '../workflows/workflows.sql.js';
import { queueDeliveries, replyWindowOf } from '../channels/channels.sql.js';
import { countFinished } from './executions.metrics.js';

/** An execution as a run starts from it. */
export interface LoadedExecution {
  execution: WorkflowExecution;
  /** The row version read (its xmin): a commit applies only if the row is still this version. */
  version: string;
  /**
   * Inbound replies routed to it and not yet consumed, oldest first (only while it runs). A burst's
   * reply reads as its joined text (`turn_content`, see the customers module's ConversationsService).
   */
  replies: { id: string; content: string }[];
  /**
   * A running execution's channel account as its sends need it, read with the execution: the provider
   * and when the customer last wrote to the account (the reply window). Null when the execution is
   * not running, has no account, or its account was deleted.
   */
  account: { provider: string; lastInboundAt: Date | null } | null;
}

/**
 * The executions runs start from, with their unconsumed replies: the loads of concurrent runs share
 * one statement (see Batcher), each found by primary key in its month's partition (pruned as the
 * statement runs). The ids come as a JSON array, not a uuid[]: the planner sees an array's length
 * and can prune partitions from its values while planning, so every plan made for the values was
 * cheaper than the cached generic one and PostgreSQL planned the statement anew at each call (0.6 ms,
 * more than running it); a JSON array is planned as 100 rows whatever it holds, and the generic plan
 * is kept.
 */
const LOAD = new SqlStatement<ExecutionRow>(
  `
  SELECT e.id, e.organization_id, e.workflow_id, e.workflow_version, e.trigger_id, e.trigger_execution_id, e.customer_id,
         e.customer_ref, e.channel, e.channel_account_id, e.status, e.input, e.output, e.error, e.state, e.waiting, e.wait_expires_at,
         e.started_at, e.completed_at, e.duration_ms, e.created_at, e.updated_at, e.xmin::text AS version,
         CASE WHEN e.status = 'running' THEN (
           SELECT COALESCE(json_agg(json_build_object('id', m.id, 'content', COALESCE(m.turn_content, m.content)) ORDER BY m.created_at, m.id), '[]'::json)
             FROM messages m WHERE m.execution_id = e.id AND m.direction = 'inbound' AND m.consumed_at IS NULL
         ) ELSE '[]'::json END AS replies,
         a.provider AS account_provider, a.last_inbound_at AS account_last_inbound_at
    FROM jsonb_array_elements_text($1::jsonb) AS k(id)
    JOIN workflow_executions e ON e.id = ANY (ARRAY[k.id::uuid])
    -- The reply window of a running execution's account, so that its sends need no statement of their own.
    LEFT JOIN LATERAL (${replyWindowOf('e.channel_account_id', 'e.customer_id')} AND e.status = 'running' LIMIT 1) a ON true`,
  { prepareAs: 'runs.load-many' },
);

/**
 * Runs' writes and their executions' new states in one statement, each run's applied only if its
 * execution row is still the version the run started from (optimistic concurrency on xmin, which
 * every committed update of the row changes): of two runs of the same execution (a retried job,
 * an expiry racing a reply) exactly one commits, and the other starts over from the new state.
 * Nothing holds a lock while the nodes run, and the workflow's counter row — shared by every
 * execution of the workflow — is locked once per statement, for the rest of it, not across round
 * trips. Concurrent runs share the statement (see Batcher); a batch never holds two runs of one
 * execution or of one customer, whose rows a single UPDATE could then apply only once.
 * Steps and messages get increasing created_at in the order each run recorded them, from one
 * clock reading (clock_timestamp() per row could give two rows the same microsecond).
 */
const COMMIT = new SqlStatement<{ id: string }>(
  `
  WITH input AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS i(
      id uuid, version text, state jsonb, waiting boolean, wait_expires_at timestamptz, status varchar, completed_at timestamptz,
      duration_ms int, error jsonb, output jsonb, trigger_error jsonb, customer_attributes jsonb)
  ), clock AS MATERIALIZED (
    SELECT clock_timestamp() AS at
  ), execution AS (
    UPDATE workflow_executions e
       SET state = i.state, waiting = i.waiting, wait_expires_at = i.wait_expires_at, status = i.status, completed_at = i.completed_at,
           duration_ms = i.duration_ms, error = i.error, output = i.output, updated_at = now()
      FROM input i
     -- Here and below, = ANY (ARRAY[..]) rather than =, which the planner could hash-join: it
     -- counts the JSON input as 100 rows, would rather scan the table than look that many up, and
     -- the plan stays cached (named statement) however big the table grows. So each row is found
     -- by primary key.
     WHERE e.id = ANY (ARRAY[i.id]) AND e.xmin = ANY (ARRAY[i.version::xid])
    RETURNING e.id, e.customer_id, e.trigger_execution_id, e.workflow_id, e.status, e.started_at, e.completed_at, i.trigger_error, i.customer_attributes
  ), steps AS (
    INSERT INTO execution_steps (execution_id, node_id, type, status, started_at, completed_at, duration_ms, input, output, attempt, created_at)
    SELECT e.id, s.node_id, s.type, s.status, s.started_at, s.completed_at, s.duration_ms, s.input, s.output, s.attempt,
           (SELECT at FROM clock) + s.ord * interval '1 microsecond'
      FROM jsonb_to_recordset($2::jsonb) AS s(execution_id uuid, node_id varchar, type varchar, status varchar, started_at timestamptz,
                                               completed_at timestamptz, duration_ms int, input jsonb, output jsonb, attempt int, ord int)
      JOIN execution e ON e.id = s.execution_id
    ON CONFLICT (execution_id, node_id) DO NOTHING
  ), outbound AS (
    SELECT m.*, e.workflow_id, e.started_at, (SELECT at FROM clock) + m.ord * interval '1 microsecond' AS at
      FROM jsonb_to_recordset($3::jsonb) AS m(execution_id uuid, id uuid, organization_id uuid, customer_id uuid, channel varchar,
                                               content text, node_id varchar, ord int, channel_account_id uuid, kind varchar, metadata jsonb, queued boolean)
      JOIN execution e ON e.id = m.execution_id
  ), sent AS (
    INSERT INTO messages (id, organization_id, customer_id, channel, direction, content, execution_id, node_id, created_at, channel_account_id, metadata)
    SELECT id, organization_id, customer_id, channel, 'outbound', content, execution_id, node_id, at, channel_account_id, metadata FROM outbound
  ), deliveries AS (
    -- A message through a channel account is queued for the sender (ChannelSendDispatcher, after the commit),
    -- unless its channel speaks it in the answer to a call (answered-channels.ts).
    ${queueDeliveries(`SELECT id AS message_id, organization_id, channel_account_id, customer_id, execution_id, workflow_id, channel, started_at, kind, at AS queued_at
                         FROM outbound WHERE queued`)}
  ), consumed AS (
    UPDATE messages m SET consumed_at = now()
      FROM jsonb_to_recordset($4::jsonb) AS c(execution_id uuid, id uuid)
      JOIN execution e ON e.id = c.execution_id
     WHERE m.id = ANY (ARRAY[c.id])
  ), customer AS (
    UPDATE customers c SET attributes = c.attributes || e.customer_attributes, updated_at = now()
      FROM execution e WHERE c.id = ANY (ARRAY[e.customer_id]) AND e.customer_attributes IS NOT NULL
  ), events AS (
    ${insertOutboxEventsTraced(`
    SELECT v.organization_id, v.type, v.data, v.traceparent
      FROM jsonb_to_recordset($5::jsonb) AS v(execution_id uuid, organization_id uuid, type varchar, data jsonb, traceparent text)
      JOIN execution e ON e.id = v.execution_id`)}
  ), trigger_execution AS (
    UPDATE trigger_executions t
       SET status = e.status, completed_at = e.completed_at,
           duration_ms = LEAST(2147483647, GREATEST(0, EXTRACT(EPOCH FROM (e.completed_at - t.triggered_at)) * 1000))::int, error = e.trigger_error
      FROM execution e WHERE t.id = ANY (ARRAY[e.trigger_execution_id]) AND e.status <> 'running'
  ), workflow_counted AS (
    ${countWorkflowOutcomes(`SELECT workflow_id, count(*) FILTER (WHERE status = 'success')::int AS succeeded, count(*) FILTER (WHERE status = 'failed')::int AS failed
              FROM execution WHERE status <> 'running' GROUP BY workflow_id ORDER BY workflow_id`)}
  )
  SELECT id FROM execution`,
  { prepareAs: 'runs.commit' },
);

/** One run to commit: the execution as the run left it, the version it started from, its writes. */
export interface RunCommit {
  execution: WorkflowExecution;
  version: string;
  writes: RunWrites;
}

interface ExecutionRow {
  id: string;
  organization_id: string;
  workflow_id: string;
  workflow_version: number;
  trigger_id: string | null;
  trigger_execution_id: string | null;
  customer_id: string | null;
  customer_ref: string | null;
  channel: string | null;
  channel_account_id: string | null;
  status: WorkflowExecution['status'];
  input: WorkflowExecution['input'];
  output: WorkflowExecution['output'];
  error: WorkflowExecution['error'];
  state: WorkflowExecution['state'];
  waiting: boolean;
  wait_expires_at: Date | null;
  started_at: Date;
  completed_at: Date | null;
  duration_ms: number | null;
  created_at: Date;
  updated_at: Date;
  version: string;
  replies: { id: string; content: string }[];
  account_provider: string | null;
  account_last_inbound_at: Date | null;
}

/** The execution engine's reads and writes of a run: one round trip each (see COMMIT). */
@Injectable()
export class RunsRepository {
  private readonly commits = new Batcher<RunCommit, boolean>(
    (runs) => this.commitMany(runs),
    { keys: ({ execution }) => [execution.id, execution.customerId] },
  );

  // Reads: two statements may be in flight (no row is locked). Ids are checked before they are submitted, so
  // no single load can fail a statement: a failed one (a lost connection) fails its loads, whose jobs Bull retries.
  private readonly loads = new Batcher<string, ExecutionRow | null>((ids) => this.loadMany(ids), { maxInFlight: 2, retrySingly: () => false });

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private async loadMany(ids: string[]): Promise<(ExecutionRow | null)[]> {
    const rows = await LOAD.run(this.dataSource, [JSON.stringify(ids)]);
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => byId.get(id.toLowerCase()) ?? null);
  }

  async load(executionId: string): Promise<LoadedExecution | null> {
    // Not an id (a malformed job): nothing to run, and it must not fail the statement it would share.
    if (!isUuid(executionId)) return null;
    const row = await this.loads.submit(executionId);
    if (!row) return null;
    const execution = Object.assign(new WorkflowExecution(), {
      id: row.id,
      organizationId: row.organization_id,
      workflowId: row.workflow_id,
      workflowVersion: row.workflow_version,
      triggerId: row.trigger_id,
      triggerExecutionId: row.trigger_execution_id,
      customerId: row.customer_id,
      customerRef: row.customer_ref,
      channel: row.channel,
      channelAccountId: row.channel_account_id,
      status: row.status,
      input: row.input,
      output: row.output,
      error: row.error,
      state: row.state,
      waiting: row.waiting,
      waitExpiresAt: row.wait_expires_at,
      startedAt: row.started_at,
      completedAt: row.completed_at,
      durationMs: row.duration_ms,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    } satisfies Partial<WorkflowExecution>);
    const account = row.account_provider === null ? null : { provider: row.account_provider, lastInboundAt: row.account_last_inbound_at };
    return { execution, version: row.version, replies: row.replies, account };
  }

  /**
   * Writes the execution's fields as the run left them, with the run's writes; finishing it
   * (status success or failed) also completes its trigger execution and counts it on the
   * workflow. Returns false, writing nothing, when the row is no longer `version`.
   */
  commit(run: RunCommit): Promise<boolean> {
    return this.commits.submit(run);
  }

  private async commitMany(runs: RunCommit[]): Promise<boolean[]> {
    const executions: object[] = [];
    const steps: object[] = [];
    const messages: object[] = [];
    const consumed: object[] = [];
    const events: object[] = [];
    for (const { execution: e, version, writes } of runs) {
      executions.push({
        id: e.id,
        version,
        state: e.state,
        waiting: e.waiting,
        wait_expires_at: e.waitExpiresAt,
        status: e.status,
        completed_at: e.completedAt,
        duration_ms: e.durationMs,
        error: e.error,
        output: e.output,
        // The trigger execution shows the error without the node.
        trigger_error: e.error === null ? null : { code: e.error.code, message: e.error.message },
        customer_attributes: writes.customerAttributes,
      });
      writes.steps.forEach((s, ord) =>
        steps.push({
          execution_id: e.id,
          node_id: s.nodeId,
          type: s.type,
          status: s.status,
          started_at: s.startedAt,
          completed_at: s.completedAt,
          duration_ms: s.durationMs,
          input: s.input,
          output: s.output,
          attempt: s.attempt,
          ord,
        }),
      );
      writes.messages.forEach((m, ord) =>
        messages.push({
          execution_id: e.id,
          id: m.id,
          organization_id: m.organizationId,
          customer_id: m.customerId,
          channel: m.channel,
          content: m.content,
          node_id: m.nodeId,
          ord,
          channel_account_id: m.channelAccountId,
          kind: m.kind,
          metadata: m.metadata,
          queued: m.queued,
        }),
      );
      for (const id of writes.consumed) consumed.push({ execution_id: e.id, id });
      for (const v of writes.events) events.push({ execution_id: e.id, organization_id: v.organizationId, type: v.type, data: v.data, traceparent: writes.traceparent });
    }
    const applied = await COMMIT.run(this.dataSource, [
      JSON.stringify(executions),
      JSON.stringify(steps),
      JSON.stringify(messages),
      JSON.stringify(consumed),
      JSON.stringify(events),
    ]);
    const ids = new Set(applied.map((r) => r.id));
    // The executions this statement finished (their status is no longer running), for /metrics.
    countFinished(runs.filter(({ execution }) => ids.has(execution.id)).map(({ execution }) => execution));
    return runs.map(({ execution }) => ids.has(execution.id));
  }
}
