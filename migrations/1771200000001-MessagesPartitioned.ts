import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Messages and their deliveries removed by partition drops (after migration ExecutionsPartitioned).
 * - `messages` becomes range-partitioned by month on its UUIDv7 `id`, `message_deliveries` on
 *   `message_id` with the same bounds (a month of messages and their deliveries are dropped together).
 * - `uq_messages_account_provider_id (channel_account_id, provider_message_id)` cannot be kept (no
 *   partition key in it): a provider's message id of an account is now `message_provider_ids`, primary
 *   key `(channel_account_id, provider_message_id)`, written by the inbound statement (the dedupe of a
 *   redelivery: the message is stored only if its id was new) and by the sender when the provider
 *   accepts a send (the statuses find their message through it). Its rows go with their message
 *   (a BRIN index on the time-ordered `message_id` finds a month's or a batch's).
 * - The foreign key of `message_deliveries` onto `messages` is dropped (a month's detach would have
 *   to prove no delivery points into it): a statement-level trigger on a DELETE through `messages`
 *   deletes the deliveries and provider ids, as the key's cascade did.
 * The rows are copied into the new tables before their triggers exist (nothing is logged twice).
 */
export class MessagesPartitioned1771200000001 implements MigrationInterface {
  name = 'MessagesPartitioned1771200000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE message_deliveries DROP CONSTRAINT message_deliveries_message_id_fkey`);
    await q.query(
      `CREATE TABLE message_provider_ids (channel_account_id uuid NOT NULL, provider_message_id varchar(255) NOT NULL, message_id uuid NOT NULL,
         PRIMARY KEY (channel_account_id, provider_message_id))`,
    );
    await q.query(`CREATE INDEX idx_message_provider_ids_message ON message_provider_ids USING brin (message_id)`);
    await q.query(
      `INSERT INTO message_provider_ids (channel_account_id, provider_message_id, message_id)
       SELECT channel_account_id, provider_message_id, id FROM messages WHERE channel_account_id IS NOT NULL AND provider_message_id IS NOT NULL ORDER BY id`,
    );
    await q.query(`DROP INDEX uq_messages_account_provider_id`);

    for (const t of TABLES) await partition(q, t.table, t.key, t.primaryKey);

    await q.query(`
      CREATE FUNCTION messages_forget_children() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan TO off AS $$
      BEGIN
        DELETE FROM message_deliveries d USING old_rows o WHERE d.message_id = o.id;
        DELETE FROM message_provider_ids p USING old_rows o
         WHERE p.channel_account_id = o.channel_account_id AND p.provider_message_id = o.provider_message_id AND p.message_id = o.id;
        RETURN NULL;
      END $$`);
    await q.query(
      `CREATE TRIGGER "A_messages_forget_children" AFTER DELETE ON messages REFERENCING OLD TABLE AS old_rows
         FOR EACH STATEMENT EXECUTE FUNCTION messages_forget_children()`,
    );
    for (const t of TABLES) await analyzeIfFilled(q, t.table);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER "A_messages_forget_children" ON messages`);
    await q.query(`DROP FUNCTION messages_forget_children()`);
    for (const t of [...TABLES].reverse()) await unpartition(q, t.table, t.primaryKey);
    await q.query(
      `CREATE UNIQUE INDEX uq_messages_account_provider_id ON messages (channel_account_id, provider_message_id) WHERE provider_message_id IS NOT NULL`,
    );
    await q.query(`DROP TABLE message_provider_ids`);
    await q.query(`ALTER TABLE message_deliveries ADD CONSTRAINT message_deliveries_message_id_fkey FOREIGN KEY (message_id) REFERENCES messages(id) ON DELETE CASCADE`);
  }
}

const TABLES = [
  { table: 'messages', key: 'id', primaryKey: '(id)' },
  { table: 'message_deliveries', key: 'message_id', primaryKey: '(message_id)' },
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
