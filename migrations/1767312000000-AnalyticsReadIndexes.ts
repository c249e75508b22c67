import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The organization-wide time indexes that DropUnreadIndexes removed while nothing read them, back
 * for analytics: engagement and realtime read an organization's messages of a
 * period or of the last hour, the workflow summaries, journeys and realtime its executions
 * started in a period. Without them each of those reads scans the whole table (seconds at a
 * million rows). Each costs one more index entry per message or execution written.
 */
export class AnalyticsReadIndexes1767312000000 implements MigrationInterface {
  name = 'AnalyticsReadIndexes1767312000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS idx_messages_org_created ON messages (organization_id, created_at)`);
    await q.query(`CREATE INDEX IF NOT EXISTS idx_workflow_executions_org_started ON workflow_executions (organization_id, started_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS idx_workflow_executions_org_started`);
    await q.query(`DROP INDEX IF EXISTS idx_messages_org_created`);
  }
}
