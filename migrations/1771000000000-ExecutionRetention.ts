import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Execution data retention, removed by partition drops.
 * - `organizations.execution_retention_ms`: an organization's override of EXECUTION_RETENTION (NULL:
 *   the service's setting; 0: keep everything; otherwise milliseconds).
 * - `uuid_v7_floor(at)`: the smallest UUIDv7 of a millisecond, so that a time range is a key range.
 * - `retention_partitions_ensure(parent, from, to)`: creates the monthly partitions `<parent>_pYYYYMM`
 *   of a table range-partitioned on its time-ordered id, for every month from `from` to `to` that has
 *   none (the worker's retention loop keeps two months ahead).
 * - `trigger_executions` becomes range-partitioned on `id` (UUIDv7: the key carries the insert time,
 *   so the primary key holds the partition key as it is), one partition a month, plus a DEFAULT
 *   partition for ids outside every month (random UUIDs of rows written before UuidV7Keys, or months
 *   the loop has not created). The rows are copied into the new table before its triggers exist, so
 *   the copy logs nothing to the rollups; names of the table, its key, foreign keys, indexes and
 *   triggers stay as they were (the engine's named statements need no change).
 */
export class ExecutionRetention1771000000000 implements MigrationInterface {
  name = 'ExecutionRetention1771000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE organizations ADD COLUMN execution_retention_ms bigint NULL CHECK (execution_retention_ms >= 0)`);
    await q.query(`
      CREATE FUNCTION uuid_v7_floor(at timestamptz) RETURNS uuid LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-0000-0000-000000000000')::uuid
          FROM (SELECT lpad(to_hex(GREATEST(0, floor(EXTRACT(EPOCH FROM at) * 1000))::bigint), 12, '0') AS h) x
      $$`);
    await q.query(`
      CREATE FUNCTION retention_partitions_ensure(parent text, first_month timestamptz, last_month timestamptz) RETURNS int
      LANGUAGE plpgsql AS $$
      DECLARE
        m timestamptz := date_trunc('month', first_month, 'UTC');
        next_m timestamptz;
        partition_name text;
        made int := 0;
      BEGIN
        WHILE m <= last_month LOOP
          next_m := date_trunc('month', m + interval '32 days', 'UTC');
          partition_name := parent || '_p' || to_char(m AT TIME ZONE 'UTC', 'YYYYMM');
          IF to_regclass(partition_name) IS NULL THEN
            EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)', partition_name, parent, uuid_v7_floor(m), uuid_v7_floor(next_m));
            made := made + 1;
          END IF;
          m := next_m;
        END LOOP;
        RETURN made;
      END $$`);

    // trigger_executions: the old table steps aside under another name, the partitioned one takes its names.
    await q.query(`ALTER TABLE trigger_executions RENAME TO trigger_executions_unpartitioned`);
    await q.query(`ALTER TABLE trigger_executions_unpartitioned RENAME CONSTRAINT trigger_executions_pkey TO trigger_executions_unpartitioned_pkey`);
    for (const fk of ['organization_id', 'trigger_id', 'workflow_execution_id']) {
      await q.query(`ALTER TABLE trigger_executions_unpartitioned RENAME CONSTRAINT trigger_executions_${fk}_fkey TO trigger_executions_unpartitioned_${fk}_fkey`);
    }
    for (const index of TRIGGER_EXECUTION_INDEXES) await q.query(`ALTER INDEX ${index.name} RENAME TO ${index.name}_unpartitioned`);
    await q.query(`CREATE TABLE trigger_executions (LIKE trigger_executions_unpartitioned INCLUDING DEFAULTS INCLUDING STORAGE) PARTITION BY RANGE (id)`);
    await q.query(`ALTER TABLE trigger_executions ADD CONSTRAINT trigger_executions_pkey PRIMARY KEY (id)`);
    // Months of the rows already there (at most two years back: older or random ids go to the default
    // partition, trimmed like the others), to two months ahead.
    await q.query(
      `SELECT retention_partitions_ensure('trigger_executions',
                GREATEST(now() - interval '25 months', LEAST(now(), COALESCE((SELECT min(${UUID_TIME('id')}) FROM trigger_executions_unpartitioned WHERE ${IS_V7('id')}), now()))),
                now() + interval '2 months')`,
    );
    await q.query(`CREATE TABLE trigger_executions_default PARTITION OF trigger_executions DEFAULT`);
    await q.query(`INSERT INTO trigger_executions SELECT * FROM trigger_executions_unpartitioned`);
    await q.query(`DROP TABLE trigger_executions_unpartitioned`);
    await addTriggerExecutionDependents(q);
    await analyzeIfFilled(q, 'trigger_executions');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE trigger_executions RENAME TO trigger_executions_partitioned`);
    await q.query(`ALTER TABLE trigger_executions_partitioned RENAME CONSTRAINT trigger_executions_pkey TO trigger_executions_partitioned_pkey`);
    for (const fk of ['organization_id', 'trigger_id', 'workflow_execution_id']) {
      await q.query(`ALTER TABLE trigger_executions_partitioned DROP CONSTRAINT trigger_executions_${fk}_fkey`);
    }
    for (const index of TRIGGER_EXECUTION_INDEXES) await q.query(`DROP INDEX ${index.name}`);
    await q.query(`CREATE TABLE trigger_executions (LIKE trigger_executions_partitioned INCLUDING DEFAULTS INCLUDING STORAGE)`);
    await q.query(`ALTER TABLE trigger_executions ADD CONSTRAINT trigger_executions_pkey PRIMARY KEY (id)`);
    await q.query(`INSERT INTO trigger_executions SELECT * FROM trigger_executions_partitioned`);
    await q.query(`DROP TABLE trigger_executions_partitioned`);
    await addTriggerExecutionDependents(q);
    await q.query(`DROP FUNCTION retention_partitions_ensure(text, timestamptz, timestamptz)`);
    await q.query(`DROP FUNCTION uuid_v7_floor(timestamptz)`);
    await q.query(`ALTER TABLE organizations DROP COLUMN execution_retention_ms`);
  }
}

/** The time a UUIDv7 carries (its first 48 bits, milliseconds since the epoch). */
const UUID_TIME = (column: string) => `to_timestamp((('x' || substr(replace(${column}::text, '-', ''), 1, 12))::bit(48)::bigint) / 1000.0)`;
const IS_V7 = (column: string) => `substr(${column}::text, 15, 1) = '7'`;

/** The indexes of trigger_executions as the earlier migrations left them (primary key aside). */
const TRIGGER_EXECUTION_INDEXES = [
  { name: 'idx_trigger_executions_trigger_triggered', columns: 'trigger_id, triggered_at, id' },
  { name: 'idx_trigger_executions_workflow_execution', columns: 'workflow_execution_id' },
  { name: 'idx_trigger_executions_trigger_status_triggered', columns: 'trigger_id, status, triggered_at, id' },
];

/** Foreign keys, indexes and rollup triggers of trigger_executions, under the names they had. */
async function addTriggerExecutionDependents(q: QueryRunner): Promise<void> {
  await q.query(`ALTER TABLE trigger_executions ADD CONSTRAINT trigger_executions_organization_id_fkey FOREIGN KEY (organization_id) REFERENCES organizations(id) ON DELETE CASCADE`);
  await q.query(`ALTER TABLE trigger_executions ADD CONSTRAINT trigger_executions_trigger_id_fkey FOREIGN KEY (trigger_id) REFERENCES triggers(id) ON DELETE CASCADE`);
  await q.query(
    `ALTER TABLE trigger_executions ADD CONSTRAINT trigger_executions_workflow_execution_id_fkey FOREIGN KEY (workflow_execution_id) REFERENCES workflow_executions(id) ON DELETE SET NULL`,
  );
  for (const index of TRIGGER_EXECUTION_INDEXES) await q.query(`CREATE INDEX ${index.name} ON trigger_executions (${index.columns})`);
  for (const [event, transition] of [
    ['insert', 'NEW TABLE AS new_rows'],
    ['update', 'OLD TABLE AS old_rows NEW TABLE AS new_rows'],
    ['delete', 'OLD TABLE AS old_rows'],
  ]) {
    await q.query(
      `CREATE TRIGGER trigger_executions_rollup_${event} AFTER ${event.toUpperCase()} ON trigger_executions REFERENCING ${transition} FOR EACH STATEMENT EXECUTE FUNCTION trigger_execution_changes_log()`,
    );
  }
}

/**
 * Statistics for the copied rows; none for a table that holds none. Analyzed empty, a table is planned as
 * empty until autovacuum's next analyze (a minute or more): the statements' cached generic plans scan it whole
 * and keep doing so as it fills. Never analyzed, the planner assumes some pages and takes the indexes.
 */
async function analyzeIfFilled(q: QueryRunner, table: string): Promise<void> {
  const [{ filled }] = await q.query(`SELECT EXISTS (SELECT 1 FROM ${table}) AS filled`);
  if (filled) await q.query(`ANALYZE ${table}`);
}
