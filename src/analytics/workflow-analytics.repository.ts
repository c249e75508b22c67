import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { SqlStatement } from '../database/sql-statement.js';
import { hourSplit, type HourSplit } from '../common/period-split.js';
import { splitDays } from './performance.repository.js';
import { distinctCustomers, journeySplit, meanRating, splitValues, STATUS_FIGURES, WORKFLOW_EXECUTIONS, type JourneySplit } from './analytics-sql.js';

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
  SELECT ${meanRating('rating_sum', 'ratings')} AS satisfaction
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

/** Sends of a workflow's executions through channel accounts: settled (accepted or failed), delivered (or read), read. */
export interface DeliveryCounts {
  concluded: number;
  delivered: number;
  read: number;
}

/**
 * The sends of a workflow's executions started in the period: the whole UTC hours `[$7, $8)` from
 * workflow_delivery_hours (kept by the sends' own triggers, migration DeliveryRollups), the partial
 * hours `[$3, $4)` and `[$5, $6]` from the sends, by their workflow and execution-start index.
 */
const WORKFLOW_DELIVERIES = new SqlStatement<DeliveryCounts>(`
  SELECT COALESCE(sum(concluded), 0)::int AS concluded, COALESCE(sum(delivered), 0)::int AS delivered, COALESCE(sum(read), 0)::int AS read
    FROM (
      SELECT h.concluded, h.delivered, h.read FROM workflow_delivery_hours h
       WHERE h.workflow_id = $2 AND h.organization_id = $1 AND h.hour >= $7 AND h.hour < $8
      UNION ALL
      SELECT (m.sent_at IS NOT NULL OR m.failed_at IS NOT NULL)::int, (m.delivered_at IS NOT NULL)::int, (m.read_at IS NOT NULL)::int
        FROM message_deliveries m
       WHERE m.workflow_id = $2 AND m.organization_id = $1 AND (m.started_at >= $3 AND m.started_at < $4 OR m.started_at >= $5 AND m.started_at <= $6)
    ) f`);

/** The error code of executions a person's takeover ended (ExecutionErrorCodes.handedOff). */
export const HANDED_OFF_CODE = 'EXECUTION_HANDED_OFF';

/**
 * Executions started in `[$3, $4]` that a handoff ended: the whole UTC days `[$5, $6)` from the error-code
 * rollup (workflow_error_days, per start day), the partial days at the ends from the executions (as
 * `/performance` reads its error counts: splitDays). `$1` organization, `$2` workflow, `$7` the code.
 */
const WORKFLOW_HANDOFFS = new SqlStatement<{ handed_off: number }>(`
  SELECT COALESCE(sum(n), 0)::int AS handed_off
    FROM (
      SELECT e.failed AS n FROM workflow_error_days e
       WHERE e.workflow_id = $2 AND e.organization_id = $1 AND e.day >= $5 AND e.day < $6 AND e.code = $7
      UNION ALL
      SELECT 1 FROM workflow_executions we
       WHERE we.workflow_id = $2 AND we.organization_id = $1 AND we.status = 'failed' AND we.error->>'code' = $7
         AND (we.started_at >= $3 AND we.started_at < $5 OR we.started_at >= $6 AND we.started_at <= $4)
    ) f`);

/** The local buckets of a period, empty ones included: the key as in WORKFLOW_SUMMARY and the instant it starts. */
const BUCKETS = new SqlStatement<{ key: string; start: Date }>(`
  SELECT to_char(b, 'YYYY-MM-DD"T"HH24:MI:SS') AS key, b AT TIME ZONE $3 AS start
    FROM generate_series(date_trunc($4, $1::timestamptz AT TIME ZONE $3), date_trunc($4, $2::timestamptz AT TIME ZONE $3), ('1 ' || $4)::interval) b`);

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

/**
 * The list's figures per workflow of the organization `$1` over `[$2, $3]`: the whole hours `[$6, $7)`
 * from the hourly rollups (counts from workflow_execution_hours, distinct customers from
 * workflow_customer_hours), the partial hours at each end from the executions' rows. So the figures
 * of a period stay whole once its rows are past retention.
 */
function workflowList(order: 'executions' | 'success_rate'): SqlStatement<WorkflowListRow> {
  const sort = order === 'executions' ? 'executions' : 'success_rate';
  return new SqlStatement<WorkflowListRow>(`
    WITH edge AS MATERIALIZED (
      SELECT we.workflow_id, we.status, we.duration_ms, we.customer_ref
        FROM workflow_executions we WHERE we.organization_id = $1 AND we.started_at >= $2 AND we.started_at < $6
      UNION ALL
      SELECT we.workflow_id, we.status, we.duration_ms, we.customer_ref
        FROM workflow_executions we WHERE we.organization_id = $1 AND we.started_at >= $7 AND we.started_at <= $3
    ), counts AS (
      SELECT workflow_id, sum(executions)::int AS executions, sum(successful)::int AS successful, sum(failed)::int AS failed,
             sum(duration_sum) AS duration_sum, sum(successful + failed) AS finished
        FROM (SELECT workflow_id, 1 AS executions, (status = 'success')::int AS successful, (status = 'failed')::int AS failed,
                     CASE WHEN status <> 'running' THEN duration_ms ELSE 0 END::bigint AS duration_sum
                FROM edge
              UNION ALL
              SELECT h.workflow_id, h.executions, h.successful, h.failed, h.duration_sum
                FROM workflow_execution_hours h WHERE h.organization_id = $1 AND h.hour >= $6 AND h.hour < $7) f
       GROUP BY workflow_id
    ), customers AS (
      SELECT workflow_id, ${distinctCustomers('customer')} AS unique_customers
        FROM (SELECT workflow_id, customer_ref AS customer FROM edge
              UNION ALL
              SELECT c.workflow_id, c.customer FROM workflow_customer_hours c JOIN workflows cw ON cw.id = c.workflow_id
               WHERE cw.organization_id = $1 AND c.hour >= $6 AND c.hour < $7) x
       GROUP BY workflow_id
    ), s AS (
      SELECT c.workflow_id, c.executions, c.successful, c.failed, c.successful::float8 / NULLIF(c.finished, 0) AS success_rate,
             round(c.duration_sum::numeric / NULLIF(c.finished, 0))::int AS average_duration_ms, u.unique_customers
        FROM counts c LEFT JOIN customers u ON u.workflow_id = c.workflow_id
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

const TIMEZONES = new SqlStatement<{ name: string }>(`SELECT name FROM pg_timezone_names`);

/** The statements as sent, for EXPLAIN scripts. */
export const WORKFLOW_ANALYTICS_STATEMENTS = { WORKFLOW_COUNTS, WORKFLOW_CUSTOMERS, WORKFLOW_SATISFACTION, WORKFLOW_GROUPS, BUCKETS };

/**
 * The statements of `GET /v1/analytics/workflows/{workflow_id}` (counts, customers, satisfaction,
 * groups, buckets) and `GET /v1/analytics/workflows` (the list), and the zone names every
 * analytics endpoint accepts.
 */
@Injectable()
export class WorkflowAnalyticsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

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

  async workflowDeliveries(org: string, workflowId: string, start: Date, end: Date): Promise<DeliveryCounts> {
    const split = hourSplit(start, end);
    const [row] = await WORKFLOW_DELIVERIES.run(this.dataSource, [org, workflowId, split.rawFrom, split.rawTo, split.rawFrom2, split.rawTo2, split.hoursFrom, split.hoursTo]);
    return row ?? { concluded: 0, delivered: 0, read: 0 };
  }

  /** Executions started in the period that a handoff ended (whole UTC days from the error-code rollup). */
  async workflowHandoffs(org: string, workflowId: string, start: Date, end: Date): Promise<number> {
    const { daysFrom, daysTo } = splitDays(start, end);
    const [row] = await WORKFLOW_HANDOFFS.run(this.dataSource, [org, workflowId, start, end, daysFrom, daysTo, HANDED_OFF_CODE]);
    return row?.handed_off ?? 0;
  }

  buckets(start: Date, end: Date, tz: string, granularity: string): Promise<{ key: string; start: Date }[]> {
    return BUCKETS.run(this.dataSource, [start, end, tz, granularity]);
  }

  workflowList(org: string, start: Date, end: Date, sort: 'executions' | 'success_rate', order: 'asc' | 'desc', limit: number, offset: number) {
    const split = hourSplit(start, end);
    return WORKFLOW_LISTS[sort][order].run(this.dataSource, [org, start, end, limit, offset, split.hoursFrom, split.hoursTo]);
  }

  async countWorkflows(org: string): Promise<number> {
    const rows: { n: number }[] = await this.dataSource.query('SELECT count(*)::int AS n FROM workflows WHERE organization_id = $1', [org]);
    return rows[0].n;
  }
}
