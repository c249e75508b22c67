import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A workflow's satisfaction over a period (WORKFLOW_SATISFACTION) reads execution_answers by
 * (workflow_id, started_at), scoped by organization: the index carried the sums but not the
 * organization, so every answer of the period was fetched from the table (a year of the bench's
 * history: about 270,000 rows). With the organization in the index the read is index-only. (It
 * did not bring the 365-day workflow analytics back under its target: docs/PERFORMANCE.md.)
 */
export class AnswersIndexOnly1768600000000 implements MigrationInterface {
  name = 'AnswersIndexOnly1768600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX idx_execution_answers_workflow_started`);
    await q.query(`CREATE INDEX idx_execution_answers_workflow_started ON execution_answers (workflow_id, started_at) INCLUDE (organization_id, rating_sum, ratings)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX idx_execution_answers_workflow_started`);
    await q.query(`CREATE INDEX idx_execution_answers_workflow_started ON execution_answers (workflow_id, started_at) INCLUDE (rating_sum, ratings)`);
  }
}
