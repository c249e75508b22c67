import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The outbox relay polls instead of being notified (docs/DECISIONS.md, "Outbox relay: a short poll,
 * no NOTIFY"). A `pg_notify` in a transaction takes one database-wide lock at commit and holds it
 * until the commit is flushed, so every transaction that wrote outbox events (each inbound message,
 * firing and run commit) committed one after another: under the executions bench a third of the
 * waiting backends waited on that lock. The relay now looks every 100 ms, the same delay by which it
 * used to coalesce notifications.
 */
export class OutboxPolled1770100000000 implements MigrationInterface {
  name = 'OutboxPolled1770100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER trg_outbox_events_notify ON outbox_events`);
    await q.query(`DROP FUNCTION notify_outbox_events()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION notify_outbox_events() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('outbox_events', '');
        RETURN NULL;
      END
      $$`);
    await q.query(`CREATE TRIGGER trg_outbox_events_notify AFTER INSERT ON outbox_events FOR EACH STATEMENT EXECUTE FUNCTION notify_outbox_events()`);
  }
}
