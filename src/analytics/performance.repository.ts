import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { SqlStatement } from '../database/sql-statement.js';
import { foldRollups } from '../rollups/rollup-folder.js';
import { splitPeriod } from '../common/period-split.js';
import { journeySplit, NODE_FACTS, splitValues, STATUS_FIGURES, WORKFLOW_EXECUTIONS, type JourneySplit } from './analytics-sql.js';

export interface PerformanceRow {
  executions: number;
  finished: number;
  failed: number;
  average_ms: number | null;
  median_ms: number | null;
  p95_ms: number | null;
  p99_ms: number | null;
  peak_hour: string | null;
  peak_executions: number | null;
  errors: Record<string, number> | null;
}

/**
 * How `/performance` reads a period `[start, end]`: the whole UTC days `[daysFrom, daysTo)` inside
 * it from the day rollups, the rest — the partial days at both ends, whatever the zone — from the
 * executions, `[start, daysFrom)` and `[daysTo, end]` (no whole day: daysFrom = daysTo = start).
 * The duration buckets of the whole UTC months `[monthsFrom, monthsTo)` inside the whole days come
 * from the month rows (no whole month: monthsFrom = monthsTo = daysFrom).
 */
export interface DaySplit {
  daysFrom: Date;
  daysTo: Date;
  monthsFrom: Date;
  monthsTo: Date;
}


/** The first instant of the UTC month of `ms`, `offset` months on. */
function utcMonth(ms: number, offset: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + offset, 1);
}

export function splitDays(start: Date, end: Date): DaySplit {
  // `end` is inclusive to the millisecond: a day is whole when its last millisecond is in the period.
  const split = splitPeriod(start, end, { unit: 'day', way: 'inside', wholeLastMillisecond: true });
  const [from, to] = [split.wholeFrom / 1000, split.wholeTo / 1000];
  if (from >= to) return { daysFrom: start, daysTo: start, monthsFrom: start, monthsTo: start };
  const firstMonth = utcMonth(from, 0) === from ? from : utcMonth(from, 1);
  const lastMonth = utcMonth(to, 0);
  const months = firstMonth < lastMonth ? [firstMonth, lastMonth] : [from, from];
  return { daysFrom: new Date(from), daysTo: new Date(to), monthsFrom: new Date(months[0]), monthsTo: new Date(months[1]) };
}

/** The executions of the partial days at the ends of the period (`$5`/`$6` as in splitDays), `$1` organization, `$2` workflow. */
const PERFORMANCE_EDGES = `
  SELECT we.status, we.duration_ms, COALESCE(we.channel, 'unknown') AS channel, we.error->>'code' AS code, we.started_at
    FROM workflow_executions we
   WHERE we.workflow_id = $2 AND we.organization_id = $1 AND we.started_at >= $3 AND we.started_at < $5
  UNION ALL
  SELECT we.status, we.duration_ms, COALESCE(we.channel, 'unknown'), we.error->>'code', we.started_at
    FROM workflow_executions we
   WHERE we.workflow_id = $2 AND we.organization_id = $1 AND we.started_at >= $6 AND we.started_at <= $4`;

/**
 * Median, p95 and p99 of the finished executions' recorded durations, with percentile_cont's
 * definition (the values at ranks floor and ceil of p·(n-1), interpolated), over a multiset of
 * (value, count): per duration bucket of the whole days its value (workflow_duration_months for
 * the whole UTC months `[$7, $8)`, workflow_duration_days for the other whole days;
 * duration_bucket_value: within 0.9901 % of every duration in the bucket) and the exact durations
 * of the partial days. Each value being within 0.9901 % of the duration it stands for, so is each
 * order statistic, and so is their interpolation: the result is within 0.9901 % of the exact
 * percentile (and exact for a period without whole UTC days). `$1` organization, `$2` workflow,
 * `$3..$4` period, `$5..$6` whole days.
 */
const PERFORMANCE_PERCENTILES = new SqlStatement<{ median_ms: number | null; p95_ms: number | null; p99_ms: number | null }>(`
  WITH edge AS MATERIALIZED (
    SELECT duration_ms FROM (${PERFORMANCE_EDGES}) e WHERE status <> 'running' AND duration_ms IS NOT NULL
  ), v AS (
    SELECT duration_bucket_value(bucket) AS value, sum(executions)::bigint AS n
      FROM (SELECT h.bucket, h.executions FROM workflow_duration_months h
             WHERE h.workflow_id = $2 AND h.organization_id = $1 AND h.month >= $7 AND h.month < $8
            UNION ALL
            SELECT h.bucket, h.executions FROM workflow_duration_days h
             WHERE h.workflow_id = $2 AND h.organization_id = $1 AND h.day >= $5 AND h.day < $7
            UNION ALL
            SELECT h.bucket, h.executions FROM workflow_duration_days h
             WHERE h.workflow_id = $2 AND h.organization_id = $1 AND h.day >= $8 AND h.day < $6) b
     GROUP BY bucket
    UNION ALL
    SELECT duration_ms::float8, count(*) FROM edge GROUP BY duration_ms
  ), c AS MATERIALIZED (
    SELECT value, sum(n) OVER (ORDER BY value ROWS UNBOUNDED PRECEDING) - n AS before, n FROM v WHERE n > 0
  ), p AS (
    SELECT q.i, q.q * (t.n - 1) AS pos
      FROM (SELECT sum(n)::bigint AS n FROM c) t, unnest(ARRAY[0.5, 0.95, 0.99]::float8[]) WITH ORDINALITY AS q(q, i)
     WHERE t.n > 0
  ), r AS (
    SELECT p.i, lo.value + (p.pos - floor(p.pos)) * (hi.value - lo.value) AS value
      FROM p
      CROSS JOIN LATERAL (SELECT c.value FROM c WHERE c.before <= floor(p.pos) ORDER BY c.value DESC LIMIT 1) lo
      CROSS JOIN LATERAL (SELECT c.value FROM c WHERE c.before <= ceil(p.pos) ORDER BY c.value DESC LIMIT 1) hi
  )
  SELECT max(value) FILTER (WHERE i = 1) AS median_ms, max(value) FILTER (WHERE i = 2) AS p95_ms, max(value) FILTER (WHERE i = 3) AS p99_ms FROM r`);

export interface PerformanceCountRow {
  /** `total`, `channel` (key: the channel), `error` (key: the error code) or `peak` (key: the local hour HH:00). */
  kind: 'total' | 'channel' | 'error' | 'peak';
  key: string | null;
  executions: number;
  successful: number;
  failed: number;
  /** avg(duration_ms) of the finished executions (float8), and rounded (half away from zero), as the raw statements compute them. */
  average_ms: number | null;
  average_duration_ms: number | null;
  success_rate: number | null;
}

/**
 * Everything of `/performance` but the percentiles, exactly, from the rollups of the whole UTC
 * days `[$5, $6)` and the executions of the partial days:
 * - executions, successful, failed and the duration sum per channel and overall from
 *   workflow_execution_days; the number of finished executions with a recorded duration (the
 *   denominator of avg(duration_ms)) as the sum of the day rows' duration histogram cells;
 * - failed executions per error code from workflow_error_days;
 * - the busiest local clock hour (in zone `$7`; ties: the earliest) from workflow_execution_hours
 *   when `$8` (the zone's offsets over the period are whole hours, so that a UTC hour lies in one
 *   local hour), else from the executions of the whole period.
 */
const PERFORMANCE_COUNTS = new SqlStatement<PerformanceCountRow>(`
  WITH edge AS MATERIALIZED (${PERFORMANCE_EDGES}),
  facts AS (
    SELECT channel, 1 AS executions, (status = 'success')::int AS successful, (status = 'failed')::int AS failed,
           CASE WHEN status <> 'running' THEN duration_ms END::bigint AS duration_sum,
           (status <> 'running' AND duration_ms IS NOT NULL)::int AS timed
      FROM edge
    UNION ALL
    SELECT d.channel, d.executions, d.successful, d.failed, d.duration_sum, (SELECT sum(x) FROM unnest(d.duration_histogram) x)::int
      FROM workflow_execution_days d
     WHERE d.workflow_id = $2 AND d.organization_id = $1 AND d.day >= $5 AND d.day < $6
  ), hours AS (
    SELECT h.hour AS at, h.executions AS n
      FROM workflow_execution_hours h
     WHERE h.workflow_id = $2 AND h.organization_id = $1 AND h.hour >= $5 AND h.hour < $6 AND $8::boolean
    UNION ALL
    SELECT started_at, 1 FROM edge WHERE $8::boolean
    UNION ALL
    SELECT we.started_at, 1 FROM workflow_executions we
     WHERE we.workflow_id = $2 AND we.organization_id = $1 AND we.started_at >= $3 AND we.started_at <= $4 AND NOT $8::boolean
  )
  SELECT CASE WHEN GROUPING(channel) = 0 THEN 'channel' ELSE 'total' END AS kind, channel AS key,
         COALESCE(sum(executions), 0)::int AS executions, COALESCE(sum(successful), 0)::int AS successful,
         COALESCE(sum(failed), 0)::int AS failed,
         (sum(duration_sum)::numeric / NULLIF(sum(timed), 0))::float8 AS average_ms,
         round(sum(duration_sum)::numeric / NULLIF(sum(timed), 0))::int AS average_duration_ms,
         sum(successful)::float8 / NULLIF(sum(successful) + sum(failed), 0) AS success_rate
    FROM facts
   GROUP BY GROUPING SETS ((channel), ())
  -- Rollup rows can hold zeros (after a deletion): a channel shows only with executions.
  HAVING sum(executions) <> 0 OR GROUPING(channel) = 1
  UNION ALL
  SELECT 'error', code, 0, 0, sum(n)::int, NULL, NULL, NULL
    FROM (SELECT COALESCE(code, 'UNKNOWN') AS code, 1 AS n FROM edge WHERE status = 'failed'
          UNION ALL
          SELECT e.code, e.failed FROM workflow_error_days e WHERE e.workflow_id = $2 AND e.organization_id = $1 AND e.day >= $5 AND e.day < $6) x
   GROUP BY code HAVING sum(n) <> 0
  UNION ALL
  (SELECT 'peak', to_char(h, 'HH24:00'), n, 0, 0, NULL, NULL, NULL
     FROM (SELECT date_trunc('hour', at AT TIME ZONE $7) AS h, sum(n)::int AS n FROM hours GROUP BY 1) x
    WHERE n > 0 ORDER BY n DESC, h LIMIT 1)`);

/** The raw definitions the rollups reproduce, for the test that compares them (test/e2e/performance-rollups.e2e-spec.ts). */
export const PERFORMANCE_RAW = `
  WITH e AS MATERIALIZED (${WORKFLOW_EXECUTIONS})
  SELECT (SELECT count(*)::int FROM e) AS executions,
         t.finished, t.failed, t.average_ms, t.median_ms, t.p95_ms, t.p99_ms,
         p.peak_hour, p.peak_executions,
         (SELECT jsonb_object_agg(code, n) FROM (SELECT COALESCE(error->>'code', 'UNKNOWN') AS code, count(*)::int AS n
                                                 FROM e WHERE status = 'failed' GROUP BY 1) x) AS errors,
         (SELECT jsonb_object_agg(channel, jsonb_build_object('executions', executions, 'success_rate', success_rate, 'average_duration_ms', average_duration_ms))
            FROM (SELECT channel, ${STATUS_FIGURES} FROM e GROUP BY channel) c) AS channels
    FROM (SELECT count(*)::int AS finished, (count(*) FILTER (WHERE status = 'failed'))::int AS failed,
                 avg(duration_ms)::float8 AS average_ms,
                 percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS median_ms,
                 percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) AS p95_ms,
                 percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ms) AS p99_ms
            FROM e WHERE status <> 'running') t
    LEFT JOIN (SELECT to_char(h, 'HH24:00') AS peak_hour, n AS peak_executions
                 FROM (SELECT date_trunc('hour', started_at AT TIME ZONE $5) AS h, count(*)::int AS n FROM e GROUP BY 1) x
                ORDER BY n DESC, h LIMIT 1) p ON true`;

export interface ChannelPerformanceRow {
  channel: string;
  executions: number;
  success_rate: number | null;
  average_duration_ms: number | null;
}

export interface NodeRow {
  node_id: string;
  type: string;
  execution_count: number;
  success_rate: number;
  average_duration_ms: number;
  error_count: number;
}

/** `include_nodes`: per node and type, every step of the period's executions (a node visited twice in one execution has one step). */
const NODES = new SqlStatement<NodeRow>(`${NODE_FACTS}
  SELECT node_id, type, sum(steps)::int AS execution_count, sum(completed)::float8 / sum(steps) AS success_rate,
         round(sum(duration_sum)::numeric / sum(steps))::int AS average_duration_ms, sum(failed)::int AS error_count
    FROM facts GROUP BY node_id, type HAVING sum(steps) <> 0 ORDER BY node_id, type`);

/** The statements as sent, for EXPLAIN scripts. */
export const PERFORMANCE_STATEMENTS = { PERFORMANCE_PERCENTILES, PERFORMANCE_COUNTS, NODES };

/** The statements of `GET /v1/analytics/workflows/{workflow_id}/performance`. */
@Injectable()
export class PerformanceRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * The figures of `/performance` (whole UTC days from the rollups, partial days from the
   * executions; `hourly`: the zone's offsets are whole hours, so the peak hour can come from the
   * hourly rollups) and the channel figures.
   */
  async performance(org: string, workflowId: string, start: Date, end: Date, tz: string, hourly: boolean): Promise<{ row: PerformanceRow; channels: ChannelPerformanceRow[] }> {
    // The duration, error and hour rollups are folded from change logs: everything logged so far first (RollupFolder).
    await foldRollups(this.dataSource);
    const { daysFrom, daysTo, monthsFrom, monthsTo } = splitDays(start, end);
    const values = [org, workflowId, start, end, daysFrom, daysTo];
    const [[percentiles], counts] = await Promise.all([
      PERFORMANCE_PERCENTILES.run(this.dataSource, [...values, monthsFrom, monthsTo]),
      PERFORMANCE_COUNTS.run(this.dataSource, [...values, tz, hourly]),
    ]);
    const total = counts.find((c) => c.kind === 'total')!;
    const peak = counts.find((c) => c.kind === 'peak');
    const errors = counts.filter((c) => c.kind === 'error');
    const row: PerformanceRow = {
      executions: total.executions,
      finished: total.successful + total.failed,
      failed: total.failed,
      average_ms: total.average_ms,
      median_ms: percentiles.median_ms,
      p95_ms: percentiles.p95_ms,
      p99_ms: percentiles.p99_ms,
      peak_hour: peak?.key ?? null,
      peak_executions: peak?.executions ?? null,
      errors: errors.length > 0 ? Object.fromEntries(errors.map((e) => [e.key as string, e.failed])) : null,
    };
    const channels = counts
      .filter((c) => c.kind === 'channel')
      .sort((a, b) => ((a.key as string) < (b.key as string) ? -1 : 1))
      .map((c) => ({ channel: c.key as string, executions: c.executions, success_rate: c.success_rate, average_duration_ms: c.average_duration_ms }));
    return { row, channels };
  }

  /** Node figures of the period: whole UTC days from the node rollups (`split` defaults to journeySplit). */
  async nodes(org: string, workflowId: string, start: Date, end: Date, split = journeySplit(start, end)): Promise<NodeRow[]> {
    await foldRollups(this.dataSource);
    return NODES.run(this.dataSource, [org, workflowId, ...splitValues(split)]);
  }
}
