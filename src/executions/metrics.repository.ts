import type { DataSource } from 'typeorm';
import type { Period } from '../common/date-range.js';

/** Channel key of executions that carry none, so that the breakdown adds up to the total. */
export const UNKNOWN_CHANNEL = 'unknown';

export interface SummaryRow {
  executions: number;
  successful: number;
  failed: number;
  success_rate: number | null;
  average_duration_ms: number | null;
  unique_customers: number;
  /** Workflow summaries only. */
  messages_sent?: number;
  messages_received?: number;
}

export interface ExecutionSummary {
  totals: SummaryRow;
  channels: Record<string, number>;
  /** Oldest first; only buckets holding executions. */
  buckets: (SummaryRow & { date: Date })[];
}

interface RawRow extends SummaryRow {
  all_buckets: number;
  all_channels: number;
  bucket: Date | null;
  channel: string | null;
}

const EMPTY: SummaryRow = { executions: 0, successful: 0, failed: 0, success_rate: null, average_duration_ms: null, unique_customers: 0 };

/**
 * One pass over the source rows `e(id, status, duration_ms, customer, channel, bucket)` (and, for
 * workflows, their message counts `m`), grouped three ways at once: per time bucket, per channel
 * and overall. GROUPING() tells the three kinds of row apart (1 = that column is aggregated over).
 */
function aggregate(withMessages: boolean): string {
  return `
  SELECT GROUPING(e.bucket)::int AS all_buckets,
         GROUPING(e.channel)::int AS all_channels,
         e.bucket AT TIME ZONE 'UTC' AS bucket,
         e.channel,
         count(*)::int AS executions,
         (count(*) FILTER (WHERE e.status = 'success'))::int AS successful,
         (count(*) FILTER (WHERE e.status = 'failed'))::int AS failed,
         (count(*) FILTER (WHERE e.status = 'success'))::float8
           / NULLIF(count(*) FILTER (WHERE e.status IN ('success', 'failed')), 0) AS success_rate,
         round(avg(e.duration_ms) FILTER (WHERE e.status IN ('success', 'failed')))::int AS average_duration_ms,
         count(DISTINCT e.customer)::int AS unique_customers
         ${withMessages ? `, COALESCE(sum(m.sent), 0)::int AS messages_sent, COALESCE(sum(m.received), 0)::int AS messages_received` : ''}
  FROM e ${withMessages ? 'LEFT JOIN m ON m.execution_id = e.id' : ''}
  GROUP BY GROUPING SETS ((e.bucket), (e.channel), ())
  ORDER BY e.bucket`;
}

/**
 * Workflow executions started in the period. Messages count towards the execution they belong
 * to (outbound: sent by it; inbound: routed to it), so they fall in the execution's bucket.
 */
const WORKFLOW_SQL = `
  WITH e AS (
    SELECT we.id, we.status, we.duration_ms, we.customer_ref AS customer,
           COALESCE(we.channel, '${UNKNOWN_CHANNEL}') AS channel,
           date_trunc($5, we.started_at AT TIME ZONE 'UTC') AS bucket
    FROM workflow_executions we
    WHERE we.workflow_id = $1 AND we.organization_id = $2 AND we.started_at BETWEEN $3 AND $4
  ), m AS (
    SELECT msg.execution_id,
           count(*) FILTER (WHERE msg.direction = 'outbound') AS sent,
           count(*) FILTER (WHERE msg.direction = 'inbound') AS received
    FROM messages msg JOIN e ON e.id = msg.execution_id
    GROUP BY msg.execution_id
  )${aggregate(true)}`;

/** Trigger executions fired in the period; customer and channel come from the firing's input. */
const TRIGGER_SQL = `
  WITH e AS (
    SELECT te.id, te.status, te.duration_ms, te.input->>'customer_id' AS customer,
           COALESCE(te.input->>'channel', '${UNKNOWN_CHANNEL}') AS channel,
           date_trunc($5, te.triggered_at AT TIME ZONE 'UTC') AS bucket
    FROM trigger_executions te
    WHERE te.trigger_id = $1 AND te.organization_id = $2 AND te.triggered_at BETWEEN $3 AND $4
  )${aggregate(false)}`;

/**
 * The metrics SQL of workflows and triggers, computed entirely in PostgreSQL. The range scans use
 * idx_workflow_executions_workflow_started and idx_trigger_executions_trigger_triggered (checked
 * with EXPLAIN); buckets are UTC, with `date_trunc` semantics (ISO weeks start on Monday).
 */
export class ExecutionMetricsRepository {
  constructor(private readonly dataSource: DataSource) {}

  workflow(organizationId: string, workflowId: string, period: Period): Promise<ExecutionSummary> {
    return this.summarise(WORKFLOW_SQL, organizationId, workflowId, period);
  }

  trigger(organizationId: string, triggerId: string, period: Period): Promise<ExecutionSummary> {
    return this.summarise(TRIGGER_SQL, organizationId, triggerId, period);
  }

  private async summarise(sql: string, organizationId: string, id: string, period: Period): Promise<ExecutionSummary> {
    const rows: RawRow[] = await this.dataSource.query(sql, [id, organizationId, period.start, period.end, period.granularity]);
    const summary: ExecutionSummary = { totals: { ...EMPTY }, channels: {}, buckets: [] };
    for (const { all_buckets, all_channels, bucket, channel, ...figures } of rows) {
      if (all_buckets === 1 && all_channels === 1) summary.totals = figures;
      else if (all_buckets === 1) summary.channels[channel ?? UNKNOWN_CHANNEL] = figures.executions;
      else if (bucket) summary.buckets.push({ ...figures, date: bucket });
    }
    return summary;
  }
}
