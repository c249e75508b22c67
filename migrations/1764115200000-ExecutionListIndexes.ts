import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The execution lists filtered by `status`: newest first within one status, and the filtered
 * total, each read from one index range ((parent, status, time, id)) instead of walking every
 * execution of the workflow or trigger and discarding the other statuses. The unfiltered lists
 * and the date filters are served by the existing (parent, time, id) indexes.
 */
export class ExecutionListIndexes1764115200000 implements MigrationInterface {
  name = 'ExecutionListIndexes1764115200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS idx_workflow_executions_workflow_status_started ON workflow_executions (workflow_id, status, started_at, id)`);
    await q.query(`CREATE INDEX IF NOT EXISTS idx_trigger_executions_trigger_status_triggered ON trigger_executions (trigger_id, status, triggered_at, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS idx_trigger_executions_trigger_status_triggered`);
    await q.query(`DROP INDEX IF EXISTS idx_workflow_executions_workflow_status_started`);
  }
}
