import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook deliveries and their attempts removed by partition drops (after migration MessagesPartitioned).
 * `webhook_deliveries` becomes range-partitioned by month on its UUIDv7 `id`, `webhook_delivery_attempts`
 * on `delivery_id` with the same bounds (a delivery's attempts, hours or days apart, stay in its month);
 * the attempts' primary key becomes `(id, delivery_id)`. Their foreign key onto `webhook_deliveries` is
 * dropped (a month's detach would have to prove no attempt points into it): a statement-level trigger on
 * a DELETE through `webhook_deliveries` deletes the attempts, as the key's cascade did. The rows are
 * copied into the new tables.
 */
export class WebhookDeliveriesPartitioned1771200000002 implements MigrationInterface {
  name = 'WebhookDeliveriesPartitioned1771200000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_delivery_attempts DROP CONSTRAINT webhook_delivery_attempts_delivery_id_fkey`);
    for (const t of TABLES) await partition(q, t.table, t.key, t.primaryKey);
    await q.query(`
      CREATE FUNCTION webhook_deliveries_forget_attempts() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan TO off AS $$
      BEGIN
        DELETE FROM webhook_delivery_attempts a USING old_rows o WHERE a.delivery_id = o.id;
        RETURN NULL;
      END $$`);
    await q.query(
      `CREATE TRIGGER "A_webhook_deliveries_forget_attempts" AFTER DELETE ON webhook_deliveries REFERENCING OLD TABLE AS old_rows
         FOR EACH STATEMENT EXECUTE FUNCTION webhook_deliveries_forget_attempts()`,
    );
    for (const t of TABLES) await analyzeIfFilled(q, t.table);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER "A_webhook_deliveries_forget_attempts" ON webhook_deliveries`);
    await q.query(`DROP FUNCTION webhook_deliveries_forget_attempts()`);
    for (const t of [...TABLES].reverse()) await unpartition(q, t.table, t.primaryKey === '(id, delivery_id)' ? '(id)' : t.primaryKey);
    await q.query(
      `ALTER TABLE webhook_delivery_attempts ADD CONSTRAINT webhook_delivery_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries(id) ON DELETE CASCADE`,
    );
  }
}

const TABLES = [
  { table: 'webhook_deliveries', key: 'id', primaryKey: '(id)' },
  { table: 'webhook_delivery_attempts', key: 'delivery_id', primaryKey: '(id, delivery_id)' },
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
