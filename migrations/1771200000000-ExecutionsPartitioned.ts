import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Executions, their steps and their answers removed by partition drops, as the firings already are
 * (migration ExecutionRetention).
 * - `workflow_executions` becomes range-partitioned on its UUIDv7 `id`, `execution_steps` and
 *   `execution_answers` on `execution_id`, with the same monthly bounds: a month of executions and the
 *   steps and answers of those executions sit in partitions of the same name suffix (`_pYYYYMM`,
 *   `_default`) and are dropped together. `uq_execution_steps_execution_node (execution_id, node_id)`
 *   holds the partition key and stays; the steps' primary key becomes `(id, execution_id)`.
 * - The unique index on `retry_of` cannot be kept (no partition key in it): one retry per execution is
 *   now `workflow_execution_retries (retry_of)`, claimed in the retry's statement.
 * - No foreign key points at `workflow_executions` any more (from steps, answers, firings, messages):
 *   detaching a month would have to prove that no row of those tables points into it, a scan under the
 *   parent's exclusive lock. What the keys did on a DELETE through the parent (steps and answers
 *   deleted, firings' and messages' links set to NULL) a statement-level trigger does, after logging
 *   what the rollups lose (as the two row triggers it replaces did); a trim or drop of a partition
 *   fires none of it.
 * The rows are copied into the new tables before their triggers exist (nothing is logged twice).
 */
export class ExecutionsPartitioned1771200000000 implements MigrationInterface {
  name = 'ExecutionsPartitioned1771200000000';

  async up(q: QueryRunner): Promise<void> {
    for (const [table, fk] of REFERENCES) await q.query(`ALTER TABLE ${table} DROP CONSTRAINT ${fk}`);
    await q.query(`DROP TRIGGER "A_workflow_executions_journey_forget_steps" ON workflow_executions`);
    await q.query(`DROP TRIGGER "A_workflow_executions_rollup_forget_messages" ON workflow_executions`);
    await q.query(`DROP INDEX uq_workflow_executions_retry_of`);
    await q.query(`CREATE TABLE workflow_execution_retries (retry_of uuid PRIMARY KEY, execution_id uuid NOT NULL)`);
    await q.query(`INSERT INTO workflow_execution_retries (retry_of, execution_id) SELECT retry_of, id FROM workflow_executions WHERE retry_of IS NOT NULL`);

    for (const t of TABLES) await partition(q, t.table, t.key, t.primaryKey);

    await q.query(`
      CREATE FUNCTION workflow_executions_forget_children() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan TO off AS $$
      BEGIN
        INSERT INTO execution_step_changes (sign, workflow_id, organization_id, day, node_id, type, status, duration_ms)
        SELECT -1, o.workflow_id, o.organization_id, date_trunc('day', o.started_at, 'UTC'), s.node_id, s.type, s.status, s.duration_ms
          FROM old_rows o JOIN execution_steps s ON s.execution_id = o.id;
        INSERT INTO message_changes (sign, direction, workflow_id, organization_id, started_at, execution_channel)
        SELECT -1, m.direction, o.workflow_id, o.organization_id, o.started_at, o.channel FROM old_rows o JOIN messages m ON m.execution_id = o.id;
        DELETE FROM execution_steps s USING old_rows o WHERE s.execution_id = o.id;
        DELETE FROM execution_answers a USING old_rows o WHERE a.execution_id = o.id;
        DELETE FROM workflow_execution_retries r USING old_rows o WHERE r.retry_of = o.id;
        UPDATE messages m SET execution_id = NULL FROM old_rows o WHERE m.execution_id = o.id;
        UPDATE trigger_executions t SET workflow_execution_id = NULL FROM old_rows o WHERE t.workflow_execution_id = o.id;
        RETURN NULL;
      END $$`);
    await q.query(
      `CREATE TRIGGER "A_workflow_executions_forget_children" AFTER DELETE ON workflow_executions REFERENCING OLD TABLE AS old_rows
         FOR EACH STATEMENT EXECUTE FUNCTION workflow_executions_forget_children()`,
    );
    for (const t of TABLES) await analyzeIfFilled(q, t.table);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER "A_workflow_executions_forget_children" ON workflow_executions`);
    await q.query(`DROP FUNCTION workflow_executions_forget_children()`);
    for (const t of [...TABLES].reverse()) await unpartition(q, t.table, t.primaryKey === '(id, execution_id)' ? '(id)' : t.primaryKey);
    await q.query(`DROP TABLE workflow_execution_retries`);
    await q.query(`CREATE UNIQUE INDEX uq_workflow_executions_retry_of ON workflow_executions (retry_of) WHERE retry_of IS NOT NULL`);
    await q.query(
      `CREATE TRIGGER "A_workflow_executions_journey_forget_steps" AFTER DELETE ON workflow_executions FOR EACH ROW EXECUTE FUNCTION execution_step_changes_forget_execution()`,
    );
    await q.query(
      `CREATE TRIGGER "A_workflow_executions_rollup_forget_messages" AFTER DELETE ON workflow_executions FOR EACH ROW EXECUTE FUNCTION message_changes_forget_execution()`,
    );
    await q.query(`ALTER TABLE execution_answers ADD CONSTRAINT execution_answers_execution_id_fkey FOREIGN KEY (execution_id) REFERENCES workflow_executions(id) ON DELETE CASCADE`);
    await q.query(`ALTER TABLE execution_steps ADD CONSTRAINT execution_steps_execution_id_fkey FOREIGN KEY (execution_id) REFERENCES workflow_executions(id) ON DELETE CASCADE`);
    await q.query(`ALTER TABLE messages ADD CONSTRAINT messages_execution_id_fkey FOREIGN KEY (execution_id) REFERENCES workflow_executions(id) ON DELETE SET NULL`);
    await q.query(
      `ALTER TABLE trigger_executions ADD CONSTRAINT trigger_executions_workflow_execution_id_fkey FOREIGN KEY (workflow_execution_id) REFERENCES workflow_executions(id) ON DELETE SET NULL`,
    );
  }
}

/** The foreign keys onto workflow_executions, dropped. */
const REFERENCES = [
  ['execution_steps', 'execution_steps_execution_id_fkey'],
  ['execution_answers', 'execution_answers_execution_id_fkey'],
  ['messages', 'messages_execution_id_fkey'],
  ['trigger_executions', 'trigger_executions_workflow_execution_id_fkey'],
] as const;

const TABLES = [
  { table: 'workflow_executions', key: 'id', primaryKey: '(id)' },
  { table: 'execution_steps', key: 'execution_id', primaryKey: '(id, execution_id)' },
  { table: 'execution_answers', key: 'execution_id', primaryKey: '(execution_id)' },
] as const;

/** The time a UUIDv7 carries (its first 48 bits, milliseconds since the epoch). */
const UUID_TIME = (column: string) => `to_timestamp((('x' || substr(replace(${column}::text, '-', ''), 1, 12))::bit(48)::bigint) / 1000.0)`;
const IS_V7 = (column: string) => `substr(${column}::text, 15, 1) = '7'`;

interface Dependents {
  /** CREATE INDEX statements of every index but the primary key's. */
  indexes: { name: string; def: string }[];
  /** Check and outgoing foreign-key constraints. */
  constraints: { name: string; def: string }[];
  /** CREATE TRIGGER statements of the table's own triggers. */
  triggers: string[];
}

/** What a table carries besides its columns and primary key, read from the catalog under the table's current name. */
async function dependentsOf(q: QueryRunner, table: string): Promise<Dependents> {
  const indexes = (await q.query(
    `SELECT i.relname AS name, pg_get_indexdef(i.oid) AS def FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
      WHERE x.indrelid = $1::regclass AND NOT x.indisprimary ORDER BY 1`,
    [table],
  )) as { name: string; def: string }[];
  const constraints = (await q.query(
    `SELECT conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = $1::regclass AND contype IN ('c', 'f') ORDER BY 1`,
    [table],
  )) as { name: string; def: string }[];
  const triggers = (await q.query(`SELECT pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal ORDER BY tgname`, [table])).map(
    (r: { def: string }) => r.def,
  );
  return { indexes, constraints, triggers };
}

async function addDependents(q: QueryRunner, table: string, d: Dependents): Promise<void> {
  for (const c of d.constraints) await q.query(`ALTER TABLE ${table} ADD CONSTRAINT "${c.name}" ${c.def}`);
  // A partitioned table's index reads `ON ONLY <table>`: made on the table, it makes the partitions' too.
  for (const i of d.indexes) await q.query(i.def.replace(' ON ONLY ', ' ON '));
  for (const t of d.triggers) await q.query(t);
}

/** Moves a table's rows into a table of the same name range-partitioned by month on `key`, with the same dependents. */
async function partition(q: QueryRunner, table: string, key: string, primaryKey: string): Promise<void> {
  const dependents = await dependentsOf(q, table);
  const aside = `${table}_unpartitioned`;
  await q.query(`ALTER TABLE ${table} RENAME TO ${aside}`);
  await q.query(`ALTER TABLE ${aside} RENAME CONSTRAINT ${table}_pkey TO ${aside}_pkey`);
  for (const i of dependents.indexes) await q.query(`DROP INDEX ${i.name}`);
  await q.query(`CREATE TABLE ${table} (LIKE ${aside} INCLUDING DEFAULTS INCLUDING STORAGE) PARTITION BY RANGE (${key})`);
  await q.query(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_pkey PRIMARY KEY ${primaryKey}`);
  // Months of the rows already there (at most two years back: older or random keys go to the default
  // partition, trimmed like the others), to two months ahead; the same bounds for each table.
  await q.query(
    `SELECT retention_partitions_ensure($1,
              GREATEST(now() - interval '25 months', LEAST(now(), COALESCE((SELECT min(${UUID_TIME(key)}) FROM ${aside} WHERE ${IS_V7(key)}), now()))),
              now() + interval '2 months')`,
    [table],
  );
  await q.query(`CREATE TABLE ${table}_default PARTITION OF ${table} DEFAULT`);
  await q.query(`INSERT INTO ${table} SELECT * FROM ${aside}`);
  await q.query(`DROP TABLE ${aside}`);
  await addDependents(q, table, dependents);
}

/** The reverse of partition(): a plain table of the same name, rows, and dependents. */
async function unpartition(q: QueryRunner, table: string, primaryKey: string): Promise<void> {
  const dependents = await dependentsOf(q, table);
  const aside = `${table}_partitioned`;
  await q.query(`ALTER TABLE ${table} RENAME TO ${aside}`);
  await q.query(`ALTER TABLE ${aside} RENAME CONSTRAINT ${table}_pkey TO ${aside}_pkey`);
  for (const i of dependents.indexes) await q.query(`DROP INDEX ${i.name}`);
  await q.query(`CREATE TABLE ${table} (LIKE ${aside} INCLUDING DEFAULTS INCLUDING STORAGE)`);
  await q.query(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_pkey PRIMARY KEY ${primaryKey}`);
  await q.query(`INSERT INTO ${table} SELECT * FROM ${aside}`);
  await q.query(`DROP TABLE ${aside}`);
  await addDependents(q, table, dependents);
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
