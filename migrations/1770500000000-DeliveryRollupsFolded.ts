import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The delivery rollups folded like the execution rollups (migration RollupFolding), instead of upserted
 * by the statement that settles a send. Every send of a workflow's hour and channel counted into the
 * same `workflow_delivery_hours` row: concurrent senders queued on that row's lock, each until its
 * commit was flushed, and this was most of what a conversation's database time waited on. The
 * statement triggers on `message_deliveries` now append their grouped deltas to
 * `message_delivery_changes` (an insert, no shared row), and `delivery_rollups_fold(max_rows, wait)`
 * folds the oldest logged rows into the rollup with one grouped upsert in key order and deletes them,
 * in one transaction under an advisory lock of its own (a fold that dies counts nothing; two folders
 * take turns). Rows of a workflow deleted since are dropped, as the other folds do. The workers fold
 * it with the other logs, and a reader folds what is left before it reads, so figures stay exact.
 */

/** The advisory lock that makes delivery folders take turns: 'delivery_rollups_fold' as a 64-bit key. */
const DELIVERY_FOLD_LOCK = 7_206_917_431_220_513_002n;

/** What each row of a transition table counts, times `sign` (as migration DeliveryRollups). */
function counts(table: string, sign: string): string {
  return `SELECT t.organization_id, t.workflow_id, date_trunc('hour', t.started_at, 'UTC') AS hour, t.channel,
                 ${sign} * (t.sent_at IS NOT NULL OR t.failed_at IS NOT NULL)::int AS concluded,
                 ${sign} * (t.delivered_at IS NOT NULL)::int AS delivered,
                 ${sign} * (t.read_at IS NOT NULL)::int AS read
            FROM ${table} t WHERE t.workflow_id IS NOT NULL`;
}

/** A trigger function that appends the statement's grouped deltas (none for a claim, which counts nothing). */
function logFunction(name: string, source: string): string {
  return `
    CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      INSERT INTO message_delivery_changes (organization_id, workflow_id, hour, channel, concluded, delivered, read)
      SELECT organization_id, workflow_id, hour, channel, sum(concluded)::int, sum(delivered)::int, sum(read)::int
        FROM (${source}) c
       GROUP BY organization_id, workflow_id, hour, channel
      HAVING sum(concluded) <> 0 OR sum(delivered) <> 0 OR sum(read) <> 0;
      RETURN NULL;
    END
    $fn$`;
}

/** The functions as migration DeliveryRollups made them (for down). */
function upsertFunction(name: string, source: string): string {
  return `
    CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      INSERT INTO workflow_delivery_hours AS r (organization_id, workflow_id, hour, channel, concluded, delivered, read)
      SELECT organization_id, workflow_id, hour, channel, sum(concluded)::int, sum(delivered)::int, sum(read)::int
        FROM (${source}) c
       GROUP BY organization_id, workflow_id, hour, channel
      HAVING sum(concluded) <> 0 OR sum(delivered) <> 0 OR sum(read) <> 0
       ORDER BY workflow_id, hour, channel
      ON CONFLICT (workflow_id, hour, channel) DO UPDATE
         SET concluded = r.concluded + EXCLUDED.concluded, delivered = r.delivered + EXCLUDED.delivered, read = r.read + EXCLUDED.read;
      RETURN NULL;
    END
    $fn$`;
}

const SOURCES = [
  ['message_deliveries_rollup_update', `${counts('new_rows', '1')} UNION ALL ${counts('old_rows', '-1')}`],
  ['message_deliveries_rollup_delete', counts('old_rows', '-1')],
] as const;

const FOLD_FUNCTION = `
  -- p_wait: readers wait for a fold in progress (they need its rows folded); a worker's loop does not.
  CREATE FUNCTION delivery_rollups_fold(p_max_rows int, p_wait boolean DEFAULT true) RETURNS int LANGUAGE plpgsql AS $fn$
  DECLARE
    v_taken int;
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM message_delivery_changes) THEN
      RETURN 0;
    END IF;
    IF p_wait THEN
      PERFORM pg_advisory_xact_lock(${DELIVERY_FOLD_LOCK});
    ELSIF NOT pg_try_advisory_xact_lock(${DELIVERY_FOLD_LOCK}) THEN
      RETURN 0;
    END IF;
    WITH taken AS MATERIALIZED (
      DELETE FROM message_delivery_changes l WHERE l.seq IN (SELECT seq FROM message_delivery_changes ORDER BY seq LIMIT p_max_rows)
      RETURNING l.organization_id, l.workflow_id, l.hour, l.channel, l.concluded, l.delivered, l.read
    ), upserted AS (
      INSERT INTO workflow_delivery_hours AS r (organization_id, workflow_id, hour, channel, concluded, delivered, read)
      SELECT t.organization_id, t.workflow_id, t.hour, t.channel, sum(t.concluded)::int, sum(t.delivered)::int, sum(t.read)::int
        FROM taken t
       WHERE EXISTS (SELECT 1 FROM workflows w WHERE w.id = t.workflow_id)
       GROUP BY t.organization_id, t.workflow_id, t.hour, t.channel
      HAVING sum(t.concluded) <> 0 OR sum(t.delivered) <> 0 OR sum(t.read) <> 0
       -- One order for every fold: two never wait on each other's rows in opposite orders.
       ORDER BY t.workflow_id, t.hour, t.channel
      ON CONFLICT (workflow_id, hour, channel) DO UPDATE
         SET concluded = r.concluded + EXCLUDED.concluded, delivered = r.delivered + EXCLUDED.delivered, read = r.read + EXCLUDED.read
    )
    SELECT count(*)::int INTO v_taken FROM taken;
    RETURN v_taken;
  END
  $fn$`;

export class DeliveryRollupsFolded1770500000000 implements MigrationInterface {
  name = 'DeliveryRollupsFolded1770500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`LOCK TABLE message_deliveries IN SHARE MODE`);
    await q.query(`
      CREATE TABLE message_delivery_changes (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        organization_id uuid NOT NULL,
        workflow_id uuid NOT NULL,
        hour timestamptz NOT NULL,
        channel varchar(32) NOT NULL,
        concluded int NOT NULL,
        delivered int NOT NULL,
        read int NOT NULL
      )`);
    // A queue: rows live for about a second. Vacuum it often so that its index stays small.
    await q.query(
      `ALTER TABLE message_delivery_changes SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000, autovacuum_vacuum_insert_threshold = 5000)`,
    );
    for (const [name, source] of SOURCES) await q.query(logFunction(name, source));
    await q.query(FOLD_FUNCTION);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`LOCK TABLE message_deliveries IN SHARE MODE`);
    await q.query(`DO $$ BEGIN WHILE delivery_rollups_fold(100000) > 0 LOOP END LOOP; END $$`);
    for (const [name, source] of SOURCES) await q.query(upsertFunction(name, source));
    await q.query(`DROP FUNCTION delivery_rollups_fold(int, boolean)`);
    await q.query(`DROP TABLE message_delivery_changes`);
  }
}
