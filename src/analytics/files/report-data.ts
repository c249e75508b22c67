/**
 * The rows of a report: workflow metrics per time bucket, from the hourly rollups (migration
 * ExecutionRollups), optionally split by workflow and channel. A bucket starts at the local
 * midnight (or hour, Monday, first of the month) of the report's `timezone`; the rollup hours are
 * UTC hours, so in a zone whose offset is not a whole number of hours (Asia/Kolkata) an hour counts
 * in the bucket where it starts. The period is widened to whole hours: a report describes the hours
 * it covers, and says which (`period_start`, `period_end` in the file).
 */
export const REPORT_METRICS = [
  'executions',
  'successful_executions',
  'failed_executions',
  'success_rate',
  'average_duration_ms',
  'messages_sent',
  'messages_received',
] as const;
export type ReportMetric = (typeof REPORT_METRICS)[number];

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
  executions: number;
  successful_executions: number;
  failed_executions: number;
  success_rate: number | null;
  average_duration_ms: number | null;
  messages_sent: number;
  messages_received: number;
}

/**
 * One statement. Without grouping every bucket of the period is present (zeros and null rates for
 * a bucket with no executions, so a chart has no gaps); grouped rows exist only where there was
 * activity. Runs in a transaction whose TimeZone is the report's (the caller sets it), which is
 * what date_trunc and the bucket series follow, daylight-saving changes included.
 * $1 organization, $2 start, $3 end (exclusive), $4 granularity, $5 workflow ids or null.
 */
export function reportSql(groupBy: readonly ReportGroup[]): string {
  const byWorkflow = groupBy.includes('workflow');
  const byChannel = groupBy.includes('channel');
  const keys = [byWorkflow ? 'h.workflow_id' : null, byChannel ? 'h.channel' : null].filter(Boolean) as string[];
  const aggregated = `
    SELECT date_trunc($4, h.hour) AS bucket${keys.map((k) => `, ${k}`).join('')},
           sum(h.executions)::float8 AS executions, sum(h.successful)::float8 AS successful, sum(h.failed)::float8 AS failed,
           sum(h.duration_sum)::float8 AS duration_sum, sum(h.messages_sent)::float8 AS messages_sent, sum(h.messages_received)::float8 AS messages_received
      FROM workflows w
      JOIN workflow_execution_hours h ON h.workflow_id = w.id AND h.hour >= $2 AND h.hour < $3
     WHERE w.organization_id = $1 AND ($5::uuid[] IS NULL OR w.id = ANY ($5::uuid[]))
     GROUP BY 1${keys.map((_, i) => `, ${i + 2}`).join('')}`;
  const figures = `
    a.executions, a.successful AS successful_executions, a.failed AS failed_executions,
    a.successful / NULLIF(a.successful + a.failed, 0) AS success_rate,
    round((a.duration_sum / NULLIF(a.successful + a.failed, 0))::numeric)::float8 AS average_duration_ms,
    a.messages_sent, a.messages_received`;
  if (keys.length === 0) {
    return `
      WITH a AS (${aggregated}),
      buckets AS (SELECT generate_series(date_trunc($4, $2::timestamptz), $3::timestamptz - interval '1 microsecond', ('1 ' || $4)::interval) AS bucket)
      SELECT b.bucket, COALESCE(a.executions, 0) AS executions, COALESCE(a.successful, 0) AS successful_executions,
             COALESCE(a.failed, 0) AS failed_executions, a.successful / NULLIF(a.successful + a.failed, 0) AS success_rate,
             round((a.duration_sum / NULLIF(a.successful + a.failed, 0))::numeric)::float8 AS average_duration_ms,
             COALESCE(a.messages_sent, 0) AS messages_sent, COALESCE(a.messages_received, 0) AS messages_received
        FROM buckets b LEFT JOIN a ON a.bucket = b.bucket
       ORDER BY b.bucket`;
  }
  return `
    WITH a AS (${aggregated} HAVING sum(h.executions) <> 0 OR sum(h.messages_sent) <> 0 OR sum(h.messages_received) <> 0)
    SELECT a.bucket${byWorkflow ? ', a.workflow_id, w.name AS workflow_name' : ''}${byChannel ? ', a.channel' : ''}, ${figures}
      FROM a ${byWorkflow ? 'JOIN workflows w ON w.id = a.workflow_id' : ''}
     ORDER BY a.bucket${byWorkflow ? ', w.name, a.workflow_id' : ''}${byChannel ? ', a.channel' : ''}`;
}

/** The columns of a report file, in order: the bucket, the groups, then the chosen metrics. */
export function reportColumns(spec: Pick<ReportSpec, 'groupBy' | 'metrics'>): string[] {
  const columns = ['bucket'];
  if (spec.groupBy.includes('workflow')) columns.push('workflow_id', 'workflow_name');
  if (spec.groupBy.includes('channel')) columns.push('channel');
  return [...columns, ...spec.metrics];
}
