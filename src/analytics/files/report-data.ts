import { distinctCustomers, meanRating } from '../analytics-sql.js';
import { HANDED_OFF_CODE } from '../workflow-analytics.repository.js';

/**
 * The rows of a report: workflow metrics per time bucket, from the hourly rollups (migration
 * ExecutionRollups), optionally split by workflow and channel. A bucket starts at the local
 * midnight (or hour, Monday, first of the month) of the report's `timezone`; the rollup hours are
 * UTC hours, so in a zone whose offset is not a whole number of hours (Asia/Kolkata) an hour counts
 * in the bucket where it starts. The period is widened to whole hours: a report describes the hours
 * it covers, and says which (`period_start`, `period_end` in the file).
 */

/**
 * The report metrics, in the order of a file's columns: the names of the workflow analytics
 * (GET /v1/analytics/workflows/{id}), each computed the same way, per row. `unique_customers`
 * counts the distinct customers of the executions started in the row's bucket (and workflow and
 * channel), `customer_satisfaction` is the mean of their form ratings (null without one). The
 * delivery figures count those executions' sends through channel accounts (workflow_delivery_hours):
 * null where none has settled.
 */
export const REPORT_METRICS = [
  'total_executions',
  'successful_executions',
  'failed_executions',
  'success_rate',
  'average_duration_ms',
  'total_messages_sent',
  'total_messages_received',
  'unique_customers',
  'customer_satisfaction',
  'messages_delivered',
  'messages_read',
  'delivery_rate',
  'read_rate',
  'handoff_rate',
] as const;
export type ReportMetric = (typeof REPORT_METRICS)[number];

/** The metrics of a report that names none: every one but the delivery figures and handoff_rate, which are asked for by name. */
export const DEFAULT_REPORT_METRICS: readonly ReportMetric[] = REPORT_METRICS.filter(
  (m) => !['messages_delivered', 'messages_read', 'delivery_rate', 'read_rate', 'handoff_rate'].includes(m),
);

/** The short names reports took first: still accepted in a request, written under the analytics name. */
export const REPORT_METRIC_ALIASES: Readonly<Record<string, ReportMetric>> = {
  executions: 'total_executions',
  messages_sent: 'total_messages_sent',
  messages_received: 'total_messages_received',
};

/** A metric name or alias as the metric it names; undefined for anything else. */
export function reportMetric(name: string): ReportMetric | undefined {
  if ((REPORT_METRICS as readonly string[]).includes(name)) return name as ReportMetric;
  return Object.hasOwn(REPORT_METRIC_ALIASES, name) ? REPORT_METRIC_ALIASES[name] : undefined;
}

export const REPORT_GROUPS = ['workflow', 'channel'] as const;
export type ReportGroup = (typeof REPORT_GROUPS)[number];

export const REPORT_FORMATS = ['csv', 'json', 'pdf'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export interface ReportSpec {
  organizationId: string;
  /** Whole UTC hours: [start, end). */
  start: Date;
  end: Date;
  granularity: 'hour' | 'day' | 'week' | 'month';
  timezone: string;
  workflowIds: string[] | null;
  groupBy: ReportGroup[];
  metrics: ReportMetric[];
}

export interface ReportRow {
  bucket: Date;
  workflow_id?: string;
  workflow_name?: string;
  channel?: string;
  total_executions: number;
  successful_executions: number;
  failed_executions: number;
  success_rate: number | null;
  average_duration_ms: number | null;
  total_messages_sent: number;
  total_messages_received: number;
  unique_customers: number;
  customer_satisfaction: number | null;
  messages_delivered: number | null;
  messages_read: number | null;
  delivery_rate: number | null;
  read_rate: number | null;
  handoff_rate: number | null;
}

/**
 * One statement. Without grouping every bucket of the period is present (zeros and null rates for
 * a bucket with no executions, so a chart has no gaps); grouped rows exist only where there was
 * activity. Runs in a transaction whose TimeZone is the report's (the caller sets it), which is
 * what date_trunc and the bucket series follow, daylight-saving changes included.
 * Counts, durations and messages come from the hourly rollups; distinct customers from the
 * executions and satisfaction from the rating answers (execution_answers), and the executions a
 * handoff ended (handoff_rate) from the executions, read only when those metrics are asked for. An execution counts in the bucket of the UTC hour it started in, as in the
 * rollups, so that every figure of a row covers the same executions.
 * $1 organization, $2 start, $3 end (exclusive), $4 granularity, $5 workflow ids or null.
 */
export function reportSql(groupBy: readonly ReportGroup[], metrics: readonly ReportMetric[] = REPORT_METRICS): string {
  const byWorkflow = groupBy.includes('workflow');
  const byChannel = groupBy.includes('channel');
  const withCustomers = metrics.includes('unique_customers');
  const withSatisfaction = metrics.includes('customer_satisfaction');
  const withDeliveries = (['messages_delivered', 'messages_read', 'delivery_rate', 'read_rate'] as const).some((m) => metrics.includes(m));
  const withHandoffs = metrics.includes('handoff_rate');
  const keys = [byWorkflow ? 'h.workflow_id' : null, byChannel ? 'h.channel' : null].filter(Boolean) as string[];
  const groupNumbers = keys.map((_, i) => `, ${i + 2}`).join('');
  const aggregated = `
    SELECT date_trunc($4, h.hour) AS bucket${keys.map((k) => `, ${k}`).join('')},
           sum(h.executions)::float8 AS executions, sum(h.successful)::float8 AS successful, sum(h.failed)::float8 AS failed,
           sum(h.duration_sum)::float8 AS duration_sum, sum(h.messages_sent)::float8 AS messages_sent, sum(h.messages_received)::float8 AS messages_received
      FROM workflows w
      JOIN workflow_execution_hours h ON h.workflow_id = w.id AND h.hour >= $2 AND h.hour < $3
     WHERE w.organization_id = $1 AND ($5::uuid[] IS NULL OR w.id = ANY ($5::uuid[]))
     GROUP BY 1${groupNumbers}`;
  /** The row keys of a source `x` with started_at, workflow_id and channel, bucketed by the UTC hour it started in. */
  const rowKeys = (x: string) =>
    `date_trunc($4, date_trunc('hour', ${x}.started_at, 'UTC')) AS bucket${byWorkflow ? `, ${x}.workflow_id` : ''}${byChannel ? `, COALESCE(${x}.channel, 'unknown') AS channel` : ''}`;
  const customers = `
    SELECT ${rowKeys('e')}, ${distinctCustomers('e.customer_ref')} AS unique_customers
      FROM workflows w
      JOIN workflow_executions e ON e.workflow_id = w.id AND e.started_at >= $2 AND e.started_at < $3
     WHERE w.organization_id = $1 AND ($5::uuid[] IS NULL OR w.id = ANY ($5::uuid[]))
     GROUP BY 1${groupNumbers}`;
  const satisfaction = `
    SELECT ${rowKeys('r')}, ${meanRating('r.rating_sum', 'r.ratings')} AS customer_satisfaction
      FROM execution_answers r
     WHERE r.organization_id = $1 AND r.started_at >= $2 AND r.started_at < $3 AND ($5::uuid[] IS NULL OR r.workflow_id = ANY ($5::uuid[]))
     GROUP BY 1${groupNumbers}`;
  const deliveries = `
    SELECT date_trunc($4, h.hour) AS bucket${keys.map((k) => `, ${k}`).join('')},
           sum(h.concluded)::float8 AS concluded, sum(h.delivered)::float8 AS delivered, sum(h.read)::float8 AS read
      FROM workflows w
      JOIN workflow_delivery_hours h ON h.workflow_id = w.id AND h.hour >= $2 AND h.hour < $3
     WHERE w.organization_id = $1 AND ($5::uuid[] IS NULL OR w.id = ANY ($5::uuid[]))
     GROUP BY 1${groupNumbers}`;
  const handoffs = `
    SELECT ${rowKeys('e')}, count(*)::float8 AS handed_off
      FROM workflows w
      JOIN workflow_executions e ON e.workflow_id = w.id AND e.started_at >= $2 AND e.started_at < $3
     WHERE w.organization_id = $1 AND ($5::uuid[] IS NULL OR w.id = ANY ($5::uuid[])) AND e.status = 'failed' AND e.error->>'code' = '${HANDED_OFF_CODE}'
     GROUP BY 1${groupNumbers}`;
  const extra = `${withCustomers ? `, c AS (${customers})` : ''}${withSatisfaction ? `, s AS (${satisfaction})` : ''}${withDeliveries ? `, d AS (${deliveries})` : ''}${withHandoffs ? `, o AS (${handoffs})` : ''}`;
  /** The joins of c, s, d and o to the rows of `on` (its bucket and keys). */
  const join = (on: string) =>
    ['c', 's', 'd', 'o']
      .filter((x) => (x === 'c' ? withCustomers : x === 's' ? withSatisfaction : x === 'd' ? withDeliveries : withHandoffs))
      .map((x) => ` LEFT JOIN ${x} ON ${x}.bucket = ${on}.bucket${byWorkflow ? ` AND ${x}.workflow_id = a.workflow_id` : ''}${byChannel ? ` AND ${x}.channel = a.channel` : ''}`)
      .join('');
  const delivery = withDeliveries
    ? `CASE WHEN d.concluded > 0 THEN d.delivered END AS messages_delivered, CASE WHEN d.concluded > 0 THEN d.read END AS messages_read,
       d.delivered / NULLIF(d.concluded, 0) AS delivery_rate, CASE WHEN d.concluded > 0 THEN d.read / NULLIF(d.delivered, 0) END AS read_rate`
    : 'NULL::float8 AS messages_delivered, NULL::float8 AS messages_read, NULL::float8 AS delivery_rate, NULL::float8 AS read_rate';
  const handoffRate = withHandoffs ? 'COALESCE(o.handed_off, 0) / NULLIF(a.executions, 0) AS handoff_rate' : 'NULL::float8 AS handoff_rate';
  const people = `${withCustomers ? 'COALESCE(c.unique_customers, 0)' : '0'} AS unique_customers, ${withSatisfaction ? 's.customer_satisfaction' : 'NULL::float8'} AS customer_satisfaction, ${delivery}, ${handoffRate}`;
  if (keys.length === 0) {
    return `
      WITH a AS (${aggregated}),
      buckets AS (SELECT generate_series(date_trunc($4, $2::timestamptz), $3::timestamptz - interval '1 microsecond', ('1 ' || $4)::interval) AS bucket)${extra}
      SELECT b.bucket, COALESCE(a.executions, 0) AS total_executions, COALESCE(a.successful, 0) AS successful_executions,
             COALESCE(a.failed, 0) AS failed_executions, a.successful / NULLIF(a.successful + a.failed, 0) AS success_rate,
             round((a.duration_sum / NULLIF(a.successful + a.failed, 0))::numeric)::float8 AS average_duration_ms,
             COALESCE(a.messages_sent, 0) AS total_messages_sent, COALESCE(a.messages_received, 0) AS total_messages_received, ${people}
        FROM buckets b LEFT JOIN a ON a.bucket = b.bucket${join('b')}
       ORDER BY b.bucket`;
  }
  return `
    WITH a AS (${aggregated} HAVING sum(h.executions) <> 0 OR sum(h.messages_sent) <> 0 OR sum(h.messages_received) <> 0)${extra}
    SELECT a.bucket${byWorkflow ? ', a.workflow_id, w.name AS workflow_name' : ''}${byChannel ? ', a.channel' : ''},
           a.executions AS total_executions, a.successful AS successful_executions, a.failed AS failed_executions,
           a.successful / NULLIF(a.successful + a.failed, 0) AS success_rate,
           round((a.duration_sum / NULLIF(a.successful + a.failed, 0))::numeric)::float8 AS average_duration_ms,
           a.messages_sent AS total_messages_sent, a.messages_received AS total_messages_received, ${people}
      FROM a ${byWorkflow ? 'JOIN workflows w ON w.id = a.workflow_id' : ''}${join('a')}
     ORDER BY a.bucket${byWorkflow ? ', w.name, a.workflow_id' : ''}${byChannel ? ', a.channel' : ''}`;
}

/** The columns of a report file, in order: the bucket, the groups, then the chosen metrics. */
export function reportColumns(spec: Pick<ReportSpec, 'groupBy' | 'metrics'>): string[] {
  const columns = ['bucket'];
  if (spec.groupBy.includes('workflow')) columns.push('workflow_id', 'workflow_name');
  if (spec.groupBy.includes('channel')) columns.push('channel');
  return [...columns, ...spec.metrics];
}
