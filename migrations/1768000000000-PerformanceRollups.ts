import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Rollups of the `/performance` endpoint, so that a year of it reads a few hundred rows per day
 * instead of every execution of the period (docs/DECISIONS.md "Analytics", "Percentiles within a
 * stated bound"):
 *
 * - `workflow_duration_days` per workflow, UTC day its executions *started* and duration bucket:
 *   how many finished executions (status <> 'running') with a recorded duration fall in it. The
 *   buckets (`duration_bucket`) are exact milliseconds below 100 ms and logarithmic above, each
 *   bucket `[100·1.02^k, 100·1.02^(k+1))` ms; a bucket stands for `duration_bucket_value`, the
 *   harmonic mean of its bounds, which is within 0.9901 % (= 0.02 / 2.02) of any duration in it.
 *   Percentiles over these values (percentile_cont's interpolation included) are therefore within
 *   0.9901 % of the exact percentiles of the durations themselves.
 * - `workflow_duration_months`: the same per UTC month (the sum of its day rows), so that a year
 *   reads ~12 months of buckets plus the days outside whole months instead of 365 days of them.
 * - `workflow_error_days` per workflow, UTC day and error code (`error->>'code'`, `UNKNOWN` when
 *   none) of failed executions: how many.
 *
 * Kept by statement-level triggers of their own on workflow_executions with transition tables
 * (the rollup triggers of earlier migrations are not touched): once per statement for all its
 * rows. Only finished rows count, so the firing statement (running executions) stops at one check,
 * and so does an update that changes none of the counted columns. Deletions only decrement (a
 * cascade from the workflow may already have removed the rows). Backfilled under a share lock so
 * that no write slips between the backfill and the triggers.
 */
export const EXACT_BELOW_MS = 100;
export const BUCKET_RATIO = 1.02;
/**
 * Largest relative error of a bucket's value against any duration in the bucket: (r - 1) / (r + 1)
 * = 0.0099009…, stated rounded up to 0.9901 % (which also covers float8 rounding in the functions).
 */
export const DURATION_ERROR_BOUND = 0.009901;

const FUNCTIONS = [
  `CREATE FUNCTION duration_bucket(ms int) RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
     SELECT CASE WHEN ms < ${EXACT_BELOW_MS} THEN ms ELSE ${EXACT_BELOW_MS} + floor(ln(ms::float8 / ${EXACT_BELOW_MS}) / ln(${BUCKET_RATIO}::float8))::int END
   $$`,
  `CREATE FUNCTION duration_bucket_value(bucket int) RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
     SELECT CASE WHEN bucket < ${EXACT_BELOW_MS} THEN bucket::float8
                 ELSE ${EXACT_BELOW_MS} * power(${BUCKET_RATIO}::float8, bucket - ${EXACT_BELOW_MS}) * (2 * ${BUCKET_RATIO}::float8 / (1 + ${BUCKET_RATIO}::float8)) END
   $$`,
];

/** The counted columns of a row: a change of any of them moves the row between rollup rows. */
const KEY = (r: string) => `(${r}.workflow_id, ${r}.organization_id, ${r}.started_at, ${r}.status, ${r}.duration_ms, ${r}.error->>'code')`;
const COLUMNS = (r: string) => `${r}.workflow_id, ${r}.organization_id, ${r}.started_at, ${r}.status, ${r}.duration_ms, ${r}.error->>'code' AS code`;

/** Signed rows `d` of the finished executions a statement added (+1) or removed (-1). */
function source(op: 'INSERT' | 'UPDATE' | 'DELETE'): string {
  if (op === 'INSERT') return `SELECT 1 AS sign, ${COLUMNS('n')} FROM new_rows n WHERE n.status <> 'running'`;
  if (op === 'DELETE') return `SELECT -1 AS sign, ${COLUMNS('o')} FROM old_rows o WHERE o.status <> 'running'`;
  return `
    SELECT -1 AS sign, ${COLUMNS('o')} FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE o.status <> 'running' AND ${KEY('o')} IS DISTINCT FROM ${KEY('n')}
    UNION ALL
    SELECT 1 AS sign, ${COLUMNS('n')} FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE n.status <> 'running' AND ${KEY('o')} IS DISTINCT FROM ${KEY('n')}`;
}

const DURATIONS = `
  SELECT workflow_id, organization_id, date_trunc('day', started_at, 'UTC') AS day, duration_bucket(duration_ms) AS bucket, sum(sign)::int AS n
    FROM d WHERE duration_ms IS NOT NULL
   GROUP BY workflow_id, organization_id, date_trunc('day', started_at, 'UTC'), duration_bucket(duration_ms) HAVING sum(sign) <> 0`;

const ERRORS = `
  SELECT workflow_id, organization_id, date_trunc('day', started_at, 'UTC') AS day, COALESCE(code, 'UNKNOWN') AS code, sum(sign)::int AS n
    FROM d WHERE status = 'failed'
   GROUP BY workflow_id, organization_id, date_trunc('day', started_at, 'UTC'), COALESCE(code, 'UNKNOWN') HAVING sum(sign) <> 0`;

/** The day counts `g` summed per UTC month. */
const MONTHS = `
  SELECT workflow_id, organization_id, date_trunc('month', day, 'UTC') AS month, bucket, sum(n)::int AS n
    FROM g GROUP BY workflow_id, organization_id, date_trunc('month', day, 'UTC'), bucket HAVING sum(n) <> 0`;

/** One statement per event: the duration buckets per day, then per month, then the error codes, from the same rows. */
function apply(op: 'INSERT' | 'UPDATE' | 'DELETE'): string {
  if (op === 'DELETE') {
    // Decrement only: the workflow may be going away in the same cascade.
    return `WITH d AS MATERIALIZED (${source(op)}), g AS MATERIALIZED (${DURATIONS}),
      durations AS (
        UPDATE workflow_duration_days h SET executions = h.executions + g.n FROM g
         WHERE h.workflow_id = g.workflow_id AND h.day = g.day AND h.bucket = g.bucket
      ), months AS (
        UPDATE workflow_duration_months h SET executions = h.executions + m.n FROM (${MONTHS}) m
         WHERE h.workflow_id = m.workflow_id AND h.month = m.month AND h.bucket = m.bucket
      )
      UPDATE workflow_error_days h SET failed = h.failed + e.n FROM (${ERRORS}) e
       WHERE h.workflow_id = e.workflow_id AND h.day = e.day AND h.code = e.code;`;
  }
  // In key order, so that concurrent statements lock shared rows in the same order (days, months, codes).
  return `WITH d AS MATERIALIZED (${source(op)}), g AS MATERIALIZED (${DURATIONS}),
    durations AS (
      INSERT INTO workflow_duration_days AS h (workflow_id, day, bucket, organization_id, executions)
      SELECT workflow_id, day, bucket, organization_id, n FROM g ORDER BY workflow_id, day, bucket
      ON CONFLICT (workflow_id, day, bucket) DO UPDATE SET executions = h.executions + EXCLUDED.executions
    ), months AS (
      INSERT INTO workflow_duration_months AS h (workflow_id, month, bucket, organization_id, executions)
      SELECT workflow_id, month, bucket, organization_id, n FROM (${MONTHS}) m ORDER BY workflow_id, month, bucket
      ON CONFLICT (workflow_id, month, bucket) DO UPDATE SET executions = h.executions + EXCLUDED.executions
    )
    INSERT INTO workflow_error_days AS h (workflow_id, day, code, organization_id, failed)
    SELECT workflow_id, day, code, organization_id, n FROM (${ERRORS}) e ORDER BY workflow_id, day, code
    ON CONFLICT (workflow_id, day, code) DO UPDATE SET failed = h.failed + EXCLUDED.failed;`;
}

const MAINTAIN = `
  CREATE FUNCTION workflow_duration_days_maintain() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    -- A statement that writes no finished row (a firing, a wait) stops at one check.
    IF TG_OP = 'INSERT' THEN
      IF NOT EXISTS (SELECT 1 FROM new_rows WHERE status <> 'running') THEN RETURN NULL; END IF;
      ${apply('INSERT')}
    ELSIF TG_OP = 'UPDATE' THEN
      IF NOT EXISTS (SELECT 1 FROM old_rows WHERE status <> 'running') THEN
        -- Every row was running (a commit finishing runs, a wait): its finished rows now are new to the
        -- counts, as if inserted, and running ones count nowhere. No join of old and new rows needed.
        IF NOT EXISTS (SELECT 1 FROM new_rows WHERE status <> 'running') THEN RETURN NULL; END IF;
        ${apply('INSERT')}
      ELSE
        IF NOT EXISTS (SELECT 1 FROM old_rows o JOIN new_rows n ON n.id = o.id
                        WHERE (o.status <> 'running' OR n.status <> 'running') AND ${KEY('o')} IS DISTINCT FROM ${KEY('n')}) THEN
          RETURN NULL;
        END IF;
        ${apply('UPDATE')}
      END IF;
    ELSE
      IF NOT EXISTS (SELECT 1 FROM old_rows WHERE status <> 'running') THEN RETURN NULL; END IF;
      ${apply('DELETE')}
    END IF;
    RETURN NULL;
  END
  $fn$`;

/** Named "…rollup…" like the other rollup triggers (bench/rollup-write-cost.mjs measures those). */
export const PERFORMANCE_TRIGGERS = ['insert', 'update', 'delete'].map((op) => `workflow_executions_rollup_performance_${op}`);

export class PerformanceRollups1768000000000 implements MigrationInterface {
  name = 'PerformanceRollups1768000000000';

  async up(q: QueryRunner): Promise<void> {
    // No write between the backfill and the triggers that keep what it filled.
    await q.query(`LOCK TABLE workflow_executions IN SHARE MODE`);
    for (const f of FUNCTIONS) await q.query(f);
    await q.query(`
      CREATE TABLE workflow_duration_days (
        workflow_id uuid NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
        -- The UTC midnight of the day the executions started.
        day timestamptz NOT NULL,
        -- duration_bucket(duration_ms): exact ms below ${EXACT_BELOW_MS}, log-scale (ratio ${BUCKET_RATIO}) above.
        bucket int NOT NULL,
        organization_id uuid NOT NULL,
        executions int NOT NULL,
        PRIMARY KEY (workflow_id, day, bucket)
      )`);
    await q.query(`
      CREATE TABLE workflow_duration_months (
        workflow_id uuid NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
        -- The first instant of the UTC month: the sum of the month's day rows.
        month timestamptz NOT NULL,
        bucket int NOT NULL,
        organization_id uuid NOT NULL,
        executions int NOT NULL,
        PRIMARY KEY (workflow_id, month, bucket)
      )`);
    await q.query(`
      CREATE TABLE workflow_error_days (
        workflow_id uuid NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
        day timestamptz NOT NULL,
        code text NOT NULL,
        organization_id uuid NOT NULL,
        failed int NOT NULL,
        PRIMARY KEY (workflow_id, day, code)
      )`);
    const all = source('INSERT').replace('new_rows', 'workflow_executions');
    await q.query(`
      INSERT INTO workflow_duration_days (workflow_id, day, bucket, organization_id, executions)
      SELECT workflow_id, day, bucket, organization_id, n FROM (WITH d AS (${all}) ${DURATIONS}) g`);
    await q.query(`
      INSERT INTO workflow_duration_months (workflow_id, month, bucket, organization_id, executions)
      SELECT workflow_id, month, bucket, organization_id, n FROM (WITH g AS (SELECT workflow_id, organization_id, day, bucket, executions AS n FROM workflow_duration_days) ${MONTHS}) m`);
    await q.query(`
      INSERT INTO workflow_error_days (workflow_id, day, code, organization_id, failed)
      SELECT workflow_id, day, code, organization_id, n FROM (WITH d AS (${all}) ${ERRORS}) g`);
    await q.query(MAINTAIN);
    const [insert, update, del] = PERFORMANCE_TRIGGERS;
    await q.query(`CREATE TRIGGER ${insert} AFTER INSERT ON workflow_executions REFERENCING NEW TABLE AS new_rows
                   FOR EACH STATEMENT EXECUTE FUNCTION workflow_duration_days_maintain()`);
    await q.query(`CREATE TRIGGER ${update} AFTER UPDATE ON workflow_executions REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
                   FOR EACH STATEMENT EXECUTE FUNCTION workflow_duration_days_maintain()`);
    await q.query(`CREATE TRIGGER ${del} AFTER DELETE ON workflow_executions REFERENCING OLD TABLE AS old_rows
                   FOR EACH STATEMENT EXECUTE FUNCTION workflow_duration_days_maintain()`);
    for (const table of ['workflow_duration_days', 'workflow_duration_months', 'workflow_error_days']) await q.query(`ANALYZE ${table}`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of PERFORMANCE_TRIGGERS) await q.query(`DROP TRIGGER IF EXISTS ${t} ON workflow_executions`);
    await q.query(`DROP FUNCTION IF EXISTS workflow_duration_days_maintain()`);
    await q.query(`DROP TABLE IF EXISTS workflow_error_days`);
    await q.query(`DROP TABLE IF EXISTS workflow_duration_months`);
    await q.query(`DROP TABLE IF EXISTS workflow_duration_days`);
    await q.query(`DROP FUNCTION IF EXISTS duration_bucket_value(int)`);
    await q.query(`DROP FUNCTION IF EXISTS duration_bucket(int)`);
  }
}
