import { CustomerUnion } from './customer-sketch.js';

/** Runs one statement with positional values and returns its rows. */
export type Query = (sql: string, values: unknown[]) => Promise<Record<string, unknown>[]>;

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

/**
 * Folds the distinct-customer sketch of each span starting at `starts` of one parent from its
 * hourly customer sets (the exact truth), and stores it with the span's customer checksum (the sum
 * of its day rows' `customer_checksum`) read in the same statement, so that a stored sketch is valid
 * exactly while the span's checksum is unchanged. Idempotent: concurrent folds of a span store equal
 * sketches, and a fold from an older snapshot is refolded by the next read that finds it stale.
 */
export async function foldSpans(query: Query, t: SketchTables, parentId: string, span: Span, starts: Date[]): Promise<Folded[]> {
  if (starts.length === 0) return [];
  const rows = (await query(
    `SELECT s.start,
            (SELECT COALESCE(sum(r.customer_checksum), 0)::bigint::text FROM ${t.dayRows} r
              WHERE r.${t.parent} = $1 AND r.day >= s.start AND r.day < ${spanEnd(span, 's.start')}) AS checksum,
            ARRAY(SELECT DISTINCT hashtextextended(c.customer, 0)::text FROM ${t.customers} c
                   WHERE c.${t.parent} = $1 AND c.hour >= s.start AND c.hour < ${spanEnd(span, 's.start')}) AS hashes
       FROM unnest($2::timestamptz[]) AS s(start)`,
    [parentId, starts],
  )) as { start: Date; checksum: string; hashes: string[] }[];
  const folded = rows.map((r) => {
    const union = new CustomerUnion();
    for (const h of r.hashes) union.addHash(h);
    return { start: r.start, checksum: r.checksum, customers: union.count(), union };
  });
  await query(
    `INSERT INTO ${t.sketches} AS s (${t.parent}, span, start, checksum, customers, sketch)
     SELECT $1, $2, d.start, d.checksum, d.customers, d.sketch
       FROM unnest($3::timestamptz[], $4::bigint[], $5::int[], $6::bytea[]) AS d(start, checksum, customers, sketch)
      ORDER BY d.start
     ON CONFLICT (${t.parent}, span, start) DO UPDATE SET checksum = EXCLUDED.checksum, customers = EXCLUDED.customers, sketch = EXCLUDED.sketch`,
    [parentId, span, folded.map((f) => f.start), folded.map((f) => f.checksum), folded.map((f) => f.customers), folded.map((f) => f.union.toSketch())],
  );
  return folded.map(({ start, customers, union }) => ({ start, customers, union }));
}
