import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A human takes over a conversation:
 * - `customers.handoff_reason`, `handoff_started_at`, `handoff_ends_at`: the customer's handoff, active
 *   while `handoff_ends_at` is in the future (every read compares it with now(), so an expired handoff is
 *   inactive at once); the workers' sweep clears an expired one and emits its end, found by the partial
 *   index on `handoff_ends_at` (only customers with a handoff are in it).
 * - `messages.author`: `agent` for a message a person sent through `POST /v1/customers/{id}/messages`.
 *   NULL means what the direction says (an inbound message is the customer's, an outbound one the
 *   workflow's, `bot`): the inbound and run-commit statements write nothing more, and no existing row
 *   is rewritten.
 */
export class CustomerHandoff1770700000000 implements MigrationInterface {
  name = 'CustomerHandoff1770700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE customers
        ADD COLUMN handoff_reason varchar(500),
        ADD COLUMN handoff_started_at timestamptz,
        ADD COLUMN handoff_ends_at timestamptz`);
    await q.query(`CREATE INDEX idx_customers_handoff_ends ON customers (handoff_ends_at) WHERE handoff_ends_at IS NOT NULL`);
    await q.query(`ALTER TABLE messages ADD COLUMN author varchar(8), ADD CONSTRAINT chk_messages_author CHECK (author IN ('customer', 'bot', 'agent'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE messages DROP CONSTRAINT chk_messages_author, DROP COLUMN author`);
    await q.query(`DROP INDEX idx_customers_handoff_ends`);
    await q.query(`ALTER TABLE customers DROP COLUMN handoff_reason, DROP COLUMN handoff_started_at, DROP COLUMN handoff_ends_at`);
  }
}
