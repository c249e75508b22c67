import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The tables every execution writes to, whose keys become time-ordered. */
const TABLES = ['workflow_executions', 'trigger_executions', 'execution_steps', 'messages', 'outbox_events'];

/**
 * Time-ordered keys (UUID version 7) for the high-volume tables: a random key lands each insert
 * on a different leaf page of the primary-key index, so once the index outgrows memory every
 * insert reads a page and writes a full-page image to the WAL; keys in time order land on the
 * right edge. PostgreSQL 15 has no uuidv7(): `uuid_v7()` puts the Unix milliseconds
 * (clock_timestamp) in the first 48 bits of a random UUID and sets the version bits 0100 → 0111.
 * It is the default for rows the database keys (steps, outbox events, rows written by hand);
 * the service makes the ids it needs before the insert with the same layout (uuid-v7.ts).
 * Existing rows keep their ids; `down` restores the random default.
 */
export class TimeOrderedIds1764374400000 implements MigrationInterface {
  name = 'TimeOrderedIds1764374400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION uuid_v7() RETURNS uuid LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
        SELECT encode(
                 set_bit(set_bit(
                   overlay(uuid_send(gen_random_uuid())
                           PLACING substring(int8send((EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint) FROM 3)
                           FROM 1 FOR 6),
                   52, 1), 53, 1),
                 'hex')::uuid
      $$`);
    for (const table of TABLES) await q.query(`ALTER TABLE ${table} ALTER COLUMN id SET DEFAULT uuid_v7()`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of TABLES) await q.query(`ALTER TABLE ${table} ALTER COLUMN id SET DEFAULT gen_random_uuid()`);
    await q.query(`DROP FUNCTION IF EXISTS uuid_v7()`);
  }
}
