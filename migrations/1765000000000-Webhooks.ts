import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Outbound webhooks: subscriptions, deliveries (one per event and webhook) and their attempts (the
 * delivery log). Deliveries and attempts have time-ordered keys (UUIDv7) so the log reads newest
 * first by primary key and inserts stay at the right edge of the index. A statement trigger on the
 * outbox wakes the relay with NOTIFY, so it never polls the table in a tight loop.
 */
export class Webhooks1765000000000 implements MigrationInterface {
  name = 'Webhooks1765000000000';

  async up(q: QueryRunner): Promise<void> {
    // Time-ordered keys from uuid_v7() (migration TimeOrderedIds).
    await q.query(`
      CREATE TABLE webhooks (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        name varchar(200) NOT NULL,
        url varchar(2048) NOT NULL,
        events text[] NOT NULL,
        secret_encrypted text NOT NULL,
        previous_secret_encrypted text,
        previous_secret_expires_at timestamptz,
        active boolean NOT NULL DEFAULT true,
        max_retries int NOT NULL DEFAULT 3 CHECK (max_retries BETWEEN 0 AND 10),
        retry_delay_ms int NOT NULL DEFAULT 1000 CHECK (retry_delay_ms BETWEEN 100 AND 30000),
        failing_since timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX uq_webhooks_org_url ON webhooks (organization_id, url)`);
    await q.query(`CREATE INDEX idx_webhooks_org_created ON webhooks (organization_id, created_at, id)`);
    await q.query(`CREATE INDEX idx_webhooks_org_active ON webhooks (organization_id) WHERE active`);
    await q.query(`
      CREATE TABLE webhook_deliveries (
        id uuid PRIMARY KEY DEFAULT uuid_v7(),
        organization_id uuid NOT NULL,
        webhook_id uuid NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
        event_id uuid NOT NULL,
        event_type varchar(64) NOT NULL,
        event_timestamp timestamptz NOT NULL,
        data jsonb NOT NULL,
        status varchar(16) NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts int NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        locked_until timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz
      )`);
    await q.query(`CREATE INDEX idx_webhook_deliveries_webhook ON webhook_deliveries (webhook_id, id)`);
    await q.query(`CREATE INDEX idx_webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`);
    await q.query(`
      CREATE TABLE webhook_delivery_attempts (
        id uuid PRIMARY KEY DEFAULT uuid_v7(),
        organization_id uuid NOT NULL,
        webhook_id uuid NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
        delivery_id uuid NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
        event_type varchar(64) NOT NULL,
        attempt int NOT NULL,
        status varchar(16) NOT NULL CHECK (status IN ('delivered', 'retrying', 'failed')),
        response_code int,
        response_time_ms int,
        delivered_at timestamptz NOT NULL DEFAULT now(),
        error_message varchar(500)
      )`);
    await q.query(`CREATE INDEX idx_webhook_attempts_webhook ON webhook_delivery_attempts (webhook_id, id)`);
    await q.query(`CREATE INDEX idx_webhook_attempts_delivery ON webhook_delivery_attempts (delivery_id)`);
    // One NOTIFY per writing statement (not per row); PostgreSQL folds repeats within a transaction.
    await q.query(`
      CREATE FUNCTION notify_outbox_events() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('outbox_events', '');
        RETURN NULL;
      END
      $$`);
    await q.query(`CREATE TRIGGER trg_outbox_events_notify AFTER INSERT ON outbox_events FOR EACH STATEMENT EXECUTE FUNCTION notify_outbox_events()`);
    await q.query(`CREATE INDEX idx_outbox_events_published ON outbox_events (published_at) WHERE published_at IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS idx_outbox_events_published`);
    await q.query(`DROP TRIGGER IF EXISTS trg_outbox_events_notify ON outbox_events`);
    await q.query(`DROP FUNCTION IF EXISTS notify_outbox_events()`);
    for (const table of ['webhook_delivery_attempts', 'webhook_deliveries', 'webhooks']) await q.query(`DROP TABLE IF EXISTS ${table}`);
  }
}
