import type { DataSource } from 'typeorm';

/**
 * Rows of the execution engine's tables, written straight to the database so that read-side tests
 * control every timestamp, duration and status. Timestamps are ISO strings; each helper returns the id.
 */

type Json = Record<string, unknown>;
type Status = 'running' | 'success' | 'failed';

function plus(iso: string, ms: number): string {
  return new Date(new Date(iso).getTime() + ms).toISOString();
}

async function insert(ds: DataSource, table: string, values: Record<string, unknown>): Promise<string> {
  const columns = Object.keys(values);
  const params = columns.map((c) => {
    const v = values[c];
    return v !== null && typeof v === 'object' && !(v instanceof Date) ? JSON.stringify(v) : v;
  });
  const rows: { id: string }[] = await ds.query(
    `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING id`,
    params,
  );
  return rows[0].id;
}

export interface CustomerRow {
  organizationId: string;
  externalId: string;
  channel?: string | null;
  language?: string | null;
  attributes?: Json;
  /** created_at; first_seen_at, last_seen_at and updated_at default to it. */
  createdAt: string;
  lastSeenAt?: string;
  updatedAt?: string;
}

export function insertCustomer(ds: DataSource, c: CustomerRow): Promise<string> {
  return insert(ds, 'customers', {
    organization_id: c.organizationId,
    external_id: c.externalId,
    channel: c.channel ?? null,
    language: c.language ?? null,
    attributes: c.attributes ?? {},
    first_seen_at: c.createdAt,
    last_seen_at: c.lastSeenAt ?? c.createdAt,
    created_at: c.createdAt,
    updated_at: c.updatedAt ?? c.createdAt,
  });
}

export interface WorkflowExecutionRow {
  organizationId: string;
  workflowId: string;
  status: Status;
  startedAt: string;
  /** Finished executions complete durationMs after they start; running ones have no duration. */
  durationMs?: number | null;
  customerRef?: string | null;
  /** The internal customers.id. */
  customerId?: string | null;
  channel?: string | null;
  input?: Json;
  output?: Json | null;
  error?: Json | null;
  workflowVersion?: number;
  triggerId?: string | null;
}

/**
 * Also counts it on its workflow (execution_count, and success_count or failure_count when it has
 * finished), as the engine's statements do: the lists read their unfiltered totals from there.
 */
export async function insertWorkflowExecution(ds: DataSource, e: WorkflowExecutionRow): Promise<string> {
  const finished = e.status !== 'running';
  const duration = finished ? (e.durationMs ?? 0) : null;
  await ds.query(
    `UPDATE workflows SET execution_count = execution_count + 1,
            success_count = success_count + ($2 = 'success')::int, failure_count = failure_count + ($2 = 'failed')::int
      WHERE id = $1`,
    [e.workflowId, e.status],
  );
  return insert(ds, 'workflow_executions', {
    organization_id: e.organizationId,
    workflow_id: e.workflowId,
    workflow_version: e.workflowVersion ?? 1,
    trigger_id: e.triggerId ?? null,
    customer_id: e.customerId ?? null,
    customer_ref: e.customerRef ?? null,
    channel: e.channel ?? null,
    status: e.status,
    input: e.input ?? {},
    output: e.output ?? null,
    error: e.error ?? null,
    started_at: e.startedAt,
    completed_at: duration === null ? null : plus(e.startedAt, duration),
    duration_ms: duration,
    // Recent, so that no sweep of stale running executions would pick these up.
    updated_at: new Date().toISOString(),
  });
}

export interface StepRow {
  nodeId: string;
  type: string;
  status?: 'completed' | 'failed';
  startedAt: string;
  durationMs: number;
  input?: Json;
  output?: Json;
}

export function insertStep(ds: DataSource, executionId: string, s: StepRow): Promise<string> {
  return insert(ds, 'execution_steps', {
    execution_id: executionId,
    node_id: s.nodeId,
    type: s.type,
    status: s.status ?? 'completed',
    started_at: s.startedAt,
    completed_at: plus(s.startedAt, s.durationMs),
    duration_ms: s.durationMs,
    input: s.input ?? {},
    output: s.output ?? {},
  });
}

export interface TriggerRow {
  organizationId: string;
  workflowId: string;
  name: string;
  type?: 'message' | 'schedule' | 'webhook' | 'api';
  channel?: string | null;
  configuration?: Json;
}

export function insertTrigger(ds: DataSource, t: TriggerRow): Promise<string> {
  return insert(ds, 'triggers', {
    organization_id: t.organizationId,
    workflow_id: t.workflowId,
    name: t.name,
    type: t.type ?? 'api',
    channel: t.channel ?? null,
    configuration: t.configuration ?? { endpoint: '/v1/triggers/fire', authentication: 'api_key', rate_limit: 100 },
  });
}

export interface TriggerExecutionRow {
  organizationId: string;
  triggerId: string;
  workflowId: string;
  workflowExecutionId?: string | null;
  status: Status;
  triggeredAt: string;
  durationMs?: number | null;
  input?: Json;
  error?: Json | null;
}

/** Also counts it on its trigger (execution_count), as the firing statements do. */
export async function insertTriggerExecution(ds: DataSource, te: TriggerExecutionRow): Promise<string> {
  const duration = te.status === 'running' ? null : (te.durationMs ?? 0);
  await ds.query(`UPDATE triggers SET execution_count = execution_count + 1 WHERE id = $1`, [te.triggerId]);
  return insert(ds, 'trigger_executions', {
    organization_id: te.organizationId,
    trigger_id: te.triggerId,
    workflow_id: te.workflowId,
    workflow_execution_id: te.workflowExecutionId ?? null,
    status: te.status,
    input: te.input ?? {},
    error: te.error ?? null,
    triggered_at: te.triggeredAt,
    completed_at: duration === null ? null : plus(te.triggeredAt, duration),
    duration_ms: duration,
  });
}

export interface MessageRow {
  organizationId: string;
  /** The internal customers.id. */
  customerId: string;
  direction: 'inbound' | 'outbound';
  channel: string;
  content: string;
  createdAt: string;
  language?: string | null;
  executionId?: string | null;
  nodeId?: string | null;
}

export function insertMessage(ds: DataSource, m: MessageRow): Promise<string> {
  return insert(ds, 'messages', {
    organization_id: m.organizationId,
    customer_id: m.customerId,
    channel: m.channel,
    direction: m.direction,
    content: m.content,
    language: m.language ?? null,
    execution_id: m.executionId ?? null,
    node_id: m.nodeId ?? null,
    created_at: m.createdAt,
  });
}
