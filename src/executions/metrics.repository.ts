import type { DataSource } from 'typeorm';
import type { Period } from '../common/date-range.js';
import { SqlStatement } from '../database/sql-statement.js';

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
  kind: 'counts' | 'customers';
  all_buckets: number;
  all_channels: number;
  bucket: Date | null;
  channel: string | null;
}

const EMPTY: SummaryRow = { executions: 0, successful: 0, failed: 0, success_rate: null, average_duration_ms: null, unique_customers: 0 };
const HOUR_MS = 3_600_000;

/**
 * How a period is read: the whole UTC hours inside it from the hourly rollups (migration
 * ExecutionRollups), and the rest — the partial hours at its two ends, at most two hours of rows
 * — from the executions themselves through the (parent, time) index. `raw` is `[from, to)` and
 * `[from2, to2]` (either may be empty); `hours` is `[from, to)`.
 */
export interface PeriodSplit {
  rawFrom: Date;
  rawTo: Date;
  rawFrom2: Date;
  rawTo2: Date;
  hoursFrom: Date;
  hoursTo: Date;
}

export function splitPeriod(start: Date, end: Date): PeriodSplit {
  const firstWhole = new Date(Math.ceil(start.getTime() / HOUR_MS) * HOUR_MS);
  // The hour holding `end` is partial (end is inclusive, to the millisecond): it is read raw.
  const lastStart = new Date(Math.floor(end.getTime() / HOUR_MS) * HOUR_MS);
  if (firstWhole.getTime() >= lastStart.getTime()) {
    return { rawFrom: start, rawTo: start, rawFrom2: start, rawTo2: end, hoursFrom: start, hoursTo: start };
  }
  return { rawFrom: start, rawTo: firstWhole, rawFrom2: lastStart, rawTo2: end, hoursFrom: firstWhole, hoursTo: lastStart };
}

interface Source {
  /** The executions of the parent in the raw ranges `$3..$6`: id, status, duration_ms, customer, channel, at. */
  edges: string;
  /** The rollup rows of the whole hours `$7..$8`, and their customer sets. */
  hours: string;
  customers: string;
  messages: boolean;
}

/**
 * One statement: the raw edges and the rollup rows as one set of facts, grouped per bucket, per
 * channel and overall (GROUPING SETS); distinct customers over the union of the hours' exact sets
 * and the edges' customers, per bucket and overall. Rates and means from the sums, with the
 * arithmetic the per-execution SQL used (float8 division; round(numeric) half away from zero).
 * `$1` parent, `$2` organization, `$9` granularity.
 */
function summarySql(s: Source): string {
  const bucket = (column: string) => `date_trunc($9, ${column} AT TIME ZONE 'UTC')`;
  const messages = s.messages
    ? `, m AS (
         SELECT msg.execution_id,
                count(*) FILTER (WHERE msg.direction = 'outbound')::int AS sent,
                count(*) FILTER (WHERE msg.direction = 'inbound')::int AS received
           FROM messages msg WHERE msg.execution_id = ANY (ARRAY(SELECT id FROM edge))
          GROUP BY msg.execution_id
       )`
    : '';
  const edgeMessages = s.messages ? `COALESCE(m.sent, 0) AS sent, COALESCE(m.received, 0) AS received` : '0 AS sent, 0 AS received';
  const hourMessages = s.messages ? `h.messages_sent, h.messages_received` : '0, 0';
  return `
  WITH edge AS MATERIALIZED (${s.edges})${messages},
  facts AS (
    SELECT ${bucket('edge.at')} AS bucket, edge.channel, 1 AS executions, (edge.status = 'success')::int AS successful,
           (edge.status = 'failed')::int AS failed, CASE WHEN edge.status <> 'running' THEN edge.duration_ms ELSE 0 END::bigint AS duration_sum,
           ${edgeMessages}
      FROM edge ${s.messages ? 'LEFT JOIN m ON m.execution_id = edge.id' : ''}
    UNION ALL
    SELECT ${bucket('h.hour')}, h.channel, h.executions, h.successful, h.failed, h.duration_sum, ${hourMessages}
      FROM (${s.hours}) h
  ), pairs AS MATERIALIZED (
    -- Each customer once per bucket (hashed), then counted per bucket and, deduplicated again, overall.
    SELECT DISTINCT bucket, customer FROM (
      SELECT ${bucket('edge.at')} AS bucket, edge.customer FROM edge WHERE edge.customer IS NOT NULL
      UNION ALL
      SELECT ${bucket('c.hour')}, c.customer FROM (${s.customers}) c
    ) u
  )
  SELECT 'counts' AS kind, GROUPING(bucket)::int AS all_buckets, GROUPING(channel)::int AS all_channels,
         bucket AT TIME ZONE 'UTC' AS bucket, channel,
         COALESCE(sum(executions), 0)::int AS executions, COALESCE(sum(successful), 0)::int AS successful,
         COALESCE(sum(failed), 0)::int AS failed,
         sum(successful)::float8 / NULLIF(sum(successful) + sum(failed), 0) AS success_rate,
         round(sum(duration_sum)::numeric / NULLIF(sum(successful) + sum(failed), 0))::int AS average_duration_ms,
         0 AS unique_customers, COALESCE(sum(sent), 0)::int AS messages_sent, COALESCE(sum(received), 0)::int AS messages_received
    FROM facts
   GROUP BY GROUPING SETS ((bucket), (channel), ())
  -- Rollup rows can hold zeros (after a deletion): a bucket or channel shows only with executions.
  HAVING sum(executions) <> 0 OR (GROUPING(bucket) = 1 AND GROUPING(channel) = 1)
  UNION ALL
  SELECT 'customers', 0, 1, bucket AT TIME ZONE 'UTC', NULL, 0, 0, 0, NULL, NULL, count(*)::int, 0, 0 FROM pairs GROUP BY bucket
  UNION ALL
  SELECT 'customers', 1, 1, NULL, NULL, 0, 0, 0, NULL, NULL, (SELECT count(*) FROM (SELECT DISTINCT customer FROM pairs) d)::int, 0, 0`;
}

const WORKFLOW_SQL = summarySql({
  edges: `
    SELECT we.id, we.status, we.duration_ms, we.customer_ref AS customer, COALESCE(we.channel, 'unknown') AS channel, we.started_at AS at
      FROM workflow_executions we
     WHERE we.workflow_id = $1 AND we.organization_id = $2 AND we.started_at >= $3 AND we.started_at < $4
    UNION ALL
    SELECT we.id, we.status, we.duration_ms, we.customer_ref, COALESCE(we.channel, 'unknown'), we.started_at
      FROM workflow_executions we
     WHERE we.workflow_id = $1 AND we.organization_id = $2 AND we.started_at >= $5 AND we.started_at <= $6`,
  hours: `SELECT * FROM workflow_execution_hours WHERE workflow_id = $1 AND organization_id = $2 AND hour >= $7 AND hour < $8`,
  customers: `SELECT hour, customer FROM workflow_customer_hours WHERE workflow_id = $1 AND hour >= $7 AND hour < $8`,
  messages: true,
});

const TRIGGER_SQL = summarySql({
  edges: `
    SELECT te.id, te.status, te.duration_ms, te.input->>'customer_id' AS customer, COALESCE(te.input->>'channel', 'unknown') AS channel,
           te.triggered_at AS at
      FROM trigger_executions te
     WHERE te.trigger_id = $1 AND te.organization_id = $2 AND te.triggered_at >= $3 AND te.triggered_at < $4
    UNION ALL
    SELECT te.id, te.status, te.duration_ms, te.input->>'customer_id', COALESCE(te.input->>'channel', 'unknown'), te.triggered_at
      FROM trigger_executions te
     WHERE te.trigger_id = $1 AND te.organization_id = $2 AND te.triggered_at >= $5 AND te.triggered_at <= $6`,
  hours: `SELECT * FROM trigger_execution_hours WHERE trigger_id = $1 AND organization_id = $2 AND hour >= $7 AND hour < $8`,
  customers: `SELECT hour, customer FROM trigger_customer_hours WHERE trigger_id = $1 AND hour >= $7 AND hour < $8`,
  messages: false,
});

// Named: every part is a range of the parent's primary-key or (parent, time) index, whatever the values.
const WORKFLOW_SUMMARY = new SqlStatement<RawRow>(WORKFLOW_SQL, { prepareAs: 'metrics.workflow' });
const TRIGGER_SUMMARY = new SqlStatement<RawRow>(TRIGGER_SQL, { prepareAs: 'metrics.trigger' });

/** The statements as sent, for bench/explain-history.mjs (the plans of docs/PERFORMANCE.md). */
export const METRICS_STATEMENTS = { workflow: WORKFLOW_SUMMARY, trigger: TRIGGER_SUMMARY };

/**
 * Workflow and trigger metrics from the hourly rollups, never recomputed from every execution:
 * a period's cost is its number of hours (and distinct customers per hour), plus the executions
 * of its two partial end hours. Buckets are UTC, with `date_trunc` semantics (ISO weeks start on
 * Monday); an hour always lies within one bucket of any granularity.
 */
export class ExecutionMetricsRepository {
  constructor(private readonly dataSource: DataSource) {}

  workflow(organizationId: string, workflowId: string, period: Period): Promise<ExecutionSummary> {
    return this.summarise(WORKFLOW_SUMMARY, organizationId, workflowId, period);
  }

  trigger(organizationId: string, triggerId: string, period: Period): Promise<ExecutionSummary> {
    return this.summarise(TRIGGER_SUMMARY, organizationId, triggerId, period);
  }

  private async summarise(statement: SqlStatement<RawRow>, organizationId: string, id: string, period: Period): Promise<ExecutionSummary> {
    const s = splitPeriod(period.start, period.end);
    const rows = await statement.run(this.dataSource, [
      id, organizationId, s.rawFrom, s.rawTo, s.rawFrom2, s.rawTo2, s.hoursFrom, s.hoursTo, period.granularity,
    ]);
    const summary: ExecutionSummary = { totals: { ...EMPTY }, channels: {}, buckets: [] };
    const customers = new Map<number, number>();
    let allCustomers = 0;
    for (const { kind, all_buckets, all_channels, bucket, channel, ...figures } of rows) {
      if (kind === 'customers') {
        if (all_buckets === 1) allCustomers = figures.unique_customers;
        else if (bucket) customers.set(bucket.getTime(), figures.unique_customers);
        continue;
      }
      if (all_buckets === 1 && all_channels === 1) summary.totals = figures;
      else if (all_buckets === 1) summary.channels[channel ?? UNKNOWN_CHANNEL] = figures.executions;
      else if (bucket) summary.buckets.push({ ...figures, date: bucket });
    }
    summary.totals.unique_customers = allCustomers;
    for (const b of summary.buckets) b.unique_customers = customers.get(b.date.getTime()) ?? 0;
    summary.buckets.sort((a, b) => a.date.getTime() - b.date.getTime());
    return summary;
  }
}
