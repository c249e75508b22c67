import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Organization-wide time indexes on the four tables every execution writes to, which no query
 * reads: executions, trigger executions and messages are always read through their workflow,
 * trigger or customer (whose own indexes serve those reads, the organization being an extra
 * filter), and the outbox is read by its unpublished index. Each execution paid about a dozen
 * index entries for them (seven on the outbox alone): measured at ~5% of the machine's CPU per
 * execution. An organization-wide read (analytics across workflows, an event log) adds the index
 * it needs with it.
 */
export class DropUnreadIndexes1764028800000 implements MigrationInterface {
  name = 'DropUnreadIndexes1764028800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS idx_outbox_events_org_occurred`);
    await q.query(`DROP INDEX IF EXISTS idx_workflow_executions_org_started`);
    await q.query(`DROP INDEX IF EXISTS idx_trigger_executions_org_triggered`);
    await q.query(`DROP INDEX IF EXISTS idx_messages_org_created`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS idx_outbox_events_org_occurred ON outbox_events (organization_id, occurred_at)`);
    await q.query(`CREATE INDEX IF NOT EXISTS idx_workflow_executions_org_started ON workflow_executions (organization_id, started_at)`);
    await q.query(`CREATE INDEX IF NOT EXISTS idx_trigger_executions_org_triggered ON trigger_executions (organization_id, triggered_at)`);
    await q.query(`CREATE INDEX IF NOT EXISTS idx_messages_org_created ON messages (organization_id, created_at)`);
  }
}
