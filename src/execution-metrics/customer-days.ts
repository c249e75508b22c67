import type { DataSource } from 'typeorm';
import { servicePool } from '../database/sql-statement.js';
import { CustomerUnion } from './customer-sketch.js';

/** Runs one statement with positional values and returns its rows. */
export type Query = (sql: string, values: unknown[]) => Promise<Record<string, unknown>[]>;

/** A {@link Query} on the data source's pool (no TypeORM query runner around each statement). */
export function poolQuery(dataSource: DataSource): Query {
  const pool = servicePool(dataSource);
  return async (sql, values) => (await pool.query(sql, values)).rows;
}

/** The tables of one kind of rollup: the day rows (counts, checksums), the hourly customer sets and the sketches. */
export interface SketchTables {
  parent: 'workflow_id' | 'trigger_id';
  dayRows: string;
  customers: string;
  sketches: string;
}

export const WORKFLOW_SKETCHES: SketchTables = {
  parent: 'workflow_id',
  dayRows: 'workflow_execution_days',
  customers: 'workflow_customer_hours',
  sketches: 'workflow_customer_sketches',
};

export const TRIGGER_SKETCHES: SketchTables = {
  parent: 'trigger_id',
  dayRows: 'trigger_execution_days',
  customers: 'trigger_customer_hours',
  sketches: 'trigger_customer_sketches',
};

/** A sketch covers one UTC day or one UTC calendar month. */
export type Span = 'day' | 'month';

export interface Folded {
  start: Date;
  customers: number;
  union: CustomerUnion;
}

/** `[start, end)` of a span starting at `start` (a UTC midnight, or the first of a UTC month), in SQL. */
const spanEnd = (span: Span, start: string) =>
  span === 'day' ? `${start} + interval '24 hours'` : `(${start} AT TIME ZONE 'UTC' + interval '1 month') AT TIME ZONE 'UTC'`;

/** The customer checksum of a span of parent `$1` starting at `start` (the sum of its day rows'), in SQL; NULL without rows. */
const spanChecksum = (t: SketchTables, span: Span, start: string) =>
  `(SELECT sum(r.customer_checksum) FROM ${t.dayRows} r WHERE r.${t.parent} = $1 AND r.day >= ${start} AND r.day < ${spanEnd(span, start)})`;

/** Statements a fold of many spans is split into, run at once (a year's first read folds twelve months). */
const FOLD_STATEMENTS = 2;

/**
 * Folds the distinct-customer sketch of each span starting at `starts` of one parent from its
 * hourly customer sets (the exact truth), and stores it with the span's customer checksum (the sum
 * of its day rows' `customer_checksum`) read in the same statement, so that a stored sketch is valid
 * exactly while the span's checksum is unchanged. Idempotent: concurrent folds of a span store equal
 * sketches, and a fold from an older snapshot is refolded by the next read that finds it stale.
 * The spans are split between {@link FOLD_STATEMENTS} statements run at once; each span's hashes come
 * as 8-byte values in one `bytea`, repeats included (no sort in the database, no text to parse here).
 */
export async function foldSpans(query: Query, t: SketchTables, parentId: string, span: Span, starts: Date[]): Promise<Folded[]> {
  if (starts.length === 0) return [];
  const size = Math.ceil(starts.length / FOLD_STATEMENTS);
  const chunks: Date[][] = [];
  for (let i = 0; i < starts.length; i += size) chunks.push(starts.slice(i, i + size));
  return (await Promise.all(chunks.map((chunk) => foldChunk(query, t, parentId, span, chunk)))).flat();
}

async function foldChunk(query: Query, t: SketchTables, parentId: string, span: Span, starts: Date[]): Promise<Folded[]> {
  const rows = (await query(
    `SELECT s.start,
            COALESCE(${spanChecksum(t, span, 's.start')}, 0)::bigint::text AS checksum,
            (SELECT string_agg(int8send(hashtextextended(c.customer, 0)), ''::bytea) FROM ${t.customers} c
              WHERE c.${t.parent} = $1 AND c.hour >= s.start AND c.hour < ${spanEnd(span, 's.start')}) AS hashes
       FROM unnest($2::timestamptz[]) AS s(start)`,
    [parentId, starts],
  )) as { start: Date; checksum: string; hashes: Buffer | null }[];
  const folded = rows.map((r) => {
    const union = new CustomerUnion();
    if (r.hashes) union.addHashes(r.hashes);
    return { parent: parentId, start: r.start, checksum: r.checksum, customers: union.count(), union };
  });
  await storeSketches(query, t, span, folded);
  return folded.map(({ start, customers, union }) => ({ start, customers, union }));
}

/** Stores folded sketches of one span kind, in key order (two folds storing overlapping sets never deadlock). */
async function storeSketches(
  query: Query,
  t: SketchTables,
  span: Span,
  folded: { parent: string; start: Date; checksum: string; customers: number; union: CustomerUnion }[],
): Promise<void> {
  if (folded.length === 0) return;
  await query(
    `INSERT INTO ${t.sketches} AS s (${t.parent}, span, start, checksum, customers, sketch)
     SELECT d.parent, $1, d.start, d.checksum, d.customers, d.sketch
       FROM unnest($2::uuid[], $3::timestamptz[], $4::bigint[], $5::int[], $6::bytea[]) AS d(parent, start, checksum, customers, sketch)
      ORDER BY d.parent, d.start
     ON CONFLICT (${t.parent}, span, start) DO UPDATE SET checksum = EXCLUDED.checksum, customers = EXCLUDED.customers, sketch = EXCLUDED.sketch`,
    [
      span,
      folded.map((f) => f.parent),
      folded.map((f) => f.start),
      folded.map((f) => f.checksum),
      folded.map((f) => f.customers),
      folded.map((f) => f.union.toSketch()),
    ],
  );
}

/** Spans per statement of {@link foldSpansOfAll}. */
const PAGE = 500;

/**
 * Folds the sketch of every span of kind `span` in `[from, to)` (both on that kind's boundaries: UTC midnights,
 * or the firsts of UTC months) of every parent with customers in it, whose stored sketch is missing or stale
 * (its checksum changed). Returns how many sketches were folded. Days: the range's day rows walked once, in
 * their primary key's order (parent, day); months: one month at a time, its day rows by parent.
 */
export async function foldSpansOfAll(query: Query, t: SketchTables, span: Span, from: Date, to: Date, pageSize = PAGE): Promise<number> {
  if (span === 'day') return foldPages(query, t, 'day', 'r.day', from, to, pageSize);
  let count = 0;
  for (let month = from; month < to; month = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1))) {
    count += await foldPages(query, t, 'month', '$3::timestamptz', month, new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1)), pageSize);
  }
  return count;
}

/**
 * The pages of {@link foldSpansOfAll}: `pageSize` spans in key order (parent, start), each page's checksums and hashes
 * in one statement (the hourly sets of a span whose sketch is current are not read). `start`: the SQL of a day
 * row's (`r`) span start, which must follow the day rows' key order.
 */
async function foldPages(query: Query, t: SketchTables, span: Span, start: string, from: Date, to: Date, pageSize: number): Promise<number> {
  let after: { parent: string; next: Date } = { parent: '00000000-0000-0000-0000-000000000000', next: from };
  let count = 0;
  for (;;) {
    const rows = (await query(
      `SELECT p.parent::text AS parent, p.start, p.checksum::bigint::text AS checksum,
              CASE WHEN NOT p.current THEN
                (SELECT string_agg(int8send(hashtextextended(c.customer, 0)), ''::bytea) FROM ${t.customers} c
                  WHERE c.${t.parent} = p.parent AND c.hour >= p.start AND c.hour < ${spanEnd(span, 'p.start')}) END AS hashes,
              p.current, ${spanEnd(span, 'p.start')} AS next
         FROM (SELECT d.parent, d.start, d.checksum,
                      EXISTS (SELECT 1 FROM ${t.sketches} k WHERE k.${t.parent} = d.parent AND k.span = $5 AND k.start = d.start AND k.checksum = d.checksum) AS current
                 FROM (SELECT r.${t.parent} AS parent, ${start} AS start, sum(r.customer_checksum) AS checksum FROM ${t.dayRows} r
                        WHERE (r.${t.parent}, r.day) >= ($1::uuid, $2::timestamptz) AND r.day >= $3 AND r.day < $4
                        GROUP BY 1, 2 ORDER BY 1, 2 LIMIT $6) d) p
        ORDER BY p.parent, p.start`,
      [after.parent, after.next, from, to, span, pageSize],
    )) as { parent: string; start: Date; checksum: string; hashes: Buffer | null; current: boolean; next: Date }[];
    const folded = rows
      .filter((r) => !r.current)
      .map((r) => {
        const union = new CustomerUnion();
        if (r.hashes) union.addHashes(r.hashes);
        return { parent: r.parent, start: r.start, checksum: r.checksum, customers: union.count(), union };
      });
    await storeSketches(query, t, span, folded);
    count += folded.length;
    if (rows.length < pageSize) return count;
    // The next page starts after the last span: its parent, from the end of that span (its day rows are all before).
    after = { parent: rows[rows.length - 1].parent, next: rows[rows.length - 1].next };
  }
}
