import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Channel accounts (a WhatsApp number, an Instagram account, a phone line) and what talking to the
 * providers needs:
 * - `channel_accounts`: credentials sealed in one value, the names of those set, the Meta webhook
 *   verify token sealed too.
 * - `channel_webhook_payloads`: a verified provider payload, stored before the 200 and deleted once
 *   every message and status in it has been applied (a row left is work to do again).
 * - `messages.channel_account_id` and `provider_message_id`: unique per account, so a redelivered
 *   inbound message or a repeated status is recognised.
 * - `message_deliveries`: the send state of each outbound message bound for a provider (status,
 *   attempts, the provider's error), and the index of each account's pending sends by customer in
 *   conversation order.
 * - `workflow_executions.channel_account_id`: the account an execution replies through.
 * No foreign key from messages or executions to the account: their inserts are the hot path, and a
 * deleted account leaves its history as it was.
 */
export class ChannelAccounts1770300000000 implements MigrationInterface {
  name = 'ChannelAccounts1770300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE channel_accounts (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        name varchar(255) NOT NULL,
        channel varchar(32) NOT NULL,
        provider varchar(32) NOT NULL,
        credentials_sealed text NOT NULL,
        credential_fields text[] NOT NULL DEFAULT '{}',
        verify_token_sealed text,
        settings jsonb NOT NULL DEFAULT '{}'::jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX idx_channel_accounts_org_created ON channel_accounts (organization_id, created_at DESC, id DESC)`);

    await q.query(`
      CREATE TABLE channel_webhook_payloads (
        id uuid PRIMARY KEY,
        channel_account_id uuid NOT NULL REFERENCES channel_accounts(id) ON DELETE CASCADE,
        organization_id uuid NOT NULL,
        body jsonb NOT NULL,
        attempts int NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL,
        received_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX idx_channel_webhook_payloads_due ON channel_webhook_payloads (next_attempt_at)`);
    await q.query(`CREATE INDEX idx_channel_webhook_payloads_account ON channel_webhook_payloads (channel_account_id)`);

    await q.query(`ALTER TABLE messages ADD COLUMN channel_account_id uuid, ADD COLUMN provider_message_id varchar(255)`);
    await q.query(
      `CREATE UNIQUE INDEX uq_messages_account_provider_id ON messages (channel_account_id, provider_message_id) WHERE provider_message_id IS NOT NULL`,
    );
    await q.query(`ALTER TABLE workflow_executions ADD COLUMN channel_account_id uuid`);

    await q.query(`
      CREATE TABLE message_deliveries (
        message_id uuid PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
        organization_id uuid NOT NULL,
        channel_account_id uuid NOT NULL,
        customer_id uuid NOT NULL,
        execution_id uuid,
        workflow_id uuid,
        kind varchar(16) NOT NULL DEFAULT 'text',
        status varchar(16) NOT NULL DEFAULT 'queued',
        attempts int NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        sending_since timestamptz,
        error_code varchar(64),
        error_title text,
        queued_at timestamptz NOT NULL,
        sent_at timestamptz,
        delivered_at timestamptz,
        read_at timestamptz,
        failed_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT chk_message_deliveries_status CHECK (status IN ('queued', 'sending', 'sent', 'delivered', 'read', 'failed'))
      )`);
    // A customer's pending sends in conversation order (the head goes first), and each account's backlog.
    await q.query(
      `CREATE INDEX idx_message_deliveries_pending ON message_deliveries (channel_account_id, customer_id, queued_at, message_id) WHERE status IN ('queued', 'sending')`,
    );
    await q.query(`CREATE INDEX idx_message_deliveries_execution ON message_deliveries (execution_id) WHERE execution_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE message_deliveries`);
    await q.query(`ALTER TABLE workflow_executions DROP COLUMN channel_account_id`);
    await q.query(`DROP INDEX uq_messages_account_provider_id`);
    await q.query(`ALTER TABLE messages DROP COLUMN channel_account_id, DROP COLUMN provider_message_id`);
    await q.query(`DROP TABLE channel_webhook_payloads`);
    await q.query(`DROP TABLE channel_accounts`);
  }
}
