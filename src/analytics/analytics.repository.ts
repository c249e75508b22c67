import type { DataSource } from 'typeorm';
import { SqlStatement } from '../database/sql-statement.js';
import { isoMicros, rawSplit, splitPeriod, type PeriodSplit } from '../common/period-split.js';
import type { PeriodSplit as HourSplit } from '../execution-metrics/execution-metrics.repository.js';
import { outcomeFacts } from './journey-facts.js';
import {
  DAY_FACTS,
  DAY_SETS,
  distinctFigures,
  engagementDayPlan,
  FOLD_DAY_SETS,
  halfOfDay,
  planValues,
  type DayFactRow,
  type DaySetRow,
  type EngagementDayPlan,
  type PlacedSet,
} from './engagement-days.js';

/**
 * The SQL of the analytics endpoints, written as SQL: every statement is scoped by organization
 * (`$1`) and reads the period through an index on (organization or workflow, time). The workflow
 * counts read the executions module's hourly rollups (workflow_execution_hours) for the whole
 * hours of the period when the zone's offsets are whole hours; `/performance` reads day rollups for
 * the whole UTC days of its period (docs/DECISIONS.md "Performance rollups (wt-perf)"); journeys,
 * node performance and the most-executed workflow read the journey day rollups
 * (workflow_outcome_days, workflow_node_days) for the whole UTC days and the rows for the partial
 * ends (journeySplit; docs/DECISIONS.md "Journeys and node figures from rollups (wt-journey)");
 * engagement and satisfaction read their own rollups (customer_sessions, customer_channels,
 * execution_answers: docs/DECISIONS.md "Engagement rollups (wt-engage)"); everything else is
 * computed from the recorded rows of the period (docs/DECISIONS.md "Analytics (wt-analytics)").
 * Buckets are local to `timezone`.
 */

/**
 * Every distinct-customer figure computed in SQL goes through here, so that the way distinct
 * customers are counted changes in one place. (Engagement's active customers are the exception:
 * unions of stored day sets, counted in src/analytics/engagement-days.ts.)
 */
export function distinctCustomers(column: string, where?: string): string {
  return `(count(DISTINCT ${column})${where ? ` FILTER (WHERE ${where})` : ''})::int`;
}

/** Status figures of a set of executions `e` (status, duration_ms): the arithmetic of the workflow metrics. */
const STATUS_FIGURES = `
  count(*)::int AS executions,
  (count(*) FILTER (WHERE status = 'success'))::int AS successful,
  (count(*) FILTER (WHERE status = 'failed'))::int AS failed,
  (count(*) FILTER (WHERE status = 'success'))::float8 / NULLIF(count(*) FILTER (WHERE status <> 'running'), 0) AS success_rate,
  round(avg(duration_ms) FILTER (WHERE status <> 'running'))::int AS average_duration_ms`;

/**
 * The rating (1..5) and nps (0..10) answers of the form steps of executions `e` (id, channel,
 * workflow_id, workflow_version, started_at, customer_id, organization_id), one row per execution
 * with answers: the columns of the execution_answers rollup. A field's type is read from the
 * version of the workflow the execution ran, so a later edit does not retype old answers. The raw
 * definition the rollup (migration EngagementRollups) keeps; read by the raw statements below.
 */
const ANSWERS = `
  SELECT e.id AS execution_id, e.organization_id, e.workflow_id, e.customer_id, e.channel, e.started_at,
         COALESCE(sum(a.value) FILTER (WHERE a.type = 'rating'), 0)::float8 AS rating_sum,
         (count(*) FILTER (WHERE a.type = 'rating'))::int AS ratings,
         (count(*) FILTER (WHERE a.type = 'nps' AND a.value >= 9))::int AS promoters,
         (count(*) FILTER (WHERE a.type = 'nps' AND a.value <= 6))::int AS detractors,
         (count(*) FILTER (WHERE a.type = 'nps'))::int AS nps_answers
    FROM e
    JOIN execution_steps s ON s.execution_id = e.id AND s.type = 'form'
    JOIN workflow_versions v ON v.workflow_id = e.workflow_id AND v.version = e.workflow_version
   CROSS JOIN LATERAL jsonb_array_elements(v.configuration->'nodes') n
   CROSS JOIN LATERAL jsonb_array_elements(COALESCE(n->'fields', '[]'::jsonb)) f
   CROSS JOIN LATERAL (SELECT f->>'type' AS type, (s.output->'answers'->>(f->>'name'))::float8 AS value) a
   WHERE n->>'id' = s.node_id AND f->>'type' IN ('rating', 'nps')
     AND jsonb_typeof(s.output->'answers'->(f->>'name')) = 'number'
   GROUP BY e.id, e.organization_id, e.workflow_id, e.customer_id, e.channel, e.started_at`;

const WORKFLOW_EXECUTIONS = `
  SELECT we.id, we.status, we.duration_ms, we.customer_ref, COALESCE(we.channel, 'unknown') AS channel, we.trigger_id,
         we.workflow_id, we.workflow_version, we.started_at, we.error
    FROM workflow_executions we
   WHERE we.organization_id = $1 AND we.workflow_id = $2 AND we.started_at >= $3 AND we.started_at <= $4`;

export interface GroupRow {
  /** Which grouping: bucket, channel, trigger, status, half (1 or 2) or total. */
  kind: 'bucket' | 'channel' | 'trigger' | 'status' | 'half' | 'total';
  key: string | null;
  executions: number;
  successful: number;
  failed: number;
  success_rate: number | null;
  average_duration_ms: number | null;
  messages_sent: number;
  messages_received: number;
  unique_customers: number;
}

const DAY_MS = 86_400_000;

/** Whole UTC days of WORKFLOW_COUNTS' rollup hours: `[firstFrom, firstTo)` and `[secondFrom, secondTo)`; empty as `[x, x)`. */
export interface CountDays {
  firstFrom: Date;
  firstTo: Date;
  secondFrom: Date;
  secondTo: Date;
}

/** No day rows: every whole hour from the hour rows. */
function noCountDays(split: HourSplit): CountDays {
  return { firstFrom: split.hoursTo, firstTo: split.hoursTo, secondFrom: split.hoursTo, secondTo: split.hoursTo };
}

/**
 * The whole UTC days inside the rollup hours `[hoursFrom, hoursTo)`, less the day holding the
 * halves' split `middle` (unless it falls on a midnight), so that every day row lies wholly in one
 * half; the hours outside these days stay hour rows. Ranges are ordered and never overlap:
 * hoursFrom <= firstFrom <= firstTo <= secondFrom <= secondTo <= hoursTo.
 */
export function countDays(split: HourSplit, middle: Date): CountDays {
  const from = Math.ceil(split.hoursFrom.getTime() / DAY_MS) * DAY_MS;
  const to = Math.floor(split.hoursTo.getTime() / DAY_MS) * DAY_MS;
  if (from >= to) return noCountDays(split);
  const clamp = (ms: number) => new Date(Math.min(to, Math.max(from, ms)));
  return {
    firstFrom: new Date(from),
    firstTo: clamp(Math.floor(middle.getTime() / DAY_MS) * DAY_MS),
    secondFrom: clamp(Math.ceil(middle.getTime() / DAY_MS) * DAY_MS),
    secondTo: new Date(to),
  };
}

/** WORKFLOW_COUNTS' values: day rows in UTC at day, week or month granularity (a UTC day lies in one bucket), else none. */
export function workflowCountsValues(org: string, workflowId: string, split: HourSplit, tz: string, granularity: string, middle: Date): unknown[] {
  const d = tz === 'UTC' && granularity !== 'hour' ? countDays(split, middle) : noCountDays(split);
  return [
    org, workflowId, split.rawFrom, split.rawTo, split.rawFrom2, split.rawTo2, split.hoursFrom, split.hoursTo, tz, granularity, middle,
    d.firstFrom, d.firstTo, d.secondFrom, d.secondTo,
  ];
}

/**
 * Counts, durations and messages of one workflow per local bucket (`$10` granularity in zone
 * `$9`), per channel, per half of the period (split at `$11`, an hour boundary) and overall: the
 * whole hours `[$7, $8)` from the hourly rollups (workflow_execution_hours), the rest — `[$3, $4)`
 * and `[$5, $6]`, the partial hours at the ends — from the executions. For a zone whose offset is
 * not whole hours the caller passes no rollup hours and the whole period as raw rows: a UTC hour
 * can then straddle two local buckets. Same arithmetic either way (a test compares them).
 *
 * Of those whole hours, the whole UTC days `[$12, $13)` and `[$14, $15)` (`countDays`: in UTC at
 * day, week or month granularity, the days before and after the one holding `$11`) are read from
 * the executions module's day rows (workflow_execution_days, the sums of the same hour rows, as
 * workflow metrics and `/performance` read them): a year is ~1,100 day rows instead of ~26,000
 * hour rows, each bucketed and grouped four ways.
 */
const WORKFLOW_COUNTS = new SqlStatement<GroupRow>(`
  WITH edge AS MATERIALIZED (
    SELECT we.id, we.status, we.duration_ms, COALESCE(we.channel, 'unknown') AS channel, we.started_at AS at
      FROM workflow_executions we
     WHERE we.workflow_id = $2 AND we.organization_id = $1 AND we.started_at >= $3 AND we.started_at < $4
    UNION ALL
    SELECT we.id, we.status, we.duration_ms, COALESCE(we.channel, 'unknown'), we.started_at
      FROM workflow_executions we
     WHERE we.workflow_id = $2 AND we.organization_id = $1 AND we.started_at >= $5 AND we.started_at <= $6
  ), m AS (
    SELECT msg.execution_id, (count(*) FILTER (WHERE msg.direction = 'outbound'))::int AS sent,
           (count(*) FILTER (WHERE msg.direction = 'inbound'))::int AS received
      FROM messages msg WHERE msg.execution_id = ANY (ARRAY(SELECT id FROM edge)) AND msg.organization_id = $1
     GROUP BY msg.execution_id
  ), facts AS (
    SELECT edge.at, edge.channel, 1 AS executions, (edge.status = 'success')::int AS successful, (edge.status = 'failed')::int AS failed,
           CASE WHEN edge.status <> 'running' THEN edge.duration_ms ELSE 0 END::bigint AS duration_sum,
           COALESCE(m.sent, 0) AS sent, COALESCE(m.received, 0) AS received
      FROM edge LEFT JOIN m ON m.execution_id = edge.id
    UNION ALL
    SELECT h.hour, h.channel, h.executions, h.successful, h.failed, h.duration_sum, h.messages_sent, h.messages_received
      FROM workflow_execution_hours h
     WHERE h.workflow_id = $2 AND h.organization_id = $1 AND h.hour >= $7 AND h.hour < $12
    UNION ALL
    SELECT h.hour, h.channel, h.executions, h.successful, h.failed, h.duration_sum, h.messages_sent, h.messages_received
      FROM workflow_execution_hours h
     WHERE h.workflow_id = $2 AND h.organization_id = $1 AND h.hour >= $13 AND h.hour < $14
    UNION ALL
    SELECT h.hour, h.channel, h.executions, h.successful, h.failed, h.duration_sum, h.messages_sent, h.messages_received
      FROM workflow_execution_hours h
     WHERE h.workflow_id = $2 AND h.organization_id = $1 AND h.hour >= $15 AND h.hour < $8
    UNION ALL
    SELECT d.day, d.channel, d.executions, d.successful, d.failed, d.duration_sum, d.messages_sent, d.messages_received
      FROM workflow_execution_days d
     WHERE d.workflow_id = $2 AND d.organization_id = $1 AND (d.day >= $12 AND d.day < $13 OR d.day >= $14 AND d.day < $15)
  ), f AS (
    SELECT facts.*, to_char(date_trunc($10, at AT TIME ZONE $9), 'YYYY-MM-DD"T"HH24:MI:SS') AS bucket,
           CASE WHEN at < $11 THEN '1' ELSE '2' END AS half
      FROM facts
  )
  SELECT CASE WHEN GROUPING(bucket) = 0 THEN 'bucket' WHEN GROUPING(channel) = 0 THEN 'channel'
              WHEN GROUPING(half) = 0 THEN 'half' ELSE 'total' END AS kind,
         COALESCE(bucket, channel, half) AS key,
         COALESCE(sum(executions), 0)::int AS executions, COALESCE(sum(successful), 0)::int AS successful,
         COALESCE(sum(failed), 0)::int AS failed,
         sum(successful)::float8 / NULLIF(sum(successful) + sum(failed), 0) AS success_rate,
         round(sum(duration_sum)::numeric / NULLIF(sum(successful) + sum(failed), 0))::int AS average_duration_ms,
         COALESCE(sum(sent), 0)::int AS messages_sent, COALESCE(sum(received), 0)::int AS messages_received, 0 AS unique_customers
    FROM f
   GROUP BY GROUPING SETS ((bucket), (channel), (half), ())
  -- Rollup rows can hold zeros (after a deletion): a bucket or channel shows only with executions.
  HAVING sum(executions) <> 0 OR (GROUPING(bucket) = 1 AND GROUPING(channel) = 1)`);

/**
 * Distinct customers of a workflow's executions per local bucket and overall, from the executions
 * (through distinctCustomers). Kept apart from the counts so that the way customers are counted
 * can change without touching them.
 */
const WORKFLOW_CUSTOMERS = new SqlStatement<{ kind: 'bucket' | 'total'; key: string | null; unique_customers: number }>(`
  SELECT CASE WHEN GROUPING(bucket) = 0 THEN 'bucket' ELSE 'total' END AS kind, bucket AS key,
         ${distinctCustomers('customer_ref')} AS unique_customers
    FROM (SELECT to_char(date_trunc($6, we.started_at AT TIME ZONE $5), 'YYYY-MM-DD"T"HH24:MI:SS') AS bucket, we.customer_ref
            FROM workflow_executions we
           WHERE we.workflow_id = $2 AND we.organization_id = $1 AND we.started_at >= $3 AND we.started_at <= $4) x
   GROUP BY GROUPING SETS ((bucket), ())`);

/**
 * Mean rating of the form answers of a workflow's executions started in the period: the whole UTC
 * days `[$9, $10)` from workflow_answer_days (migration AnswerDays), plus or minus the
 * execution_answers rows of the raw ranges `$3..$8` (a JourneySplit: at most half a day at each
 * end, in any zone — the figure is a total over the period's instants). Ratings are sums of
 * integers, exact in float8 whichever way they are added up.
 */
const WORKFLOW_SATISFACTION = new SqlStatement<{ satisfaction: number | null }>(`
  SELECT (sum(rating_sum) / NULLIF(sum(ratings), 0))::float8 AS satisfaction
    FROM (SELECT $5::int * a.rating_sum AS rating_sum, $5::int * a.ratings AS ratings FROM execution_answers a
           WHERE a.workflow_id = $2 AND a.organization_id = $1 AND a.started_at >= $3::timestamptz AND a.started_at < $4::timestamptz
          UNION ALL
          SELECT $8::int * a.rating_sum, $8::int * a.ratings FROM execution_answers a
           WHERE a.workflow_id = $2 AND a.organization_id = $1 AND a.started_at >= $6::timestamptz AND a.started_at < $7::timestamptz
          UNION ALL
          SELECT d.rating_sum, d.ratings FROM workflow_answer_days d
           WHERE d.workflow_id = $2 AND d.organization_id = $1 AND d.day >= $9::timestamptz AND d.day < $10::timestamptz) f`);

/** `group_by`: figures per channel, trigger and status, from the executions. */
const WORKFLOW_GROUPS = new SqlStatement<GroupRow>(`
  WITH e AS MATERIALIZED (${WORKFLOW_EXECUTIONS})
  SELECT CASE WHEN GROUPING(channel) = 0 THEN 'channel' WHEN GROUPING(trigger_id) = 0 THEN 'trigger' ELSE 'status' END AS kind,
         COALESCE(channel, trigger_id::text, status) AS key,
         ${STATUS_FIGURES}, 0 AS messages_sent, 0 AS messages_received,
         ${distinctCustomers('customer_ref')} AS unique_customers
    FROM e
   GROUP BY GROUPING SETS ((channel), (trigger_id), (status))`);

/** The local buckets of a period, empty ones included: the key as in WORKFLOW_SUMMARY and the instant it starts. */
const BUCKETS = new SqlStatement<{ key: string; start: Date }>(`
  SELECT to_char(b, 'YYYY-MM-DD"T"HH24:MI:SS') AS key, b AT TIME ZONE $3 AS start
    FROM generate_series(date_trunc($4, $1::timestamptz AT TIME ZONE $3), date_trunc($4, $2::timestamptz AT TIME ZONE $3), ('1 ' || $4)::interval) b`);

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

/**
 * How a period `[start, end]` (end inclusive, to the millisecond) is read from day rollups: the
 * whole UTC days `[daysFrom, daysTo)` from the rollups, plus or minus (`sign`) the rows of two raw
 * ranges `[from, to)`: splitPeriod's `nearest` way (src/common/period-split.ts), at most half a day
 * of rows at each end, in any time zone. Bounds are ISO strings with microseconds (the end's
 * exclusive bound is end + 1 µs).
 */
export interface JourneySplit {
  ranges: [{ from: string; to: string; sign: number }, { from: string; to: string; sign: number }];
  daysFrom: string;
  daysTo: string;
}

function journeyBounds(split: PeriodSplit): JourneySplit {
  const [a, b] = split.ranges;
  return {
    ranges: [
      { from: isoMicros(a.from), to: isoMicros(a.to), sign: a.sign },
      { from: isoMicros(b.from), to: isoMicros(b.to), sign: b.sign },
    ],
    daysFrom: isoMicros(split.wholeFrom),
    daysTo: isoMicros(split.wholeTo),
  };
}

export function journeySplit(start: Date, end: Date): JourneySplit {
  return journeyBounds(splitPeriod(start, end, { unit: 'day', way: 'nearest' }));
}

/** The statement values of a journey split, from `$3`: the two raw ranges and their signs, then the whole days. */
function splitValues(split: JourneySplit): (string | number)[] {
  const [a, b] = split.ranges;
  return [a.from, a.to, a.sign, b.from, b.to, b.sign, split.daysFrom, split.daysTo];
}

/** No rollup days: the whole period from the rows (the reference the rollups are tested against). */
export function rawJourneySplit(start: Date, end: Date): JourneySplit {
  return journeyBounds(rawSplit(start, end));
}

/** A workflow's (`$2`) executions in the raw ranges of a split (`$3..$8`), with their sign. */
function rawExecutions(columns: string): string {
  return `
    SELECT ${columns}, $5::int AS sign FROM workflow_executions we
     WHERE we.workflow_id = $2 AND we.organization_id = $1 AND we.started_at >= $3::timestamptz AND we.started_at < $4::timestamptz
    UNION ALL
    SELECT ${columns}, $8::int FROM workflow_executions we
     WHERE we.workflow_id = $2 AND we.organization_id = $1 AND we.started_at >= $6::timestamptz AND we.started_at < $7::timestamptz`;
}

/**
 * Step figures per node and type of a workflow's executions started in the period: the whole UTC
 * days `[$9, $10)` from workflow_node_days, the raw ranges from the steps of their executions
 * (looked up by `= ANY (ARRAY(...))`, through the steps' execution index).
 */
const NODE_FACTS = `
  WITH edge AS MATERIALIZED (${rawExecutions('we.id')}),
  facts AS (
    SELECT s.node_id, s.type, e.sign AS steps, CASE WHEN s.status = 'completed' THEN e.sign ELSE 0 END AS completed,
           CASE WHEN s.status = 'failed' THEN e.sign ELSE 0 END AS failed, e.sign * s.duration_ms::bigint AS duration_sum
      FROM execution_steps s JOIN edge e ON e.id = s.execution_id
     WHERE s.execution_id = ANY (ARRAY(SELECT id FROM edge))
    UNION ALL
    SELECT n.node_id, n.type, n.steps, n.completed, n.failed, n.duration_sum
      FROM workflow_node_days n WHERE n.workflow_id = $2 AND n.organization_id = $1 AND n.day >= $9::timestamptz AND n.day < $10::timestamptz
  )`;

/** `include_nodes`: per node and type, every step of the period's executions (a node visited twice in one execution has one step). */
const NODES = new SqlStatement<NodeRow>(`${NODE_FACTS}
  SELECT node_id, type, sum(steps)::int AS execution_count, sum(completed)::float8 / sum(steps) AS success_rate,
         round(sum(duration_sum)::numeric / sum(steps))::int AS average_duration_ms, sum(failed)::int AS error_count
    FROM facts GROUP BY node_id, type HAVING sum(steps) <> 0 ORDER BY node_id, type`);

export interface WorkflowListRow {
  workflow_id: string;
  name: string;
  status: string;
  executions: number;
  successful: number;
  failed: number;
  success_rate: number | null;
  average_duration_ms: number | null;
  unique_customers: number;
  total: number;
}

function workflowList(order: 'executions' | 'success_rate'): SqlStatement<WorkflowListRow> {
  const sort = order === 'executions' ? 'executions' : 'success_rate';
  return new SqlStatement<WorkflowListRow>(`
    WITH e AS MATERIALIZED (
      SELECT we.workflow_id, we.status, we.duration_ms, we.customer_ref
        FROM workflow_executions we WHERE we.organization_id = $1 AND we.started_at >= $2 AND we.started_at <= $3
    ), s AS (
      SELECT workflow_id, ${STATUS_FIGURES}, ${distinctCustomers('customer_ref')} AS unique_customers FROM e GROUP BY workflow_id
    )
    SELECT w.id AS workflow_id, w.name, w.status, COALESCE(s.executions, 0) AS executions, COALESCE(s.successful, 0) AS successful,
           COALESCE(s.failed, 0) AS failed, s.success_rate, s.average_duration_ms, COALESCE(s.unique_customers, 0) AS unique_customers,
           (count(*) OVER ())::int AS total
      FROM workflows w LEFT JOIN s ON s.workflow_id = w.id
     WHERE w.organization_id = $1
     ORDER BY ${sort === 'executions' ? 'COALESCE(s.executions, 0)' : 's.success_rate'} ${'$DIR'} NULLS LAST, w.id
     LIMIT $4 OFFSET $5`);
}

const WORKFLOW_LISTS = {
  executions: { asc: withDirection(workflowList('executions'), 'ASC'), desc: withDirection(workflowList('executions'), 'DESC') },
  success_rate: { asc: withDirection(workflowList('success_rate'), 'ASC'), desc: withDirection(workflowList('success_rate'), 'DESC') },
};

function withDirection<R>(statement: SqlStatement<R>, direction: 'ASC' | 'DESC'): SqlStatement<R> {
  return new SqlStatement<R>(statement.text.replace('$DIR', direction));
}

export interface EngagementFilter {
  channel: string | null;
  segment: 'all' | 'new' | 'returning';
}

/**
 * The customers the engagement figures are about: `$1` organization, `$2..$3` period, `$4` channel
 * or null, `$5` segment. New = first seen within the period (or later), returning = before it.
 * SEGMENT for a customers row `c`; IN_SEGMENT for a customer id, through the organization's new
 * customers (idx_customers_org_first_seen: typically few), hashed once per statement.
 */
const SEGMENT = `($5 = 'all' OR ($5 = 'new' AND c.first_seen_at >= $2) OR ($5 = 'returning' AND c.first_seen_at < $2))`;
const NEW_CUSTOMERS = `SELECT nc.id FROM customers nc WHERE nc.organization_id = $1 AND nc.first_seen_at >= $2`;
const inSegment = (customer: string) => `($5 = 'all' OR ($5 = 'new') = (${customer} IN (${NEW_CUSTOMERS})))`;

/**
 * Sessions, by definition (docs/DECISIONS.md "Engagement rollups (wt-engage)"): a customer's
 * messages on one channel with gaps under 30 minutes, computed here from every message of the
 * organization `$1` — the raw rows the customer_sessions rollup keeps (a test compares them).
 * Columns as the rollup's: organization_id, customer_id, channel, started_at, ended_at, messages.
 */
const RAW_SESSIONS = `
  SELECT organization_id, customer_id, channel, min(created_at) AS started_at, max(created_at) AS ended_at, count(*)::int AS messages
    FROM (SELECT *, sum(starts) OVER (PARTITION BY customer_id, channel ORDER BY created_at ROWS UNBOUNDED PRECEDING) AS session
            FROM (SELECT m.organization_id, m.customer_id, m.channel, m.created_at,
                         CASE WHEN m.created_at - lag(m.created_at) OVER (PARTITION BY m.customer_id, m.channel ORDER BY m.created_at) < interval '30 minutes'
                              THEN 0 ELSE 1 END AS starts
                    FROM messages m WHERE m.organization_id = $1) s1) s2
   GROUP BY organization_id, customer_id, channel, session`;

/** The answer facts of every execution of the organization `$1` from its steps: the rows the execution_answers rollup keeps. */
const RAW_ANSWERS = `
  WITH e AS (SELECT * FROM workflow_executions WHERE organization_id = $1)
  ${ANSWERS}`;

/** The rollups' rows, in the raw statements' columns. */
const ROLLUP_SESSIONS = `SELECT organization_id, customer_id, channel, started_at, ended_at, messages FROM customer_sessions`;
const ROLLUP_ANSWERS = `SELECT * FROM execution_answers`;

export interface EngagementRow {
  scope: 'all' | 'channel' | 'half';
  key: string | null;
  active_customers: number;
  new_customers: number;
  returning_customers: number;
  messages: number;
  sessions: number;
  /** The sessions' durations summed (ms). */
  duration_ms: number;
  average_session_duration: number | null;
  average_messages_per_session: number | null;
  satisfaction: number | null;
  promoters: number;
  detractors: number;
  nps_answers: number;
}

export type AnswerFigureRow = Pick<EngagementRow, 'scope' | 'key' | 'satisfaction' | 'promoters' | 'detractors' | 'nps_answers'>;

/**
 * The rating and NPS answers of the executions started in the period (`answers`: the rollup, or the
 * raw rows in its shape), overall, per channel and per half (`$6` splits it), of the segment's customers.
 */
function answerFigures(answers: string): string {
  return `
    SELECT CASE WHEN GROUPING(channel) = 0 THEN 'channel' WHEN GROUPING(half) = 0 THEN 'half' ELSE 'all' END AS scope,
           COALESCE(channel, half) AS key,
           (sum(rating_sum) / NULLIF(sum(ratings), 0))::float8 AS satisfaction,
           sum(promoters)::int AS promoters, sum(detractors)::int AS detractors, sum(nps_answers)::int AS nps_answers
      FROM (SELECT COALESCE(a.channel, 'unknown') AS channel, CASE WHEN a.started_at < $6 THEN '1' ELSE '2' END AS half,
                   a.rating_sum, a.ratings, a.promoters, a.detractors, a.nps_answers
              FROM (${answers}) a
             WHERE a.organization_id = $1 AND a.started_at >= $2 AND a.started_at <= $3 AND a.customer_id IS NOT NULL
               AND ($4::text IS NULL OR a.channel = $4) AND ${inSegment('a.customer_id')}) a
     GROUP BY GROUPING SETS ((), (channel), (half))`;
}

/**
 * Engagement overall, per channel and per half of the period (`$6` splits it), from `sessions`
 * and `answers` (the rollups, or the raw rows in their shape): the sessions that *started* in the
 * period — active customers are the customers with one, their messages are the sessions' messages
 * (to the session's end) — and the rating/NPS answers of the executions started in the period.
 * Both are read by their instants, so any `timezone`'s period boundaries are exact.
 */
function engagementStatement(sessions: string, answers: string): SqlStatement<EngagementRow> {
  return new SqlStatement<EngagementRow>(`
  WITH s AS MATERIALIZED (
    SELECT s.customer_id, s.channel, s.messages, date_part('epoch', s.ended_at - s.started_at) * 1000 AS duration_ms,
           s.started_at < $6 AS first_half
      FROM (${sessions}) s
     WHERE s.organization_id = $1 AND s.started_at >= $2 AND s.started_at <= $3 AND ($4::text IS NULL OR s.channel = $4)
       AND ${inSegment('s.customer_id')}
  ), people AS (
    -- One row per active customer, with the halves it was active in: distinct customers exactly, from one hash aggregation.
    SELECT customer_id, bool_or(first_half) AS in_first, bool_or(NOT first_half) AS in_second FROM s GROUP BY customer_id
  ), customer_figures AS (
    SELECT 'all' AS scope, NULL::text AS key, count(*)::int AS active_customers,
           (count(*) FILTER (WHERE p.customer_id IN (${NEW_CUSTOMERS})))::int AS new_customers,
           (count(*) FILTER (WHERE p.customer_id NOT IN (${NEW_CUSTOMERS})))::int AS returning_customers
      FROM people p
    UNION ALL
    SELECT 'channel', channel::text, count(*)::int, 0, 0 FROM (SELECT DISTINCT channel, customer_id FROM s) x GROUP BY channel
    UNION ALL
    SELECT 'half', '1', (count(*) FILTER (WHERE in_first))::int, 0, 0 FROM people
    UNION ALL
    SELECT 'half', '2', (count(*) FILTER (WHERE in_second))::int, 0, 0 FROM people
  ), sums AS (
    SELECT CASE WHEN GROUPING(channel) = 0 THEN 'channel' WHEN GROUPING(first_half) = 0 THEN 'half' ELSE 'all' END AS scope,
           CASE WHEN GROUPING(channel) = 0 THEN channel::text WHEN GROUPING(first_half) = 0 THEN CASE WHEN first_half THEN '1' ELSE '2' END END AS key,
           sum(messages)::int AS messages, count(*)::int AS sessions, sum(duration_ms)::float8 AS duration_ms,
           (sum(duration_ms) / count(*))::float8 AS average_session_duration,
           (sum(messages)::float8 / count(*))::float8 AS average_messages_per_session
      FROM s GROUP BY GROUPING SETS ((), (channel), (first_half))
  ), session_figures AS (
    SELECT f.scope, f.key, f.active_customers, f.new_customers, f.returning_customers, u.messages, u.sessions, u.duration_ms,
           u.average_session_duration, u.average_messages_per_session
      FROM customer_figures f JOIN sums u ON u.scope = f.scope AND u.key IS NOT DISTINCT FROM f.key
     WHERE f.active_customers > 0
  ), answer_figures AS (${answerFigures(answers)}
  ), keys AS (
    SELECT scope, key FROM session_figures UNION SELECT scope, key FROM answer_figures UNION SELECT 'all', NULL
  )
  SELECT k.scope, k.key, COALESCE(f.active_customers, 0) AS active_customers, COALESCE(f.new_customers, 0) AS new_customers,
         COALESCE(f.returning_customers, 0) AS returning_customers, COALESCE(f.messages, 0) AS messages,
         COALESCE(f.sessions, 0) AS sessions, COALESCE(f.duration_ms, 0) AS duration_ms, f.average_session_duration, f.average_messages_per_session,
         a.satisfaction, COALESCE(a.promoters, 0) AS promoters, COALESCE(a.detractors, 0) AS detractors,
         COALESCE(a.nps_answers, 0) AS nps_answers
    FROM keys k
    LEFT JOIN session_figures f ON f.scope = k.scope AND f.key IS NOT DISTINCT FROM k.key
    LEFT JOIN answer_figures a ON a.scope = k.scope AND a.key IS NOT DISTINCT FROM k.key`);
}

const ENGAGEMENT = engagementStatement(ROLLUP_SESSIONS, ROLLUP_ANSWERS);
/** The same figures from the messages and steps themselves (every message of the organization): for the comparison test. */
const ENGAGEMENT_RAW = engagementStatement(RAW_SESSIONS, RAW_ANSWERS);
/** The answer figures alone, from the rollup (the day-set path's; values as ENGAGEMENT's). */
const ENGAGEMENT_ANSWERS = new SqlStatement<AnswerFigureRow>(answerFigures(ROLLUP_ANSWERS));

interface SessionSums {
  customers: number;
  messages: number;
  sessions: number;
  duration_ms: number;
}

/**
 * ENGAGEMENT's rows from the day-set path: the sessions' sums (`facts`), the distinct customers of
 * the sets, the answer figures, and the new customers' own rows (`fresh`) — their count for
 * everyone, or subtracted from everyone's figures for the returning customers (the two segments
 * partition the customers, so every figure but the averages adds up).
 */
export function engagementRows(
  facts: readonly DayFactRow[],
  distinct: { all: number; channels: Map<string, number>; halves: [number, number] },
  answers: readonly AnswerFigureRow[],
  fresh: readonly EngagementRow[],
  segment: 'all' | 'returning',
): EngagementRow[] {
  const id = (scope: string, key: string | null) => `${scope}/${key ?? ''}`;
  const sums = new Map<string, SessionSums & { scope: EngagementRow['scope']; key: string | null }>();
  const add = (scope: EngagementRow['scope'], key: string | null, customers: number, f: Omit<SessionSums, 'customers'>, sign = 1) => {
    const s = sums.get(id(scope, key)) ?? { scope, key, customers: 0, messages: 0, sessions: 0, duration_ms: 0 };
    s.customers += sign * customers;
    s.messages += sign * f.messages;
    s.sessions += sign * f.sessions;
    s.duration_ms += sign * f.duration_ms;
    sums.set(id(scope, key), s);
  };
  for (const f of facts) {
    add('all', null, 0, f);
    add('channel', f.channel, 0, f);
    add('half', f.first_half ? '1' : '2', 0, f);
  }
  for (const s of sums.values()) {
    if (s.scope === 'all') s.customers = distinct.all;
    if (s.scope === 'channel') s.customers = distinct.channels.get(s.key!) ?? 0;
    if (s.scope === 'half') s.customers = distinct.halves[s.key === '1' ? 0 : 1];
  }
  const freshAll = fresh.find((r) => r.scope === 'all')?.active_customers ?? 0;
  if (segment === 'returning') {
    for (const r of fresh) if (r.active_customers > 0) add(r.scope, r.key, r.active_customers, r, -1);
  }
  const rows = new Map<string, EngagementRow>();
  const row = (scope: EngagementRow['scope'], key: string | null): EngagementRow => {
    const known = rows.get(id(scope, key));
    if (known) return known;
    const r: EngagementRow = {
      scope, key, active_customers: 0, new_customers: 0, returning_customers: 0, messages: 0, sessions: 0, duration_ms: 0,
      average_session_duration: null, average_messages_per_session: null, satisfaction: null, promoters: 0, detractors: 0, nps_answers: 0,
    };
    rows.set(id(scope, key), r);
    return r;
  };
  row('all', null);
  for (const s of sums.values()) {
    if (s.customers <= 0) continue;
    const r = row(s.scope, s.key);
    r.active_customers = s.customers;
    if (s.scope === 'all') {
      r.new_customers = segment === 'all' ? freshAll : 0;
      r.returning_customers = s.customers - r.new_customers;
    }
    r.messages = s.messages;
    r.sessions = s.sessions;
    r.duration_ms = s.duration_ms;
    r.average_session_duration = s.duration_ms / s.sessions;
    r.average_messages_per_session = s.messages / s.sessions;
  }
  // The grouping set () gives a row of nulls when the period has no answers.
  for (const a of answers) {
    Object.assign(row(a.scope, a.key), { satisfaction: a.satisfaction, promoters: a.promoters ?? 0, detractors: a.detractors ?? 0, nps_answers: a.nps_answers ?? 0 });
  }
  return [...rows.values()];
}

/**
 * Customers known by the end of the period (in the segment, and seen on the channel — a message
 * on it — by then when one is given): `channels` lists (customer_id, channel, first_at).
 */
function totalCustomers(channels: string): SqlStatement<{ total: number }> {
  return new SqlStatement<{ total: number }>(`
  SELECT count(*)::int AS total FROM customers c
   WHERE c.organization_id = $1 AND c.first_seen_at <= $3 AND ${SEGMENT}
     AND ($4::text IS NULL OR c.id IN (SELECT cc.customer_id FROM (${channels}) cc WHERE cc.channel = $4 AND cc.first_at <= $3))`);
}

const TOTAL_CUSTOMERS = totalCustomers('SELECT customer_id, channel, first_at FROM customer_channels WHERE organization_id = $1');
const TOTAL_CUSTOMERS_RAW = totalCustomers('SELECT customer_id, channel, created_at AS first_at FROM messages WHERE organization_id = $1');

/** The rollups' rows and the raw rows they stand for, one organization (`$1`), in one order: for the comparison test. */
export const ENGAGEMENT_FACTS = {
  sessions: { rollup: `${ROLLUP_SESSIONS} WHERE organization_id = $1 ORDER BY customer_id, channel, started_at`, raw: `${RAW_SESSIONS} ORDER BY customer_id, channel, started_at` },
  answers: { rollup: `${ROLLUP_ANSWERS} WHERE organization_id = $1 ORDER BY execution_id`, raw: `${RAW_ANSWERS} ORDER BY execution_id` },
  channels: {
    rollup: `SELECT customer_id, channel, organization_id, first_at FROM customer_channels WHERE organization_id = $1 ORDER BY customer_id, channel`,
    raw: `SELECT customer_id, channel, organization_id, min(created_at) AS first_at FROM messages WHERE organization_id = $1
           GROUP BY customer_id, channel, organization_id ORDER BY customer_id, channel`,
  },
};

/**
 * The organization's most-executed workflow of the period (ties: the oldest id): whole UTC days
 * from workflow_outcome_days (through its organization and day index), the raw ranges from the
 * executions (organization and time index). Values: `$1` organization, `$2..$9` a JourneySplit.
 */
const TOP_WORKFLOW = new SqlStatement<{ workflow_id: string }>(`
  WITH facts AS (
    SELECT workflow_id, $4::int AS n FROM workflow_executions
     WHERE organization_id = $1 AND started_at >= $2::timestamptz AND started_at < $3::timestamptz
    UNION ALL
    SELECT workflow_id, $7::int FROM workflow_executions
     WHERE organization_id = $1 AND started_at >= $5::timestamptz AND started_at < $6::timestamptz
    UNION ALL
    SELECT workflow_id, executions FROM workflow_outcome_days WHERE organization_id = $1 AND day >= $8::timestamptz AND day < $9::timestamptz
  )
  SELECT workflow_id FROM facts GROUP BY workflow_id HAVING sum(n) > 0 ORDER BY sum(n) DESC, workflow_id LIMIT 1`);

export interface OutcomeRow {
  status: 'running' | 'success' | 'failed';
  /** Where it stopped or waits; '' = none known (the entry node). */
  stop_node: string;
  code: string;
  waits: boolean;
  executions: number;
  duration_sum: number;
  timed: number;
}

/**
 * A workflow's executions of the period by outcome (src/analytics/journey-facts.ts): whole UTC days
 * `[$9, $10)` from workflow_outcome_days, the raw ranges `$3..$8` from the executions.
 */
const JOURNEY_OUTCOMES = new SqlStatement<OutcomeRow>(`
  WITH edge AS (${rawExecutions(`we.duration_ms, ${outcomeFacts('we')}`)}),
  facts AS (
    SELECT status, stop_node, code, waits, sign AS executions, sign * COALESCE(duration_ms, 0)::bigint AS duration_sum,
           CASE WHEN duration_ms IS NULL THEN 0 ELSE sign END AS timed
      FROM edge
    UNION ALL
    SELECT o.status, o.stop_node, o.code, o.waits, o.executions, o.duration_sum, o.timed
      FROM workflow_outcome_days o WHERE o.workflow_id = $2 AND o.organization_id = $1 AND o.day >= $9::timestamptz AND o.day < $10::timestamptz
  )
  SELECT status, stop_node, code, waits, sum(executions)::int AS executions, sum(duration_sum)::float8 AS duration_sum, sum(timed)::int AS timed
    FROM facts GROUP BY status, stop_node, code, waits HAVING sum(executions) <> 0 OR sum(timed) <> 0`);

export interface JourneyNodeRow {
  node_id: string;
  steps: number;
  completed: number;
  average_duration_ms: number | null;
}

/** Steps per node (all its types) of the period's executions. */
const JOURNEY_NODES = new SqlStatement<JourneyNodeRow>(`${NODE_FACTS}
  SELECT node_id, sum(steps)::int AS steps, sum(completed)::int AS completed,
         round(sum(duration_sum)::numeric / NULLIF(sum(steps), 0))::int AS average_duration_ms
    FROM facts GROUP BY node_id HAVING sum(steps) <> 0`);

export interface RealtimeWorkflowRow {
  workflow_id: string;
  name: string;
  active_executions: number;
  messages_in_last_hour: number;
  average_response_time_ms: number | null;
}

export interface RealtimeRow {
  active_executions: number;
  messages_in_last_hour: number;
  average_response_time_ms: number | null;
  workflows: RealtimeWorkflowRow[];
  channels: { channel: string; active_conversations: number; messages_in_last_hour: number }[];
}

/**
 * The last hour (`$4` = now - 1 hour) of one organization, optionally one workflow (`$2`) and one
 * channel (`$3`), in one statement that reads each source once: the running executions (through
 * the partial index of running executions) grouped by workflow and channel, the messages of the
 * hour (a message belongs to a workflow through the execution that sent or received it), and the
 * executions started within the hour that have finished (response time = their mean duration).
 * The totals, the 100 busiest workflows and the channels are folded from those groups.
 */
const REALTIME = new SqlStatement<RealtimeRow>(`
  WITH r AS MATERIALIZED (
    SELECT we.workflow_id, we.channel, count(*)::int AS n
      FROM workflow_executions we
     WHERE we.organization_id = $1 AND we.status = 'running' AND ($2::uuid IS NULL OR we.workflow_id = $2)
       AND ($3::text IS NULL OR we.channel = $3)
     GROUP BY 1, 2
  ), m AS MATERIALIZED (
    SELECT m.channel, we.workflow_id, count(*)::int AS n
      FROM messages m LEFT JOIN workflow_executions we ON we.id = m.execution_id
     WHERE m.organization_id = $1 AND m.created_at >= $4 AND ($3::text IS NULL OR m.channel = $3)
       AND ($2::uuid IS NULL OR we.workflow_id = $2)
     GROUP BY 1, 2
  ), f AS MATERIALIZED (
    SELECT we.workflow_id, count(*)::int AS n, sum(we.duration_ms)::numeric AS ms
      FROM workflow_executions we
     WHERE we.organization_id = $1 AND we.started_at >= $4 AND we.status <> 'running'
       AND ($2::uuid IS NULL OR we.workflow_id = $2) AND ($3::text IS NULL OR we.channel = $3)
     GROUP BY 1
  ), per_workflow AS (
    SELECT ids.workflow_id, COALESCE(rw.n, 0) AS running, COALESCE(mw.n, 0) AS messages, round(f.ms / NULLIF(f.n, 0))::int AS ms
      FROM (SELECT workflow_id FROM r UNION SELECT workflow_id FROM m WHERE workflow_id IS NOT NULL UNION SELECT workflow_id FROM f) ids
      LEFT JOIN (SELECT workflow_id, sum(n)::int AS n FROM r GROUP BY 1) rw ON rw.workflow_id = ids.workflow_id
      LEFT JOIN (SELECT workflow_id, sum(n)::int AS n FROM m GROUP BY 1) mw ON mw.workflow_id = ids.workflow_id
      LEFT JOIN f ON f.workflow_id = ids.workflow_id
  ), top AS (
    SELECT w.id AS workflow_id, w.name, p.running, p.messages, p.ms
      FROM per_workflow p JOIN workflows w ON w.id = p.workflow_id AND w.organization_id = $1
     ORDER BY p.running DESC, p.messages DESC, w.id LIMIT 100
  ), channels AS (
    SELECT COALESCE(rc.channel, mc.channel) AS channel, COALESCE(rc.n, 0) AS running, COALESCE(mc.n, 0) AS messages
      FROM (SELECT COALESCE(channel, 'unknown') AS channel, sum(n)::int AS n FROM r GROUP BY 1) rc
      FULL JOIN (SELECT channel, sum(n)::int AS n FROM m GROUP BY 1) mc ON mc.channel = rc.channel
  )
  SELECT (SELECT COALESCE(sum(n), 0)::int FROM r) AS active_executions,
         (SELECT COALESCE(sum(n), 0)::int FROM m) AS messages_in_last_hour,
         (SELECT round(sum(ms) / NULLIF(sum(n), 0))::int FROM f) AS average_response_time_ms,
         COALESCE((SELECT json_agg(json_build_object('workflow_id', workflow_id, 'name', name, 'active_executions', running,
                                                       'messages_in_last_hour', messages, 'average_response_time_ms', ms)
                                    ORDER BY running DESC, messages DESC, workflow_id) FROM top), '[]'::json) AS workflows,
         COALESCE((SELECT json_agg(json_build_object('channel', channel, 'active_conversations', running, 'messages_in_last_hour', messages)
                                    ORDER BY channel) FROM channels), '[]'::json) AS channels`);

const TIMEZONES = new SqlStatement<{ name: string }>(`SELECT name FROM pg_timezone_names`);

/** The statements as sent, for EXPLAIN scripts. */
export const ANALYTICS_STATEMENTS = {
  WORKFLOW_COUNTS, WORKFLOW_CUSTOMERS, WORKFLOW_SATISFACTION, WORKFLOW_GROUPS, BUCKETS, PERFORMANCE_PERCENTILES, PERFORMANCE_COUNTS, NODES, ENGAGEMENT, ENGAGEMENT_RAW, ENGAGEMENT_ANSWERS,
  TOTAL_CUSTOMERS, TOP_WORKFLOW, JOURNEY_OUTCOMES, JOURNEY_NODES, REALTIME,
};

export class AnalyticsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async timezones(): Promise<Map<string, string>> {
    const rows = await TIMEZONES.run(this.dataSource, []);
    return new Map(rows.map((r) => [r.name.toLowerCase(), r.name]));
  }

  /** `split`: which part of the period the rollups serve (none for zones with offsets that are not whole hours). */
  workflowCounts(org: string, workflowId: string, split: HourSplit, tz: string, granularity: string, middle: Date): Promise<GroupRow[]> {
    return WORKFLOW_COUNTS.run(this.dataSource, workflowCountsValues(org, workflowId, split, tz, granularity, middle));
  }

  workflowCustomers(org: string, workflowId: string, start: Date, end: Date, tz: string, granularity: string) {
    return WORKFLOW_CUSTOMERS.run(this.dataSource, [org, workflowId, start, end, tz, granularity]);
  }

  /** Null without rating answers. `split` defaults to journeySplit (rawJourneySplit reads only rows). */
  async workflowSatisfaction(org: string, workflowId: string, start: Date, end: Date, split = journeySplit(start, end)): Promise<number | null> {
    return (await WORKFLOW_SATISFACTION.run(this.dataSource, [org, workflowId, ...splitValues(split)]))[0].satisfaction;
  }

  workflowGroups(org: string, workflowId: string, start: Date, end: Date): Promise<GroupRow[]> {
    return WORKFLOW_GROUPS.run(this.dataSource, [org, workflowId, start, end]);
  }

  buckets(start: Date, end: Date, tz: string, granularity: string): Promise<{ key: string; start: Date }[]> {
    return BUCKETS.run(this.dataSource, [start, end, tz, granularity]);
  }

  /**
   * The figures of `/performance` (whole UTC days from the rollups, partial days from the
   * executions; `hourly`: the zone's offsets are whole hours, so the peak hour can come from the
   * hourly rollups) and the channel figures.
   */
  async performance(org: string, workflowId: string, start: Date, end: Date, tz: string, hourly: boolean): Promise<{ row: PerformanceRow; channels: ChannelPerformanceRow[] }> {
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
  nodes(org: string, workflowId: string, start: Date, end: Date, split = journeySplit(start, end)): Promise<NodeRow[]> {
    return NODES.run(this.dataSource, [org, workflowId, ...splitValues(split)]);
  }

  workflowList(org: string, start: Date, end: Date, sort: 'executions' | 'success_rate', order: 'asc' | 'desc', limit: number, offset: number) {
    return WORKFLOW_LISTS[sort][order].run(this.dataSource, [org, start, end, limit, offset]);
  }

  async countWorkflows(org: string): Promise<number> {
    const rows: { n: number }[] = await this.dataSource.query('SELECT count(*)::int AS n FROM workflows WHERE organization_id = $1', [org]);
    return rows[0].n;
  }

  /**
   * From the rollups; `raw` computes the same figures from the messages and steps (for tests: slow
   * at volume). The new customers' figures come from their sessions (ENGAGEMENT: typically few);
   * everyone's, and so the returning customers' (everyone's less the new ones'), from the day sets
   * (src/analytics/engagement-days.ts).
   */
  async engagement(org: string, start: Date, end: Date, filter: EngagementFilter, middle: Date, raw = false): Promise<EngagementRow[]> {
    const values = [org, start, end, filter.channel, filter.segment, middle];
    if (raw) return ENGAGEMENT_RAW.run(this.dataSource, values);
    if (filter.segment === 'new') return ENGAGEMENT.run(this.dataSource, values);
    const plan = engagementDayPlan(start, end, middle);
    const bounds = planValues(plan);
    const [facts, sets, answers, fresh] = await Promise.all([
      DAY_FACTS.run(this.dataSource, [org, start, end, filter.channel, middle]),
      DAY_SETS.run(this.dataSource, [org, bounds.daysFrom, bounds.daysTo, filter.channel, bounds.froms, bounds.tos]),
      ENGAGEMENT_ANSWERS.run(this.dataSource, values),
      ENGAGEMENT.run(this.dataSource, [org, start, end, filter.channel, 'new', middle]),
    ]);
    const placed = await this.placedSets(org, plan, facts, sets);
    return engagementRows(facts, distinctFigures(placed), answers, fresh, filter.segment);
  }

  /** The sets of the period's parts: whole days from their stored sets (folded again when missing or stale), the rest raw. */
  private async placedSets(org: string, plan: EngagementDayPlan, facts: DayFactRow[], sets: DaySetRow[]): Promise<PlacedSet[]> {
    const placed: PlacedSet[] = [];
    const stored = new Map<string, DaySetRow>();
    for (const set of sets) {
      if (set.part !== null) placed.push({ channel: set.channel, half: plan.raw[set.part - 1].half, customers: set.customers });
      else stored.set(`${set.day!.getTime()}/${set.channel}`, set);
    }
    // Each whole day's (channel, day) count and checksum, as the sessions give them now.
    const days = new Map<string, { channel: string; day: Date; sessions: number; checksum: bigint }>();
    for (const f of facts) {
      const t = f.day.getTime() * 1000;
      if (t < plan.daysFrom || t >= plan.daysTo || t === plan.middleDay) continue;
      const key = `${f.day.getTime()}/${f.channel}`;
      const d = days.get(key) ?? { channel: f.channel, day: f.day, sessions: 0, checksum: 0n };
      d.sessions += f.sessions;
      d.checksum += BigInt(f.checksum);
      days.set(key, d);
    }
    const stale: { channel: string; day: Date }[] = [];
    for (const [key, d] of days) {
      const set = stored.get(key);
      if (set && set.sessions === d.sessions && set.checksum === String(d.checksum)) {
        placed.push({ channel: d.channel, half: halfOfDay(plan, d.day.getTime() * 1000), customers: set.customers });
      } else stale.push(d);
    }
    if (stale.length > 0) {
      const folded = await FOLD_DAY_SETS.run(this.dataSource, [org, stale.map((d) => d.channel), stale.map((d) => d.day)]);
      for (const f of folded) placed.push({ channel: f.channel, half: halfOfDay(plan, f.day.getTime() * 1000), customers: f.customers });
    }
    return placed;
  }

  async totalCustomers(org: string, start: Date, end: Date, filter: EngagementFilter, raw = false): Promise<number> {
    return (await (raw ? TOTAL_CUSTOMERS_RAW : TOTAL_CUSTOMERS).run(this.dataSource, [org, start, end, filter.channel, filter.segment]))[0].total;
  }

  async topWorkflow(org: string, start: Date, end: Date, split = journeySplit(start, end)): Promise<string | undefined> {
    const [a, b] = split.ranges;
    const values = [org, a.from, a.to, a.sign, b.from, b.to, b.sign, split.daysFrom, split.daysTo];
    return (await TOP_WORKFLOW.run(this.dataSource, values))[0]?.workflow_id;
  }

  /** A workflow's outcomes and node figures of the period (`split` defaults to journeySplit; rawJourneySplit reads only rows). */
  async journey(org: string, workflowId: string, start: Date, end: Date, split = journeySplit(start, end)) {
    const values = [org, workflowId, ...splitValues(split)];
    const [outcomes, nodes] = await Promise.all([JOURNEY_OUTCOMES.run(this.dataSource, values), JOURNEY_NODES.run(this.dataSource, values)]);
    return { outcomes, nodes };
  }

  async realtime(org: string, workflowId: string | null, channel: string | null, now: Date): Promise<RealtimeRow> {
    return (await REALTIME.run(this.dataSource, [org, workflowId, channel, new Date(now.getTime() - 3_600_000)]))[0];
  }

}

