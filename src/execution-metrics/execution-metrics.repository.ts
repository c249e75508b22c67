import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { Period } from '../common/date-range.js';
import { SqlStatement } from '../database/sql-statement.js';
import { hourSplit, type HourSplit } from '../common/period-split.js';
import { foldSpans, poolQuery, TRIGGER_SKETCHES, WORKFLOW_SKETCHES, type Query, type SketchTables, type Span } from './customer-days.js';
import { CustomerUnion } from './customer-sketch.js';
import { SketchCache, type HeldSketch } from './sketch-cache.js';

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
  kind: 'counts' | 'day' | 'month' | 'hashes';
  all_buckets: number;
  all_channels: number;
  bucket: Date | null;
  channel: string | null;
  /**
   * `day` and `month`: the span's start; its stored count while its checksum is current (else
   * null: to fold), and its sketch unless the day lies in a whole month (`covered`).
   */
  day: Date | null;
  covered: boolean | null;
  /** Null too while the caller holds the span's sketch at this checksum (`$14..$17`). */
  sketch: Buffer | null;
  /** `day` and `month`: the span's customer checksum now (bigint as text). */
  checksum: string | null;
  /** `hashes`: the bucket's customers outside whole days, hashed: 8 big-endian bytes each, repeats possible. */
  hashes: Buffer | null;
}

const EMPTY: SummaryRow = { executions: 0, successful: 0, failed: 0, success_rate: null, average_duration_ms: null, unique_customers: 0 };
const DAY_MS = 86_400_000;

/** Stored sketches a process keeps (at most 16 KiB each: 16 MiB in all), about 35 parents' 30 days. */
export const SKETCH_CACHE_ENTRIES = 1024;

interface Source {
  /** The executions of the parent in the raw ranges `$3..$6`: id, status, duration_ms, customer, channel, at. */
  edges: string;
  /** The hour rows of the whole hours `$7..$8` outside the whole days `$10..$11`, and their customer sets. */
  hours: string;
  customers: string;
  /** The day rows of the whole days `$10..$11`, and the stored sketches of its days and whole months `$12..$13`. */
  days: string;
  sketches: string;
  messages: boolean;
}

/**
 * One statement: the raw edges, the hour rows outside whole UTC days and the day rows of whole
 * days as one set of facts, grouped per bucket, per channel and overall (GROUPING SETS). Rates and
 * means from the sums, with the arithmetic the per-execution SQL used (float8 division;
 * round(numeric) half away from zero). Distinct customers are merged by the caller from: per whole
 * UTC month `[$12, $13)` its stored sketch; per other whole day its stored sketch (per day of a whole
 * month only its count, at `day` granularity, for its bucket); both returned only while their
 * checksum equals the one their day rows add up to now (else the count is null and the caller folds
 * them anew); per bucket, the hashed customers of the other hours (exact sets) and of the edges, as
 * 8-byte `int8send` values in one bytea (repeats are left to the union, which counts each once:
 * no sort in the statement, no text to parse in the service).
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
  const none = `NULL::timestamptz AS day, NULL::boolean AS covered, NULL::bytea AS sketch, NULL::text AS checksum, NULL::bytea AS hashes`;
  // The sketches the caller already holds at these checksums: days `$14, $15`, months `$16, $17`.
  const held = (span: 'day' | 'month', start: string, checksum: string) =>
    `EXISTS (SELECT 1 FROM unnest(${span === 'day' ? '$14::timestamptz[], $15::bigint[]' : '$16::timestamptz[], $17::bigint[]'}) AS held(start, checksum)
              WHERE held.start = ${start} AND held.checksum = ${checksum})`;
  return `
  WITH edge AS MATERIALIZED (${s.edges})${messages},
  day_rows AS MATERIALIZED (${s.days}),
  facts AS (
    SELECT ${bucket('edge.at')} AS bucket, edge.channel, 1 AS executions, (edge.status = 'success')::int AS successful,
           (edge.status = 'failed')::int AS failed, CASE WHEN edge.status <> 'running' THEN edge.duration_ms ELSE 0 END::bigint AS duration_sum,
           ${edgeMessages}
      FROM edge ${s.messages ? 'LEFT JOIN m ON m.execution_id = edge.id' : ''}
    UNION ALL
    SELECT ${bucket('h.hour')}, h.channel, h.executions, h.successful, h.failed, h.duration_sum, ${hourMessages}
      FROM (${s.hours}) h
    UNION ALL
    SELECT ${bucket('h.day')}, h.channel, h.executions, h.successful, h.failed, h.duration_sum, ${hourMessages}
      FROM day_rows h
  ), days AS (
    SELECT day, sum(customer_checksum)::bigint AS checksum, (day >= $12 AND day < $13) AS covered FROM day_rows GROUP BY day
  ), months AS (
    SELECT date_trunc('month', day, 'UTC') AS month, sum(checksum)::bigint AS checksum FROM days WHERE covered GROUP BY 1
  ), hashed AS (
    SELECT ${bucket('edge.at')} AS bucket, hashtextextended(edge.customer, 0) AS hash FROM edge WHERE edge.customer IS NOT NULL
    UNION ALL
    SELECT ${bucket('c.hour')}, hashtextextended(c.customer, 0) FROM (${s.customers}) c
  )
  SELECT 'counts' AS kind, GROUPING(bucket)::int AS all_buckets, GROUPING(channel)::int AS all_channels,
         bucket AT TIME ZONE 'UTC' AS bucket, channel,
         COALESCE(sum(executions), 0)::int AS executions, COALESCE(sum(successful), 0)::int AS successful,
         COALESCE(sum(failed), 0)::int AS failed,
         sum(successful)::float8 / NULLIF(sum(successful) + sum(failed), 0) AS success_rate,
         round(sum(duration_sum)::numeric / NULLIF(sum(successful) + sum(failed), 0))::int AS average_duration_ms,
         0 AS unique_customers, COALESCE(sum(sent), 0)::int AS messages_sent, COALESCE(sum(received), 0)::int AS messages_received,
         ${none}
    FROM facts
   GROUP BY GROUPING SETS ((bucket), (channel), ())
  -- Rollup rows can hold zeros (after a deletion): a bucket or channel shows only with executions.
  HAVING sum(executions) <> 0 OR (GROUPING(bucket) = 1 AND GROUPING(channel) = 1)
  UNION ALL
  SELECT 'day', 0, 1, ${bucket('d.day')} AT TIME ZONE 'UTC', NULL, 0, 0, 0, NULL, NULL,
         CASE WHEN s.checksum = d.checksum THEN s.customers END, 0, 0, d.day, d.covered,
         CASE WHEN s.checksum = d.checksum AND NOT d.covered AND NOT ${held('day', 'd.day', 'd.checksum')} THEN s.sketch END,
         d.checksum::text, NULL
    FROM days d LEFT JOIN (${s.sketches}) s ON s.span = 'day' AND s.start = d.day
   -- A day of a whole month only counts on its own, as a bucket.
   WHERE NOT d.covered OR $9 = 'day'
  UNION ALL
  SELECT 'month', 0, 1, ${bucket('m.month')} AT TIME ZONE 'UTC', NULL, 0, 0, 0, NULL, NULL,
         CASE WHEN s.checksum = m.checksum THEN s.customers END, 0, 0, m.month, NULL,
         CASE WHEN s.checksum = m.checksum AND NOT ${held('month', 'm.month', 'm.checksum')} THEN s.sketch END, m.checksum::text, NULL
    FROM months m LEFT JOIN (${s.sketches}) s ON s.span = 'month' AND s.start = m.month
  UNION ALL
  SELECT 'hashes', 0, 1, bucket AT TIME ZONE 'UTC', NULL, 0, 0, 0, NULL, NULL, 0, 0, 0, NULL, NULL, NULL, NULL, string_agg(int8send(hash), ''::bytea)
    FROM hashed GROUP BY bucket`;
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
  hours: `
    SELECT hour, channel, executions, successful, failed, duration_sum, messages_sent, messages_received FROM workflow_execution_hours WHERE workflow_id = $1 AND organization_id = $2 AND hour >= $7 AND hour < $10
    UNION ALL
    SELECT hour, channel, executions, successful, failed, duration_sum, messages_sent, messages_received FROM workflow_execution_hours WHERE workflow_id = $1 AND organization_id = $2 AND hour >= $11 AND hour < $8`,
  customers: `
    SELECT hour, customer FROM workflow_customer_hours WHERE workflow_id = $1 AND hour >= $7 AND hour < $10
    UNION ALL
    SELECT hour, customer FROM workflow_customer_hours WHERE workflow_id = $1 AND hour >= $11 AND hour < $8`,
  days: `SELECT day, channel, executions, successful, failed, duration_sum, messages_sent, messages_received, customer_checksum FROM workflow_execution_days WHERE workflow_id = $1 AND organization_id = $2 AND day >= $10 AND day < $11`,
  sketches: `SELECT span, start, checksum, customers, sketch FROM workflow_customer_sketches WHERE workflow_id = $1 AND start >= $10 AND start < $11`,
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
  hours: `
    SELECT hour, channel, executions, successful, failed, duration_sum FROM trigger_execution_hours WHERE trigger_id = $1 AND organization_id = $2 AND hour >= $7 AND hour < $10
    UNION ALL
    SELECT hour, channel, executions, successful, failed, duration_sum FROM trigger_execution_hours WHERE trigger_id = $1 AND organization_id = $2 AND hour >= $11 AND hour < $8`,
  customers: `
    SELECT hour, customer FROM trigger_customer_hours WHERE trigger_id = $1 AND hour >= $7 AND hour < $10
    UNION ALL
    SELECT hour, customer FROM trigger_customer_hours WHERE trigger_id = $1 AND hour >= $11 AND hour < $8`,
  days: `SELECT day, channel, executions, successful, failed, duration_sum, customer_checksum FROM trigger_execution_days WHERE trigger_id = $1 AND organization_id = $2 AND day >= $10 AND day < $11`,
  sketches: `SELECT span, start, checksum, customers, sketch FROM trigger_customer_sketches WHERE trigger_id = $1 AND start >= $10 AND start < $11`,
  messages: false,
});

// Named: every part is a range of the parent's primary-key or (parent, time) index, whatever the values.
const WORKFLOW_SUMMARY = new SqlStatement<RawRow>(WORKFLOW_SQL, { prepareAs: 'metrics.workflow' });
const TRIGGER_SUMMARY = new SqlStatement<RawRow>(TRIGGER_SQL, { prepareAs: 'metrics.trigger' });

/** The statements as sent, for bench/explain-history.mjs (the plans of docs/PERFORMANCE.md). */
export const METRICS_STATEMENTS = { workflow: WORKFLOW_SUMMARY, trigger: TRIGGER_SUMMARY };

/** The first instant of the UTC month `offset` months after `d`'s (any year: `Date.UTC` maps years 0–99 to 19xx). */
function monthStart(d: Date, offset: number): Date {
  const m = new Date(0);
  m.setUTCFullYear(d.getUTCFullYear(), d.getUTCMonth() + offset, 1);
  return m;
}

/**
 * The whole UTC days `[daysFrom, daysTo)` inside the whole hours of a period, read from day rows and
 * day sketches (none at `hour` granularity, whose buckets need each hour's exact set anyway), and
 * the whole UTC months `[monthsFrom, monthsTo)` inside those, whose customers come from month
 * sketches (at `day` and `month` granularity: a week can straddle two months). Empty ranges as
 * `[x, x)`.
 */
export function wholeSpans(s: HourSplit, granularity: Period['granularity']): { daysFrom: Date; daysTo: Date; monthsFrom: Date; monthsTo: Date } {
  const from = Math.ceil(s.hoursFrom.getTime() / DAY_MS) * DAY_MS;
  const to = Math.floor(s.hoursTo.getTime() / DAY_MS) * DAY_MS;
  if (granularity === 'hour' || from >= to) return { daysFrom: s.hoursFrom, daysTo: s.hoursFrom, monthsFrom: s.hoursFrom, monthsTo: s.hoursFrom };
  const f = new Date(from);
  const firstMonth = f.getUTCDate() === 1 ? f : monthStart(f, 1);
  const t = new Date(to);
  const lastMonth = monthStart(t, 0);
  const months = granularity !== 'week' && firstMonth < lastMonth;
  return {
    daysFrom: f,
    daysTo: t,
    monthsFrom: months ? firstMonth : f,
    monthsTo: months ? lastMonth : f,
  };
}

/** The sketches of day and month spans the caller holds, by start (ms). */
export interface HeldSpans {
  day: Map<number, HeldSketch>;
  month: Map<number, HeldSketch>;
}

const NONE_HELD: HeldSpans = { day: new Map(), month: new Map() };

/** The values a summary statement binds for a period (and the spans whose sketches the caller holds). */
export function summaryValues(id: string, organizationId: string, period: Period, held: HeldSpans = NONE_HELD): unknown[] {
  const s = hourSplit(period.start, period.end);
  const w = wholeSpans(s, period.granularity);
  const starts = (m: Map<number, HeldSketch>) => [...m.keys()].map((ms) => new Date(ms));
  const checksums = (m: Map<number, HeldSketch>) => [...m.values()].map((h) => h.checksum);
  return [
    id, organizationId, s.rawFrom, s.rawTo, s.rawFrom2, s.rawTo2, s.hoursFrom, s.hoursTo, period.granularity, w.daysFrom, w.daysTo, w.monthsFrom, w.monthsTo,
    starts(held.day), checksums(held.day), starts(held.month), checksums(held.month),
  ];
}

/** The starts of the whole UTC days `[from, to)`, or of the UTC months `[from, to)` (from a month's first). */
function spanStarts(span: Span, from: Date, to: Date): Date[] {
  const starts: Date[] = [];
  for (let d = from; d < to; d = span === 'day' ? new Date(d.getTime() + DAY_MS) : monthStart(d, 1)) starts.push(d);
  return starts;
}

/** A day or month of distinct customers: its count, and its sketch (none for a day of a whole month). */
interface Part {
  customers: number;
  sketch: Buffer | CustomerUnion | null;
}

function addPart(union: CustomerUnion, part: Part): void {
  if (part.sketch instanceof CustomerUnion) union.addUnion(part.sketch);
  else if (part.sketch) union.addSketch(part.sketch);
  else throw new Error('a day of a whole month merged without its sketch');
}

/**
 * Workflow and trigger metrics from the hourly rollups, never recomputed from every execution:
 * a period's cost is its number of hours, plus the executions of its two partial end hours, plus
 * for distinct customers one sketch per whole UTC day and the exact customer sets of the other
 * hours. Buckets are UTC, with `date_trunc` semantics (ISO weeks start on Monday); an hour, and at
 * day, week and month granularity a UTC day, always lies within one bucket.
 *
 * Unique customers are exact while every part merged is exact (hour sets, edges, day sketches of
 * up to 2,048 customers); beyond, a HyperLogLog estimate with a relative standard error of 0.81 %
 * (src/execution-metrics/customer-sketch.ts). Every other figure is exact.
 */
@Injectable()
export class ExecutionMetricsRepository {
  private readonly query: Query;
  private readonly sketches = new SketchCache(SKETCH_CACHE_ENTRIES);

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.query = poolQuery(dataSource);
  }

  workflow(organizationId: string, workflowId: string, period: Period): Promise<ExecutionSummary> {
    return this.summarise(WORKFLOW_SUMMARY, WORKFLOW_SKETCHES, organizationId, workflowId, period);
  }

  trigger(organizationId: string, triggerId: string, period: Period): Promise<ExecutionSummary> {
    return this.summarise(TRIGGER_SUMMARY, TRIGGER_SKETCHES, organizationId, triggerId, period);
  }

  private async summarise(statement: SqlStatement<RawRow>, tables: SketchTables, organizationId: string, id: string, period: Period): Promise<ExecutionSummary> {
    const w = wholeSpans(hourSplit(period.start, period.end), period.granularity);
    const held: HeldSpans = {
      day: this.sketches.held(tables.sketches, id, 'day', spanStarts('day', w.daysFrom, w.daysTo)),
      month: this.sketches.held(tables.sketches, id, 'month', spanStarts('month', w.monthsFrom, w.monthsTo)),
    };
    const rows = await statement.run(this.dataSource, summaryValues(id, organizationId, period, held));
    const summary: ExecutionSummary = { totals: { ...EMPTY }, channels: {}, buckets: [] };
    // Per bucket, its parts (a bucket of one span alone takes that span's stored count); overall,
    // every part but the days of whole months, which their months cover.
    const buckets = new Map<number, { spans: Part[]; hashes: Buffer[] }>();
    const partsOf = (bucket: Date) => {
      let p = buckets.get(bucket.getTime());
      if (!p) buckets.set(bucket.getTime(), (p = { spans: [], hashes: [] }));
      return p;
    };
    const overall: Part[] = [];
    const stale: Record<Span, { start: Date; place: (p: Part) => void }[]> = { day: [], month: [] };
    for (const { kind, all_buckets, all_channels, bucket, channel, day, covered, sketch: sent, checksum, hashes, ...figures } of rows) {
      if (kind === 'day' || kind === 'month') {
        // Left out by the statement while this process holds it at the span's checksum now.
        let sketch = sent;
        if (sent) this.sketches.remember(tables.sketches, id, kind, day as Date, { checksum: checksum as string, sketch: sent });
        else if (!covered) {
          const mine = held[kind].get((day as Date).getTime());
          if (mine && mine.checksum === checksum) sketch = mine.sketch;
        }
        // A month is a bucket of its own at month granularity only.
        const inBucket = kind === 'day' || period.granularity === 'month';
        const place = (part: Part) => {
          if (inBucket) partsOf(bucket as Date).spans.push(part);
          if (!covered) overall.push(part);
        };
        if (figures.unique_customers === null) stale[kind].push({ start: day as Date, place });
        else place({ customers: figures.unique_customers, sketch });
        continue;
      }
      if (kind === 'hashes') {
        partsOf(bucket as Date).hashes.push(hashes as Buffer);
        continue;
      }
      if (all_buckets === 1 && all_channels === 1) summary.totals = figures;
      else if (all_buckets === 1) summary.channels[channel ?? UNKNOWN_CHANNEL] = figures.executions;
      else if (bucket) summary.buckets.push({ ...figures, date: bucket });
    }
    await Promise.all(
      (['day', 'month'] as const).map(async (span) => {
        const folded = await foldSpans(this.query, tables, id, span, stale[span].map((s) => s.start));
        folded.forEach((f, i) => stale[span][i].place({ customers: f.customers, sketch: f.union }));
      }),
    );
    const all = new CustomerUnion();
    for (const part of overall) addPart(all, part);
    const customers = new Map<number, number>();
    for (const [time, p] of buckets) {
      for (const h of p.hashes) all.addHashes(h);
      if (p.spans.length === 1 && p.hashes.length === 0) {
        customers.set(time, p.spans[0].customers);
        continue;
      }
      const union = new CustomerUnion();
      for (const h of p.hashes) union.addHashes(h);
      for (const part of p.spans) addPart(union, part);
      customers.set(time, union.count());
    }
    summary.totals.unique_customers = all.count();
    for (const b of summary.buckets) b.unique_customers = customers.get(b.date.getTime()) ?? 0;
    summary.buckets.sort((a, b) => a.date.getTime() - b.date.getTime());
    return summary;
  }
}
