import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Durable executions: a retry of a failed execution is a new execution that names the
 * one it re-runs (`retry_of`; at most one retry per execution, which the unique index enforces
 * against two concurrent requests), and each step records how many times its node was attempted
 * (`attempt`: a node failing transiently is tried again with back-off before the execution fails).
 * Both columns are added without rewriting the tables (a null column, a constant default).
 */
export class ExecutionRetries1769300000000 implements MigrationInterface {
  name = 'ExecutionRetries1769300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE workflow_executions ADD COLUMN retry_of uuid`);
    await q.query(`CREATE UNIQUE INDEX uq_workflow_executions_retry_of ON workflow_executions (retry_of) WHERE retry_of IS NOT NULL`);
    await q.query(`ALTER TABLE execution_steps ADD COLUMN attempt int NOT NULL DEFAULT 1 CONSTRAINT execution_steps_attempt_check CHECK (attempt >= 1)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE execution_steps DROP COLUMN attempt`);
    await q.query(`DROP INDEX IF EXISTS uq_workflow_executions_retry_of`);
    await q.query(`ALTER TABLE workflow_executions DROP COLUMN retry_of`);
  }
}
