import { isoMicros, splitPeriod } from '../common/period-split.js';
import { SqlStatement } from '../database/sql-statement.js';

/**
 * Distinct active customers of the engagement endpoint from per-day customer sets (migration
 * EngagementDaySets; docs/DECISIONS.md "Analytics", "Engagement").
 *
 * A period is read as its whole UTC days, each (day, channel) from its stored set while the set's
 * session count and checksum equal the day's, and the rest — the partial days at its ends and the
 * day split by the halves' boundary — from the sessions themselves, as sets of the same kind. The
 * union of the sets is counted here: customers are their 64-bit hashes, so two customers of one
 * organization would have to share a hash to be counted once (for a million customers, a chance of
 * about 3 in 100 million).
 */

const DAY_US = 86_400_000_000;

/** Sessions read from customer_sessions itself: started in `[from, to)` (µs since the epoch), all in one half. */
export interface RawPart {
  from: number;
  to: number;
  half: 1 | 2;
}

export interface EngagementDayPlan {
  /** Whole UTC days `[daysFrom, daysTo)` (µs), read from the stored sets except `middleDay`. Empty: both at the start. */
  daysFrom: number;
  daysTo: number;
  /** The whole day the halves' boundary cuts (read raw, in two parts), or null. */
  middleDay: number | null;
  /** The halves' boundary (µs): a session started before it is in the first half. */
  middle: number;
  raw: RawPart[];
}

/**
 * How `[start, end]` (end inclusive, to the millisecond) is read, halves split at `middle`: the
 * whole UTC days inside it and the partial ones at its ends as every rollup read splits a period
 * (splitPeriod, way `inside`), then the day the halves' boundary cuts moved to the raw parts, and
 * each raw part cut at the boundary.
 */
export function engagementDayPlan(start: Date, end: Date, middle: Date): EngagementDayPlan {
  const split = splitPeriod(start, end, { unit: 'day', way: 'inside' });
  const { wholeFrom: daysFrom, wholeTo: daysTo } = split;
  const m = middle.getTime() * 1000;
  const ranges = split.ranges.map((r): [number, number] => [r.from, r.to]);
  const md = Math.floor(m / DAY_US) * DAY_US;
  const middleDay = md !== m && md >= daysFrom && md < daysTo ? md : null;
  if (middleDay !== null) ranges.push([middleDay, middleDay + DAY_US]);
  const raw: RawPart[] = [];
  for (const [from, to] of ranges) {
    if (from >= to) continue;
    if (m > from && m < to) raw.push({ from, to: m, half: 1 }, { from: m, to, half: 2 });
    else raw.push({ from, to, half: m <= from ? 2 : 1 });
  }
  return { daysFrom, daysTo, middleDay, middle: m, raw };
}

/** The half a whole day (µs, not the middle day) belongs to. */
export function halfOfDay(plan: EngagementDayPlan, day: number): 1 | 2 {
  return day >= plan.middle ? 2 : 1;
}

/**
 * How many distinct customers the sets hold together (each set: 8-byte customer hashes): an
 * open-addressing hash set over the hashes' two 32-bit halves, sized to at most half full. The
 * hashes are uniform already, so their low half is the slot. (Sorting a BigInt64Array of 80,000
 * was 3–10 times slower.)
 */
export function countDistinct(sets: readonly Uint8Array[]): number {
  let bytes = 0;
  for (const set of sets) bytes += set.length;
  if (bytes % 8 !== 0) throw new Error('a customer set is not a whole number of 8-byte hashes');
  const n = bytes / 8;
  if (n === 0) return 0;
  // One aligned copy: a set's bytes may start anywhere in pg's buffers.
  const words = new Int32Array(n * 2);
  const view = new Uint8Array(words.buffer);
  let at = 0;
  for (const set of sets) {
    view.set(set, at);
    at += set.length;
  }
  let size = 1;
  while (size < n * 2) size *= 2;
  const mask = size - 1;
  const slots = new Int32Array(size * 2);
  const used = new Uint8Array(size);
  let distinct = 0;
  for (let i = 0; i < words.length; i += 2) {
    const lo = words[i];
    const hi = words[i + 1];
    let slot = lo & mask;
    while (used[slot] === 1 && (slots[2 * slot] !== lo || slots[2 * slot + 1] !== hi)) slot = (slot + 1) & mask;
    if (used[slot] === 0) {
      used[slot] = 1;
      slots[2 * slot] = lo;
      slots[2 * slot + 1] = hi;
      distinct += 1;
    }
  }
  return distinct;
}

/** A customer's hash as the sets store it, and the sessions' checksum term, of customer_sessions `s`. */
const HASH = (s: string) => `int8send(uuid_hash_extended(${s}.customer_id, 0))`;
const CHECKSUM = (s: string) => `sum((uuid_hash_extended(${s}.customer_id, 0) & 2147483647)::int)::bigint::text`;

export interface DayFactRow {
  channel: string;
  /** The UTC day the sessions started. */
  day: Date;
  first_half: boolean;
  sessions: number;
  messages: number;
  duration_ms: number;
  checksum: string;
}

/**
 * The period's sessions (`$1` organization, `[$2, $3]`, `$4` channel or null) per channel, UTC day
 * and half (`$5` the boundary): the sums of every figure but the distinct customers, and per day the
 * count and checksum a stored set is checked against. Day by day (an index-only range scan each):
 * grouped by an expression over the whole period, the planner cannot estimate the groups and sorts
 * every session on disk instead (~2.4x slower at 80,000 sessions).
 */
export const DAY_FACTS = new SqlStatement<DayFactRow>(`
  SELECT x.channel, d.day, x.first_half, x.sessions, x.messages, x.duration_ms, x.checksum
    FROM generate_series(date_trunc('day', $2::timestamptz, 'UTC'), $3::timestamptz, interval '24 hours') AS d(day)
    CROSS JOIN LATERAL (
      SELECT s.channel, s.started_at < $5 AS first_half, count(*)::int AS sessions, sum(s.messages)::int AS messages,
             sum(date_part('epoch', s.ended_at - s.started_at) * 1000)::float8 AS duration_ms, ${CHECKSUM('s')} AS checksum
        FROM customer_sessions s
       WHERE s.organization_id = $1 AND s.started_at >= GREATEST(d.day, $2::timestamptz) AND s.started_at < d.day + interval '24 hours'
         AND s.started_at <= $3 AND ($4::text IS NULL OR s.channel = $4)
       GROUP BY 1, 2) x`);

export interface DaySetRow {
  channel: string;
  /** A stored set's day; null for a raw part. */
  day: Date | null;
  sessions: number | null;
  checksum: string | null;
  customers: Buffer;
  /** A raw part's index in the plan (1-based); null for a stored set. */
  part: number | null;
}

/**
 * The stored sets of the whole days `[$2, $3)` and the sets of the raw parts (`$5` froms, `$6`
 * tos, exclusive), per channel (`$4` one or null).
 */
export const DAY_SETS = new SqlStatement<DaySetRow>(`
  SELECT d.channel, d.day, d.sessions, d.checksum::text AS checksum, d.customers, NULL::int AS part
    FROM engagement_day_sets d
   WHERE d.organization_id = $1 AND d.day >= $2::timestamptz AND d.day < $3::timestamptz AND ($4::text IS NULL OR d.channel = $4)
  UNION ALL
  SELECT s.channel, NULL, NULL, NULL, string_agg(DISTINCT ${HASH('s')}, ''::bytea), r.part::int
    FROM unnest($5::timestamptz[], $6::timestamptz[]) WITH ORDINALITY AS r(from_at, to_at, part)
    JOIN customer_sessions s ON s.organization_id = $1 AND s.started_at >= r.from_at AND s.started_at < r.to_at
                            AND ($4::text IS NULL OR s.channel = $4)
   GROUP BY s.channel, r.part`);

/**
 * Folds the sets of (`$2` channels, `$3` days) of organization `$1` from its sessions and stores
 * them; returns them. Concurrent folds of one day store equal sets; a fold from an older snapshot is
 * folded again by the next request that finds its checksum stale.
 */
export const FOLD_DAY_SETS = new SqlStatement<{ channel: string; day: Date; customers: Buffer }>(`
  WITH f AS (
    SELECT k.channel, k.day, x.sessions, x.checksum, x.customers
      FROM unnest($2::text[], $3::timestamptz[]) AS k(channel, day)
      CROSS JOIN LATERAL (
        SELECT count(*)::int AS sessions, COALESCE(sum((uuid_hash_extended(s.customer_id, 0) & 2147483647)::int), 0)::bigint AS checksum,
               COALESCE(string_agg(DISTINCT ${HASH('s')}, ''::bytea), ''::bytea) AS customers
          FROM customer_sessions s
         WHERE s.organization_id = $1 AND s.started_at >= k.day AND s.started_at < k.day + interval '24 hours' AND s.channel = k.channel) x
  ), stored AS (
    INSERT INTO engagement_day_sets AS d (organization_id, day, channel, sessions, checksum, customers)
    SELECT $1, day, channel, sessions, checksum, customers FROM f ORDER BY day, channel
        ON CONFLICT (organization_id, day, channel)
        DO UPDATE SET sessions = excluded.sessions, checksum = excluded.checksum, customers = excluded.customers
  )
  SELECT channel, day, customers FROM f`);

/** One (channel, day) set's place in the period: its channel and half. */
export interface PlacedSet {
  channel: string;
  half: 1 | 2;
  customers: Uint8Array;
}

/** The distinct customers of the placed sets: overall, per channel and per half. */
export function distinctFigures(sets: readonly PlacedSet[]): { all: number; channels: Map<string, number>; halves: [number, number] } {
  const byChannel = new Map<string, Uint8Array[]>();
  const halves: [Uint8Array[], Uint8Array[]] = [[], []];
  for (const set of sets) {
    if (set.customers.length === 0) continue;
    const list = byChannel.get(set.channel) ?? [];
    list.push(set.customers);
    byChannel.set(set.channel, list);
    halves[set.half - 1].push(set.customers);
  }
  return {
    all: countDistinct(sets.map((s) => s.customers)),
    channels: new Map([...byChannel].map(([channel, list]) => [channel, countDistinct(list)])),
    halves: [countDistinct(halves[0]), countDistinct(halves[1])],
  };
}

/** The statement values of a plan's parts for DAY_SETS (`$2`, `$3`, `$5`, `$6`). */
export function planValues(plan: EngagementDayPlan): { daysFrom: string; daysTo: string; froms: string[]; tos: string[] } {
  return {
    daysFrom: isoMicros(plan.daysFrom),
    daysTo: isoMicros(plan.daysTo),
    froms: plan.raw.map((p) => isoMicros(p.from)),
    tos: plan.raw.map((p) => isoMicros(p.to)),
  };
}
