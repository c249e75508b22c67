import { distinctCustomers, meanRating } from '../analytics-sql.js';

/**
 * What each export `data_type` holds and the one statement that streams it. Every statement starts
 * from the organization's own parent rows (workflows, triggers, customers, webhooks) through their
 * (organization_id, created_at, id) index and reads each parent's rows through its (parent, time)
 * index, so an export costs what the organization holds, never what other organizations hold, and
 * needs no organization-wide time index on the high-volume tables (the write cost of one was
 * measured and dropped in migration DropUnreadIndexes). Rows therefore come grouped by parent, in
 * time order within each parent.
 *
 * Parameters: $1 organization, $2 period start, $3 period end (inclusive), $4 workflow ids or null,
 * $5 channels or null.
 */
export const EXPORT_DATA_TYPES = ['workflow_metrics', 'executions', 'trigger_executions', 'webhook_logs', 'customers', 'messages'] as const;
export type ExportDataType = (typeof EXPORT_DATA_TYPES)[number];

export const EXPORT_FORMATS = ['csv', 'json'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export interface ExportDataset {
  description: string;
  /** Columns in order; `metadata` columns only with include_metadata. */
  columns: readonly string[];
  /** JSON columns, selected as JSON text: written as they are (CSV cell, or raw JSON in NDJSON). */
  metadata: readonly string[];
  /** Whether the filters apply (a filter that does not is refused rather than ignored). */
  workflowFilter: boolean;
  channelFilter: boolean;
  /**
   * Planned with enable_seqscan off (SET LOCAL in the file's transaction). The planner estimates a
   * parent's rows from the table's statistics, not from that parent: where one workflow holds most
   * rows it expects every workflow to hold them all, and scans the whole table once per parent.
   */
  indexReadsOnly?: true;
  sql: string;
}

const wf = (column: string) => `($4::uuid[] IS NULL OR ${column} = ANY ($4::uuid[]))`;
const ch = (column: string) => `($5::text[] IS NULL OR ${column} = ANY ($5::text[]))`;
/** workflow_metrics' period: the whole UTC days of `$2..$3`. */
const DAYS_FROM = `date_trunc('day', $2::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`;
const DAYS_TO = `(date_trunc('day', $3::timestamptz AT TIME ZONE 'UTC') + interval '1 day') AT TIME ZONE 'UTC'`;

export const EXPORT_DATASETS: Readonly<Record<ExportDataType, ExportDataset>> = {
  workflow_metrics: {
    description:
      'One row per workflow and UTC day with executions or messages: counts by status, success rate, mean duration, messages sent and received ' +
      '(from the hourly rollups), distinct customers of the executions started that day and the mean of their form ratings (null without one), ' +
      'as the workflow analytics and reports compute them; the period is widened to whole UTC days',
    // The names of the workflow analytics and of report columns.
    columns: [
      'workflow_id', 'workflow_name', 'date', 'total_executions', 'successful_executions', 'failed_executions', 'success_rate', 'average_duration_ms',
      'total_messages_sent', 'total_messages_received', 'unique_customers', 'customer_satisfaction',
    ],
    metadata: [],
    workflowFilter: true,
    channelFilter: true,
    indexReadsOnly: true,
    // Per workflow, each source is read once for the whole period through its (workflow_id, time)
    // index and grouped by UTC day, then the three are joined by day: the rollup days decide which
    // rows exist; customers and ratings (as in report-data.ts: an execution counts on the UTC day it
    // started, in its channel or 'unknown') are 0 / null where a day has none. The executions'
    // bounds are row comparisons on (workflow_id, started_at), which only that index serves (with
    // `workflow_id = w.id` the planner took the (organization_id, started_at) index, reading every
    // organization's executions of the period: docs/PERFORMANCE.md).
    sql: `
      SELECT w.id AS workflow_id, w.name AS workflow_name, to_char(d.day, 'YYYY-MM-DD') AS date, d.executions AS total_executions,
             d.successful AS successful_executions, d.failed AS failed_executions, d.successful::float8 / NULLIF(d.successful + d.failed, 0) AS success_rate,
             round(d.duration_sum::numeric / NULLIF(d.successful + d.failed, 0))::int AS average_duration_ms, d.messages_sent AS total_messages_sent,
             d.messages_received AS total_messages_received, d.unique_customers, d.customer_satisfaction
        FROM workflows w
        CROSS JOIN LATERAL (
          SELECT h.*, COALESCE(c.unique_customers, 0) AS unique_customers, r.customer_satisfaction
            FROM (
              SELECT date_trunc('day', h.hour AT TIME ZONE 'UTC') AS day, sum(h.executions)::bigint AS executions, sum(h.successful)::bigint AS successful,
                     sum(h.failed)::bigint AS failed, sum(h.duration_sum)::bigint AS duration_sum,
                     sum(h.messages_sent)::bigint AS messages_sent, sum(h.messages_received)::bigint AS messages_received
                FROM workflow_execution_hours h
               WHERE h.workflow_id = w.id AND h.hour >= ${DAYS_FROM} AND h.hour < ${DAYS_TO} AND ${ch('h.channel')}
               GROUP BY 1 HAVING sum(h.executions) <> 0 OR sum(h.messages_sent) <> 0 OR sum(h.messages_received) <> 0
            ) h
            LEFT JOIN (
              SELECT date_trunc('day', e.started_at AT TIME ZONE 'UTC') AS day, ${distinctCustomers('e.customer_ref')} AS unique_customers
                FROM workflow_executions e
               WHERE (e.workflow_id, e.started_at) >= (w.id, ${DAYS_FROM}) AND (e.workflow_id, e.started_at) < (w.id, ${DAYS_TO}) AND ${ch(`COALESCE(e.channel, 'unknown')`)}
               GROUP BY 1
            ) c ON c.day = h.day
            LEFT JOIN (
              SELECT date_trunc('day', a.started_at AT TIME ZONE 'UTC') AS day, ${meanRating('a.rating_sum', 'a.ratings')} AS customer_satisfaction
                FROM execution_answers a
               WHERE a.workflow_id = w.id AND a.started_at >= ${DAYS_FROM} AND a.started_at < ${DAYS_TO} AND ${ch(`COALESCE(a.channel, 'unknown')`)}
               GROUP BY 1
            ) r ON r.day = h.day
        ) d
       WHERE w.organization_id = $1 AND ${wf('w.id')}
       ORDER BY w.created_at, w.id, d.day`,
  },
  executions: {
    description: 'Workflow executions started in the period',
    columns: ['id', 'workflow_id', 'workflow_version', 'trigger_id', 'status', 'channel', 'customer_id', 'started_at', 'completed_at', 'duration_ms', 'error_code'],
    metadata: ['input', 'output', 'error'],
    workflowFilter: true,
    channelFilter: true,
    sql: `
      SELECT e.id, e.workflow_id, e.workflow_version, e.trigger_id, e.status, e.channel, e.customer_ref AS customer_id, e.started_at, e.completed_at,
             e.duration_ms, e.error->>'code' AS error_code, e.input::text AS input, e.output::text AS output, e.error::text AS error
        FROM workflows w
        CROSS JOIN LATERAL (
          SELECT * FROM workflow_executions e
           WHERE e.workflow_id = w.id AND e.started_at >= $2 AND e.started_at <= $3 AND ${ch('e.channel')}
           ORDER BY e.started_at, e.id
        ) e
       WHERE w.organization_id = $1 AND ${wf('w.id')}`,
  },
  trigger_executions: {
    description: 'Trigger firings in the period',
    columns: ['id', 'trigger_id', 'trigger_name', 'workflow_id', 'workflow_execution_id', 'status', 'channel', 'triggered_at', 'completed_at', 'duration_ms', 'error_code'],
    metadata: ['input', 'error'],
    workflowFilter: true,
    channelFilter: true,
    sql: `
      SELECT te.id, t.id AS trigger_id, t.name AS trigger_name, te.workflow_id, te.workflow_execution_id, te.status, te.input->>'channel' AS channel,
             te.triggered_at, te.completed_at, te.duration_ms, te.error->>'code' AS error_code, te.input::text AS input, te.error::text AS error
        FROM triggers t
        CROSS JOIN LATERAL (
          SELECT * FROM trigger_executions te
           WHERE te.trigger_id = t.id AND te.triggered_at >= $2 AND te.triggered_at <= $3 AND ${ch(`te.input->>'channel'`)}
           ORDER BY te.triggered_at, te.id
        ) te
       WHERE t.organization_id = $1 AND ${wf('t.workflow_id')}`,
  },
  webhook_logs: {
    description: 'Webhook delivery attempts made in the period',
    columns: ['id', 'webhook_id', 'webhook_url', 'delivery_id', 'event_type', 'attempt', 'status', 'response_code', 'response_time_ms', 'delivered_at', 'error_message'],
    metadata: [],
    workflowFilter: false,
    channelFilter: false,
    sql: `
      SELECT a.id, wh.id AS webhook_id, wh.url AS webhook_url, a.delivery_id, a.event_type, a.attempt, a.status, a.response_code, a.response_time_ms,
             a.delivered_at, a.error_message
        FROM webhooks wh
        CROSS JOIN LATERAL (
          SELECT * FROM webhook_delivery_attempts a
           WHERE a.webhook_id = wh.id AND a.delivered_at >= $2 AND a.delivered_at <= $3
           ORDER BY a.id
        ) a
       WHERE wh.organization_id = $1 AND $4::uuid[] IS NULL AND $5::text[] IS NULL`,
  },
  customers: {
    description: 'Customers seen in the period (first seen before its end and last seen after its start)',
    columns: ['customer_id', 'channel', 'language', 'first_seen_at', 'last_seen_at', 'created_at'],
    metadata: ['attributes'],
    workflowFilter: false,
    channelFilter: true,
    sql: `
      SELECT c.external_id AS customer_id, c.channel, c.language, c.first_seen_at, c.last_seen_at, c.created_at, c.attributes::text AS attributes
        FROM customers c
       WHERE c.organization_id = $1 AND c.first_seen_at <= $3 AND c.last_seen_at >= $2 AND ${ch('c.channel')} AND $4::uuid[] IS NULL
       ORDER BY c.created_at, c.id`,
  },
  messages: {
    description: 'Messages sent and received in the period, grouped by customer',
    columns: ['id', 'customer_id', 'channel', 'direction', 'content', 'language', 'workflow_id', 'execution_id', 'node_id', 'created_at'],
    metadata: ['metadata'],
    workflowFilter: true,
    channelFilter: true,
    sql: `
      SELECT m.id, c.external_id AS customer_id, m.channel, m.direction, m.content, m.language, e.workflow_id, m.execution_id, m.node_id, m.created_at,
             m.metadata::text AS metadata
        FROM customers c
        CROSS JOIN LATERAL (
          SELECT * FROM messages m
           WHERE m.customer_id = c.id AND m.created_at >= $2 AND m.created_at <= $3 AND ${ch('m.channel')}
           ORDER BY m.created_at, m.id
        ) m
        LEFT JOIN workflow_executions e ON e.id = m.execution_id
       WHERE c.organization_id = $1 AND ($4::uuid[] IS NULL OR e.workflow_id = ANY ($4::uuid[]))`,
  },
};

/** The OpenAPI description of `data_type`. */
export function exportDataTypesDescription(): string {
  return EXPORT_DATA_TYPES.map((type) => {
    const d = EXPORT_DATASETS[type];
    const meta = d.metadata.length > 0 ? `; with include_metadata also ${d.metadata.join(', ')}` : '';
    return `- \`${type}\`: ${d.description}. Columns: ${d.columns.join(', ')}${meta}.`;
  }).join('\n');
}
