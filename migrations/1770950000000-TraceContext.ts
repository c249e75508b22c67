import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Traces (OpenTelemetry): the W3C `traceparent` of the span that wrote an event (an execution's run),
 * kept with the event and copied to its webhook deliveries, which send it to receivers. NULL with
 * traces off. Nullable columns without a default: no table rewrite.
 */
export class TraceContext1770950000000 implements MigrationInterface {
  name = 'TraceContext1770950000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE outbox_events ADD COLUMN traceparent varchar(55) NULL`);
    await q.query(`ALTER TABLE webhook_deliveries ADD COLUMN traceparent varchar(55) NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_deliveries DROP COLUMN traceparent`);
    await q.query(`ALTER TABLE outbox_events DROP COLUMN traceparent`);
  }
}
