import type { MigrationInterface, QueryRunner } from 'typeorm';
import {
  FORGET_MESSAGES_FUNCTION,
  histogram,
  HISTOGRAM_BOUNDS_MS,
  MESSAGES_FUNCTION,
  source,
  SUMS,
  triggerFunction,
  TRIGGER,
  WORKFLOW,
  type Rollup,
} from './1764288000000-ExecutionRollups.js';

/**
 * Metrics over long periods without reading every hour (docs/DECISIONS.md, "Execution metrics"
 * and its sketches), and cheaper rollup triggers:
 *
 * - `customer_checksum` on the rollup rows: the sum over their executions of a 31-bit hash of the
 *   customer (`hashtextextended(customer, 0) & (2^31 - 1)`), kept by the same upsert as the counts.
 * - `workflow_execution_days` / `trigger_execution_days`: the hourly rollups summed per UTC day
 *   (same columns, `day` for `hour`), kept in the same statements as the hour rows (one more
 *   upsert in the trigger's statement, as a data-modifying CTE), so that the whole days of a
 *   period are read as one row per day and channel instead of 24.
 * - `workflow_customer_sketches` / `trigger_customer_sketches`: per parent and UTC day, and per
 *   parent and UTC month, the span's distinct customers as a sketch (the exact hashes up to 2,048,
 *   a HyperLogLog of 16,384 registers beyond: src/execution-metrics/customer-sketch.ts), their
 *   count, and the checksum they were folded at. A sketch is valid while its checksum equals the
 *   span's (its day rows' sum); metrics fold stale or missing spans anew from the hourly customer
 *   sets (src/execution-metrics/customer-days.ts), which stay the exact truth. The backfill below
 *   folds with a frozen copy of that code as it was when this migration was written.
 *   The write path never touches these sketches.
 * - The executions' trigger functions: an insert is one statement (hour rows, day rows and customer
 *   sets as data-modifying CTEs over the rows grouped once; before: two statements); an update only
 *   runs the customer-set statements when a row's parent, time or customer changed (before: always
 *   two more statements, each joining the transition tables). The messages trigger
 *   stops at one check on updates that move no message (the engine's `consumed_at` updates, once
 *   per run commit). Every function returns after one check for a statement that wrote no row
 *   (the engine's run commit fires the messages and trigger-execution triggers whether or not it
 *   sent a message or finished the firing).
 */
const CHECKSUM = `COALESCE(sum(sign * (hashtextextended(customer, 0) & 2147483647)) FILTER (WHERE customer IS NOT NULL), 0)::bigint`;
const HISTOGRAM_CELLS = HISTOGRAM_BOUNDS_MS.length + 1;
const COUNTED = [...SUMS, 'customer_checksum'];

/**
 * The histograms' sum as one expression, which PostgreSQL inlines into the calling statement (the
 * previous body, an unnest ... array_agg subquery, ran as a function call per row).
 */
const HISTOGRAM_ADD_INLINE = `
  CREATE OR REPLACE FUNCTION rollup_histogram_add(a int[], b int[]) RETURNS int[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT ARRAY[${Array.from({ length: HISTOGRAM_BOUNDS_MS.length + 1 }, (_, i) => `COALESCE(a[${i + 1}], 0) + COALESCE(b[${i + 1}], 0)`).join(', ')}]
  $$`;
const HISTOGRAM_ADD_PREVIOUS = `
  CREATE OR REPLACE FUNCTION rollup_histogram_add(a int[], b int[]) RETURNS int[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_agg(COALESCE(x, 0) + COALESCE(y, 0) ORDER BY i) FROM unnest(a, b) WITH ORDINALITY AS u(x, y, i)
  $$`;

interface Grain {
  /** date_trunc unit, rollup table and its time column. */
  unit: 'hour' | 'day';
  table: string;
  column: 'hour' | 'day';
}

const grains = (r: Rollup): Grain[] => [
  { unit: 'hour', table: r.hours, column: 'hour' },
  { unit: 'day', table: r.hours.replace('_hours', '_days'), column: 'day' },
];

function grouped(r: Rollup, g: Grain): string {
  return `
    SELECT parent AS ${r.parent}, organization_id${r.extra}, date_trunc('${g.unit}', at, 'UTC') AS ${g.column}, COALESCE(channel, 'unknown') AS channel,
           sum(sign)::int AS executions,
           COALESCE(sum(sign) FILTER (WHERE status = 'success'), 0)::int AS successful,
           COALESCE(sum(sign) FILTER (WHERE status = 'failed'), 0)::int AS failed,
           COALESCE(sum(sign * duration_ms::bigint) FILTER (WHERE status <> 'running'), 0)::bigint AS duration_sum,
           ${histogram()} AS duration_histogram,
           ${CHECKSUM} AS customer_checksum
      FROM d GROUP BY parent, organization_id${r.extra}, date_trunc('${g.unit}', at, 'UTC'), COALESCE(channel, 'unknown')`;
}

/** The columns that place a row in a customer set. */
function customerKey(r: Rollup, row: string): string {
  return r.parent === 'workflow_id'
    ? `(${row}.workflow_id, ${row}.started_at, ${row}.customer_ref)`
    : `(${row}.trigger_id, ${row}.triggered_at, ${row}.input->>'customer_id')`;
}

/** The hour and day rows' counts changed by the signed rows `d`, in one statement. */
/**
 * The hour and day rows' counts changed by the signed rows `d`, in one statement; `last`, a
 * statement over `d` run as that statement's final part (the insert's customer sets).
 */
function counts(r: Rollup, src: string, op: 'INSERT' | 'UPDATE' | 'DELETE', last?: string): string {
  const [hour, day] = grains(r);
  const write = (g: Grain, from: string) => {
    const cols = `${r.parent}, organization_id${r.extra}, ${g.column}, channel, ${COUNTED.join(', ')}, duration_histogram`;
    return op === 'DELETE'
      ? // Decrement only: the parent may be going away in the same cascade.
        `UPDATE ${g.table} h SET ${COUNTED.map((c) => `${c} = h.${c} + g.${c}`).join(', ')},
                duration_histogram = rollup_histogram_add(h.duration_histogram, g.duration_histogram)
           FROM ${from} g WHERE h.${r.parent} = g.${r.parent} AND h.${g.column} = g.${g.column} AND h.channel = g.channel`
      : // In key order, so that concurrent statements lock shared rows in the same order (hours, then days).
        `INSERT INTO ${g.table} AS h (${cols})
         SELECT ${cols} FROM ${from}
          WHERE executions <> 0 OR successful <> 0 OR failed <> 0 OR duration_sum <> 0 OR customer_checksum <> 0
             OR duration_histogram <> ARRAY_FILL(0, ARRAY[${HISTOGRAM_CELLS}])
          ORDER BY ${r.parent}, ${g.column}, channel
         ON CONFLICT (${r.parent}, ${g.column}, channel) DO UPDATE
            SET ${COUNTED.map((c) => `${c} = h.${c} + EXCLUDED.${c}`).join(', ')},
                duration_histogram = rollup_histogram_add(h.duration_histogram, EXCLUDED.duration_histogram)`;
  };
  const head = `WITH d AS MATERIALIZED (${src}), gh AS (${grouped(r, hour)}), gd AS (${grouped(r, day)}), hours AS (${write(hour, 'gh')})`;
  return last ? `${head}, days AS (${write(day, 'gd')})
    ${last};` : `${head}
    ${write(day, 'gd')};`;
}

function apply(r: Rollup, op: 'INSERT' | 'UPDATE' | 'DELETE'): string {
  const src = source(r, op);
  const customerDelta = `WITH d AS (${src})
    SELECT parent, date_trunc('hour', at, 'UTC') AS hour, customer, sum(sign)::int AS n FROM d WHERE customer IS NOT NULL
     GROUP BY parent, date_trunc('hour', at, 'UTC'), customer HAVING sum(sign) <> 0`;
  const customers =
    op === 'DELETE'
      ? `UPDATE ${r.customers} c SET executions = c.executions + g.n FROM (${customerDelta}) g
          WHERE c.${r.parent} = g.parent AND c.hour = g.hour AND c.customer = g.customer;`
      : `INSERT INTO ${r.customers} AS c (${r.parent}, hour, customer, executions)
         SELECT parent, hour, customer, n FROM (${customerDelta}) g ORDER BY parent, hour, customer
         ON CONFLICT (${r.parent}, hour, customer) DO UPDATE SET executions = c.executions + EXCLUDED.executions;`;
  // A set holds the customers with at least one execution in the hour.
  const prune = `DELETE FROM ${r.customers} WHERE executions <= 0 AND (${r.parent}, hour, customer) IN (SELECT parent, hour, customer FROM (${customerDelta}) g);`;
  if (op === 'INSERT') {
    // One statement: counts, then the customer sets from the same rows.
    return counts(
      r,
      src,
      op,
      `INSERT INTO ${r.customers} AS c (${r.parent}, hour, customer, executions)
       SELECT parent, date_trunc('hour', at, 'UTC'), customer, count(*)::int FROM d WHERE customer IS NOT NULL
        GROUP BY parent, date_trunc('hour', at, 'UTC'), customer ORDER BY 1, 2, 3
       ON CONFLICT (${r.parent}, hour, customer) DO UPDATE SET executions = c.executions + EXCLUDED.executions`,
    );
  }
  if (op === 'DELETE') return `${counts(r, src, op)}\n${customers}\n${prune}`;
  // The customer sets only when a row's parent, time or customer changed (a finishing run changes none).
  return `
    ${counts(r, src, op)}
    IF EXISTS (SELECT 1 FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE ${customerKey(r, 'o')} IS DISTINCT FROM ${customerKey(r, 'n')}) THEN
      ${customers}
      ${prune}
    END IF;`;
}

const EMPTY = (rows: string) => `IF NOT EXISTS (SELECT 1 FROM ${rows}) THEN RETURN NULL; END IF;`;

function maintainFunction(r: Rollup): string {
  return `
    CREATE OR REPLACE FUNCTION ${r.hours}_maintain() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      -- A statement that wrote no row (a run commit's update of a trigger execution that is not
      -- finished, say) stops at one check.
      IF TG_OP = 'INSERT' THEN
        ${EMPTY('new_rows')}
        ${apply(r, 'INSERT')}
      ELSIF TG_OP = 'UPDATE' THEN
        ${EMPTY('new_rows')}
        ${apply(r, 'UPDATE')}
      ELSE
        ${EMPTY('old_rows')}
        ${apply(r, 'DELETE')}
      END IF;
      RETURN NULL;
    END
    $fn$`;
}

/** Message counts of the workflow rollups, in the hour and channel of the execution each message belongs to. */
function messageSource(op: 'INSERT' | 'UPDATE' | 'DELETE'): string {
  const rows =
    op === 'INSERT'
      ? `SELECT 1 AS sign, execution_id, direction FROM new_rows WHERE execution_id IS NOT NULL`
      : op === 'DELETE'
        ? `SELECT -1 AS sign, execution_id, direction FROM old_rows WHERE execution_id IS NOT NULL`
        : `SELECT -1 AS sign, o.execution_id, o.direction FROM old_rows o JOIN new_rows n ON n.id = o.id
            WHERE o.execution_id IS NOT NULL AND (o.execution_id, o.direction) IS DISTINCT FROM (n.execution_id, n.direction)
           UNION ALL
           SELECT 1 AS sign, n.execution_id, n.direction FROM new_rows n JOIN old_rows o ON o.id = n.id
            WHERE n.execution_id IS NOT NULL AND (o.execution_id, o.direction) IS DISTINCT FROM (n.execution_id, n.direction)`;
  return `
    SELECT e.workflow_id, e.organization_id, date_trunc('hour', e.started_at, 'UTC') AS at, COALESCE(e.channel, 'unknown') AS channel,
           COALESCE(sum(m.sign) FILTER (WHERE m.direction = 'outbound'), 0)::int AS sent,
           COALESCE(sum(m.sign) FILTER (WHERE m.direction = 'inbound'), 0)::int AS received
      FROM (${rows}) m
      JOIN workflow_executions e ON e.id = ANY (ARRAY[m.execution_id])
     GROUP BY e.workflow_id, e.organization_id, date_trunc('hour', e.started_at, 'UTC'), COALESCE(e.channel, 'unknown')
    HAVING COALESCE(sum(m.sign) FILTER (WHERE m.direction = 'outbound'), 0) <> 0 OR COALESCE(sum(m.sign) FILTER (WHERE m.direction = 'inbound'), 0) <> 0`;
}

function messageApply(op: 'INSERT' | 'UPDATE' | 'DELETE'): string {
  const write = (table: string, column: string, from: string) =>
    op === 'DELETE'
      ? `UPDATE ${table} h SET messages_sent = h.messages_sent + g.sent, messages_received = h.messages_received + g.received
           FROM ${from} g WHERE h.workflow_id = g.workflow_id AND h.${column} = g.at AND h.channel = g.channel`
      : `INSERT INTO ${table} AS h (workflow_id, organization_id, ${column}, channel, messages_sent, messages_received)
         SELECT workflow_id, organization_id, at, channel, sent, received FROM ${from} g ORDER BY workflow_id, at, channel
         ON CONFLICT (workflow_id, ${column}, channel) DO UPDATE
            SET messages_sent = h.messages_sent + EXCLUDED.messages_sent, messages_received = h.messages_received + EXCLUDED.messages_received`;
  const gd = `SELECT workflow_id, organization_id, date_trunc('day', at, 'UTC') AS at, channel, sum(sent)::int AS sent, sum(received)::int AS received
                FROM gh GROUP BY workflow_id, organization_id, date_trunc('day', at, 'UTC'), channel`;
  return `WITH gh AS (${messageSource(op)}), gd AS (${gd}),
    hours AS (${write('workflow_execution_hours', 'hour', 'gh')})
    ${write('workflow_execution_days', 'day', 'gd')};`;
}

/** As before, with the day rows; an update that moves no message between executions or directions stops at one check. */
const MESSAGES_FUNCTION_NEW = `
  CREATE OR REPLACE FUNCTION workflow_execution_hours_messages() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      ${EMPTY('new_rows')}
      ${messageApply('INSERT')}
    ELSIF TG_OP = 'UPDATE' THEN
      IF EXISTS (SELECT 1 FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE (o.execution_id, o.direction) IS DISTINCT FROM (n.execution_id, n.direction)) THEN
        ${messageApply('UPDATE')}
      END IF;
    ELSE
      ${EMPTY('old_rows')}
      ${messageApply('DELETE')}
    END IF;
    RETURN NULL;
  END
  $fn$`;

/** As before (a deleted execution's messages leave its counts first), for the hour and the day row. */
const FORGET_MESSAGES_FUNCTION_NEW = `
  CREATE OR REPLACE FUNCTION workflow_execution_hours_forget_messages() RETURNS trigger LANGUAGE plpgsql AS $fn$
  DECLARE
    sent int;
    received int;
  BEGIN
    SELECT count(*) FILTER (WHERE direction = 'outbound')::int, count(*) FILTER (WHERE direction = 'inbound')::int INTO sent, received
      FROM messages WHERE execution_id = OLD.id;
    IF sent > 0 OR received > 0 THEN
      UPDATE workflow_execution_hours h SET messages_sent = h.messages_sent - sent, messages_received = h.messages_received - received
       WHERE h.workflow_id = OLD.workflow_id AND h.hour = date_trunc('hour', OLD.started_at, 'UTC') AND h.channel = COALESCE(OLD.channel, 'unknown');
      UPDATE workflow_execution_days h SET messages_sent = h.messages_sent - sent, messages_received = h.messages_received - received
       WHERE h.workflow_id = OLD.workflow_id AND h.day = date_trunc('day', OLD.started_at, 'UTC') AND h.channel = COALESCE(OLD.channel, 'unknown');
    END IF;
    RETURN NULL;
  END
  $fn$`;

/*
 * The backfill's fold, frozen as this migration wrote it (the live code is
 * src/execution-metrics/customer-days.ts and customer-sketch.ts; a migration never changes with it).
 */

/** The tables of one kind of rollup: the day rows (counts, checksums), the hourly customer sets and the sketches. */
interface SketchTables {
  parent: 'workflow_id' | 'trigger_id';
  dayRows: string;
  customers: string;
  sketches: string;
}

const WORKFLOW_SKETCHES: SketchTables = {
  parent: 'workflow_id',
  dayRows: 'workflow_execution_days',
  customers: 'workflow_customer_hours',
  sketches: 'workflow_customer_sketches',
};

const TRIGGER_SKETCHES: SketchTables = {
  parent: 'trigger_id',
  dayRows: 'trigger_execution_days',
  customers: 'trigger_customer_hours',
  sketches: 'trigger_customer_sketches',
};

type Span = 'day' | 'month';
type Query = (sql: string, values: unknown[]) => Promise<Record<string, unknown>[]>;

/** Sketch format: tag 1 and the sorted distinct unsigned 64-bit hashes (up to 2,048), else tag 2 and 2^14 HyperLogLog registers. */
const PRECISION = 14;
const REGISTERS = 1 << PRECISION;
const SPARSE_MAX = REGISTERS / 8;
const Q = 64 - PRECISION;

/** The distinct customers of a span's hashes (PostgreSQL bigint as text) and their sketch. */
function sketchOf(hashes: string[]): { customers: number; sketch: Buffer } {
  const exact = new Set(hashes.map((h) => BigInt.asUintN(64, BigInt(h))));
  if (exact.size <= SPARSE_MAX) {
    const sorted = [...exact].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const out = Buffer.alloc(1 + 8 * sorted.length);
    out[0] = 1;
    sorted.forEach((h, i) => out.writeBigUInt64BE(h, 1 + 8 * i));
    return { customers: exact.size, sketch: out };
  }
  const out = Buffer.alloc(1 + REGISTERS);
  out[0] = 2;
  for (const h of exact) {
    const hi = Number(h >> 32n);
    const lo = Number(h & 0xffffffffn);
    const index = hi >>> (32 - PRECISION);
    const restHi = hi & ((1 << (32 - PRECISION)) - 1);
    const rank = restHi !== 0 ? Math.clz32(restHi) - PRECISION + 1 : lo !== 0 ? 32 - PRECISION + Math.clz32(lo) + 1 : Q + 1;
    if (rank > out[1 + index]) out[1 + index] = rank;
  }
  return { customers: exact.size, sketch: out };
}

/** `[start, end)` of a span starting at `start` (a UTC midnight, or the first of a UTC month), in SQL. */
const spanEnd = (span: Span, start: string) =>
  span === 'day' ? `${start} + interval '24 hours'` : `(${start} AT TIME ZONE 'UTC' + interval '1 month') AT TIME ZONE 'UTC'`;

/** Folds and stores the sketch of each span starting at `starts` of one parent, with the span's checksum read in the same statement. */
async function foldSpans(query: Query, t: SketchTables, parentId: string, span: Span, starts: Date[]): Promise<void> {
  if (starts.length === 0) return;
  const rows = (await query(
    `SELECT s.start,
            (SELECT COALESCE(sum(r.customer_checksum), 0)::bigint::text FROM ${t.dayRows} r
              WHERE r.${t.parent} = $1 AND r.day >= s.start AND r.day < ${spanEnd(span, 's.start')}) AS checksum,
            ARRAY(SELECT DISTINCT hashtextextended(c.customer, 0)::text FROM ${t.customers} c
                   WHERE c.${t.parent} = $1 AND c.hour >= s.start AND c.hour < ${spanEnd(span, 's.start')}) AS hashes
       FROM unnest($2::timestamptz[]) AS s(start)`,
    [parentId, starts],
  )) as { start: Date; checksum: string; hashes: string[] }[];
  const folded = rows.map((r) => ({ start: r.start, checksum: r.checksum, ...sketchOf(r.hashes) }));
  await query(
    `INSERT INTO ${t.sketches} AS s (${t.parent}, span, start, checksum, customers, sketch)
     SELECT $1, $2, d.start, d.checksum, d.customers, d.sketch
       FROM unnest($3::timestamptz[], $4::bigint[], $5::int[], $6::bytea[]) AS d(start, checksum, customers, sketch)
      ORDER BY d.start
     ON CONFLICT (${t.parent}, span, start) DO UPDATE SET checksum = EXCLUDED.checksum, customers = EXCLUDED.customers, sketch = EXCLUDED.sketch`,
    [parentId, span, folded.map((f) => f.start), folded.map((f) => f.checksum), folded.map((f) => f.customers), folded.map((f) => f.sketch)],
  );
}

/** Folds every day and month that has customers, a month of days per statement. */
async function backfillSketches(q: QueryRunner, t: SketchTables): Promise<void> {
  const groups: { parent: string; days: Date[]; months: Date[] }[] = await q.query(
    `SELECT ${t.parent} AS parent, array_agg(DISTINCT date_trunc('day', hour, 'UTC')) AS days, array_agg(DISTINCT date_trunc('month', hour, 'UTC')) AS months
       FROM ${t.customers} GROUP BY 1`,
  );
  const query = (sql: string, values: unknown[]) => q.query(sql, values);
  for (const g of groups) {
    for (let i = 0; i < g.days.length; i += 31) await foldSpans(query, t, g.parent, 'day', g.days.slice(i, i + 31));
    for (const month of g.months) await foldSpans(query, t, g.parent, 'month', [month]);
  }
}

export class MetricsCustomerSketches1767300000000 implements MigrationInterface {
  name = 'MetricsCustomerSketches1767300000000';

  async up(q: QueryRunner): Promise<void> {
    // No write between the backfills and the triggers that keep what they filled.
    await q.query(`LOCK TABLE workflow_executions, trigger_executions, messages IN SHARE MODE`);
    await q.query(HISTOGRAM_ADD_INLINE);
    await q.query(`CREATE AGGREGATE rollup_histogram_sum(int[]) (SFUNC = rollup_histogram_add, STYPE = int[])`);
    for (const r of [WORKFLOW, TRIGGER]) {
      await q.query(`ALTER TABLE ${r.hours} ADD COLUMN customer_checksum bigint NOT NULL DEFAULT 0`);
      const [hour, day] = grains(r);
      await q.query(`
        UPDATE ${r.hours} h SET customer_checksum = g.customer_checksum
          FROM (WITH d AS (${source(r, 'INSERT').replace('new_rows', r.table)}) ${grouped(r, hour)}) g
         WHERE h.${r.parent} = g.${r.parent} AND h.hour = g.hour AND h.channel = g.channel AND g.customer_checksum <> 0`);
      await q.query(`CREATE TABLE ${day.table} (LIKE ${r.hours} INCLUDING DEFAULTS)`);
      await q.query(`ALTER TABLE ${day.table} RENAME COLUMN hour TO day`);
      await q.query(`ALTER TABLE ${day.table} ADD PRIMARY KEY (${r.parent}, day, channel),
        ADD FOREIGN KEY (${r.parent}) REFERENCES ${r.parent === 'workflow_id' ? 'workflows' : 'triggers'}(id) ON DELETE CASCADE`);
      const sums = [...COUNTED, ...(r === WORKFLOW ? ['messages_sent', 'messages_received'] : [])];
      await q.query(`
        INSERT INTO ${day.table} (${r.parent}, organization_id${r.extra}, day, channel, ${sums.join(', ')}, duration_histogram)
        SELECT ${r.parent}, organization_id${r.extra}, date_trunc('day', hour, 'UTC'), channel, ${sums.map((c) => `sum(${c})`).join(', ')},
               rollup_histogram_sum(duration_histogram)
          FROM ${r.hours} GROUP BY ${r.parent}, organization_id${r.extra}, date_trunc('day', hour, 'UTC'), channel`);
      await q.query(maintainFunction(r));
    }
    await q.query(MESSAGES_FUNCTION_NEW);
    await q.query(FORGET_MESSAGES_FUNCTION_NEW);
    for (const t of [WORKFLOW_SKETCHES, TRIGGER_SKETCHES]) {
      await q.query(`
        CREATE TABLE ${t.sketches} (
          ${t.parent} uuid NOT NULL REFERENCES ${t.parent === 'workflow_id' ? 'workflows' : 'triggers'}(id) ON DELETE CASCADE,
          span varchar(5) NOT NULL CHECK (span IN ('day', 'month')),
          -- The UTC midnight, or first of the UTC month, the span starts at.
          start timestamptz NOT NULL,
          -- The span's customer checksum when folded: valid while equal to the sum of its day rows'.
          checksum bigint NOT NULL,
          customers int NOT NULL,
          sketch bytea NOT NULL,
          PRIMARY KEY (${t.parent}, span, start)
        )`);
      await backfillSketches(q, t);
    }
    for (const table of ['workflow_execution_hours', 'trigger_execution_hours', 'workflow_execution_days', 'trigger_execution_days']) await q.query(`ANALYZE ${table}`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['trigger_customer_sketches', 'workflow_customer_sketches']) await q.query(`DROP TABLE IF EXISTS ${table}`);
    await q.query(MESSAGES_FUNCTION.replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION'));
    await q.query(FORGET_MESSAGES_FUNCTION.replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION'));
    for (const r of [WORKFLOW, TRIGGER]) {
      await q.query(triggerFunction(r).replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION'));
      await q.query(`DROP TABLE IF EXISTS ${grains(r)[1].table}`);
      await q.query(`ALTER TABLE ${r.hours} DROP COLUMN customer_checksum`);
    }
    await q.query(`DROP AGGREGATE IF EXISTS rollup_histogram_sum(int[])`);
    await q.query(HISTOGRAM_ADD_PREVIOUS);
  }
}
