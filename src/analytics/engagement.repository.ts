import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { SqlStatement } from '../database/sql-statement.js';
import { foldRollups } from '../rollups/rollup-folder.js';
import { meanRating } from './analytics-sql.js';
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
 * Sessions, by definition (docs/DECISIONS.md "Analytics", "Engagement"): a customer's
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
           ${meanRating('rating_sum', 'ratings')} AS satisfaction,
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

/** The statements as sent, for EXPLAIN scripts. */
export const ENGAGEMENT_STATEMENTS = { ENGAGEMENT, ENGAGEMENT_RAW, ENGAGEMENT_ANSWERS, TOTAL_CUSTOMERS };

/** The statements of `GET /v1/analytics/customers/engagement`. */
@Injectable()
export class EngagementRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * From the rollups; `raw` computes the same figures from the messages and steps (for tests: slow
   * at volume). The new customers' figures come from their sessions (ENGAGEMENT: typically few);
   * everyone's, and so the returning customers' (everyone's less the new ones'), from the day sets
   * (src/analytics/engagement-days.ts).
   */
  async engagement(org: string, start: Date, end: Date, filter: EngagementFilter, middle: Date, raw = false): Promise<EngagementRow[]> {
    const values = [org, start, end, filter.channel, filter.segment, middle];
    if (raw) return ENGAGEMENT_RAW.run(this.dataSource, values);
    // The sessions and first channels are folded from the messages' change log: everything logged so far first.
    await foldRollups(this.dataSource);
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
}
