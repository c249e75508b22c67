import { isoMicros, rawSplit, splitPeriod, type PeriodSplit } from '../common/period-split.js';

/**
 * The SQL of the analytics endpoints, one repository per endpoint (workflow-analytics,
 * performance, engagement, journeys, realtime; the pieces they share are in this file), written as
 * SQL: every statement is scoped by organization (`$1`) and reads the period through an index on (organization or workflow, time). The workflow
 * counts read the executions module's hourly rollups (workflow_execution_hours) for the whole
 * hours of the period when the zone's offsets are whole hours; `/performance` reads day rollups for
 * the whole UTC days of its period (docs/DECISIONS.md "Analytics", "Percentiles within a stated bound"); journeys,
 * node performance and the most-executed workflow read the journey day rollups
 * (workflow_outcome_days, workflow_node_days) for the whole UTC days and the rows for the partial
 * ends (journeySplit; docs/DECISIONS.md "Analytics", "Journeys and node figures");
 * engagement and satisfaction read their own rollups (customer_sessions, customer_channels,
 * execution_answers: docs/DECISIONS.md "Analytics", "Engagement"); everything else is
 * computed from the recorded rows of the period (docs/DECISIONS.md "Analytics", "Definitions").
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

/**
 * The mean form rating of a set of execution_answers rows (or of sums of them): null without a
 * rating. Every satisfaction figure goes through here, as distinct customers go through
 * distinctCustomers.
 */
export function meanRating(ratingSum: string, ratings: string): string {
  return `(sum(${ratingSum}) / NULLIF(sum(${ratings}), 0))::float8`;
}

/** Status figures of a set of executions `e` (status, duration_ms): the arithmetic of the workflow metrics. */
export const STATUS_FIGURES = `
  count(*)::int AS executions,
  (count(*) FILTER (WHERE status = 'success'))::int AS successful,
  (count(*) FILTER (WHERE status = 'failed'))::int AS failed,
  (count(*) FILTER (WHERE status = 'success'))::float8 / NULLIF(count(*) FILTER (WHERE status <> 'running'), 0) AS success_rate,
  round(avg(duration_ms) FILTER (WHERE status <> 'running'))::int AS average_duration_ms`;

/** A workflow's (`$2`) executions of the period `$3..$4` (`$1` organization). */
export const WORKFLOW_EXECUTIONS = `
  SELECT we.id, we.status, we.duration_ms, we.customer_ref, COALESCE(we.channel, 'unknown') AS channel, we.trigger_id,
         we.workflow_id, we.workflow_version, we.started_at, we.error
    FROM workflow_executions we
   WHERE we.organization_id = $1 AND we.workflow_id = $2 AND we.started_at >= $3 AND we.started_at <= $4`;

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
export function splitValues(split: JourneySplit): (string | number)[] {
  const [a, b] = split.ranges;
  return [a.from, a.to, a.sign, b.from, b.to, b.sign, split.daysFrom, split.daysTo];
}

/** No rollup days: the whole period from the rows (the reference the rollups are tested against). */
export function rawJourneySplit(start: Date, end: Date): JourneySplit {
  return journeyBounds(rawSplit(start, end));
}

/** A workflow's (`$2`) executions in the raw ranges of a split (`$3..$8`), with their sign. */
export function rawExecutions(columns: string): string {
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
export const NODE_FACTS = `
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

