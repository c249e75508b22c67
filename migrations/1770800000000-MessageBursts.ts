import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Message bursts: a customer's messages arriving within a channel account's `burst_window_ms` (or
 * CONVERSATION_BURST_WINDOW_MS without an account) after the first are handled as one turn.
 * - `message_bursts`: the open burst of a customer on a channel and account (at most one: the partial
 *   unique index, which the receive statement's upsert joins), its first arrival, its deadline (first
 *   arrival + window) and, once a worker has claimed it, `closed_at` and how many times it was claimed. The row is deleted when its
 *   turn is done; a row left open past its deadline, or closed long ago, is the sweep's to handle.
 * - `messages.burst_id`: the burst a held message belongs to (no foreign key: the burst row goes, the
 *   message stays); `messages.turn_content`: on a burst's first message routed to a running execution,
 *   the joined text the run reads as its one reply (`content` stays each message's own text).
 */
export class MessageBursts1770800000000 implements MigrationInterface {
  name = 'MessageBursts1770800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE message_bursts (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        customer_id uuid NOT NULL REFERENCES customers(id) ON DELETE CASCADE,
        channel varchar(32) NOT NULL,
        channel_account_id uuid NULL,
        user_agent text NULL,
        started_at timestamptz NOT NULL DEFAULT now(),
        deadline timestamptz NOT NULL,
        closed_at timestamptz NULL,
        claims int NOT NULL DEFAULT 0
      )`);
    await q.query(`
      CREATE UNIQUE INDEX message_bursts_open ON message_bursts
        (organization_id, customer_id, channel, (COALESCE(channel_account_id, '00000000-0000-0000-0000-000000000000'::uuid)))
        WHERE closed_at IS NULL`);
    await q.query(`CREATE INDEX message_bursts_due ON message_bursts (deadline)`);
    await q.query(`ALTER TABLE messages ADD COLUMN burst_id uuid NULL, ADD COLUMN turn_content text NULL`);
    await q.query(`CREATE INDEX messages_burst ON messages (burst_id) WHERE burst_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX messages_burst`);
    await q.query(`ALTER TABLE messages DROP COLUMN burst_id, DROP COLUMN turn_content`);
    await q.query(`DROP TABLE message_bursts`);
  }
}
