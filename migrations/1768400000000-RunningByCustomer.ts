import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An inbound message is kept for the customer's running execution on its channel, waiting for a
 * reply or not yet, so the lookup reads running executions by customer and channel. The
 * index of waiting executions it replaces had no other reader (the sweep of expired waits goes
 * through the index of running executions), so each execution still pays one partial entry.
 */
export class RunningByCustomer1768400000000 implements MigrationInterface {
  name = 'RunningByCustomer1768400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX idx_workflow_executions_running_customer ON workflow_executions (customer_id, channel, started_at) WHERE status = 'running'`);
    await q.query(`DROP INDEX IF EXISTS idx_workflow_executions_waiting`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS idx_workflow_executions_waiting ON workflow_executions (customer_id, channel) WHERE waiting`);
    await q.query(`DROP INDEX IF EXISTS idx_workflow_executions_running_customer`);
  }
}
