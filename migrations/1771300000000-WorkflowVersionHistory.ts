import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A workflow's versions become its public history (`GET /v1/workflows/{id}/versions`). Each row of
 * `workflow_versions` (one per configuration, written with the change that made it) gains:
 * - `organization_id`, so that every read of the history is scoped by the caller's organization in
 *   the table itself;
 * - `name`, `description`, `channel`: the workflow's as the version was written. Rows older than this
 *   migration did not record them: the current version of each workflow takes the workflow's present
 *   values, older versions keep NULL (not recorded);
 * - `created_by_type`, `created_by_id`, `created_by_user_id`: the credential that wrote the version
 *   (`api_key`, `oauth`, `jwt`, its id, and for OAuth the user who authorized it); NULL before.
 * A workflow that has no row for its current version (rows written by SQL, not by the service) gets one.
 * The history is read through `uq_workflow_versions_workflow_version (workflow_id, version)`, walked
 * backwards for newest first: no new index.
 * Frozen: imports nothing from src/.
 */
export class WorkflowVersionHistory1771300000000 implements MigrationInterface {
  name = 'WorkflowVersionHistory1771300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE workflow_versions
        ADD COLUMN organization_id uuid,
        ADD COLUMN name varchar(200),
        ADD COLUMN description text,
        ADD COLUMN channel varchar(32),
        ADD COLUMN created_by_type varchar(16),
        ADD COLUMN created_by_id uuid,
        ADD COLUMN created_by_user_id uuid`);
    await q.query(`
      UPDATE workflow_versions v
         SET organization_id = w.organization_id,
             name = CASE WHEN v.version = w.version THEN w.name END,
             description = CASE WHEN v.version = w.version THEN w.description END,
             channel = CASE WHEN v.version = w.version THEN w.channel END
        FROM workflows w
       WHERE w.id = v.workflow_id`);
    await q.query(`
      INSERT INTO workflow_versions (workflow_id, organization_id, version, configuration, name, description, channel, created_at)
      SELECT w.id, w.organization_id, w.version, w.configuration, w.name, w.description, w.channel, w.updated_at
        FROM workflows w
       WHERE NOT EXISTS (SELECT 1 FROM workflow_versions v WHERE v.workflow_id = w.id AND v.version = w.version)`);
    await q.query(`ALTER TABLE workflow_versions ALTER COLUMN organization_id SET NOT NULL`);
    await q.query(`
      ALTER TABLE workflow_versions ADD CONSTRAINT chk_workflow_versions_created_by_type
        CHECK (created_by_type IS NULL OR created_by_type IN ('api_key', 'oauth', 'jwt'))`);
    await q.query(`ANALYZE workflow_versions`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE workflow_versions
        DROP CONSTRAINT chk_workflow_versions_created_by_type,
        DROP COLUMN organization_id,
        DROP COLUMN name,
        DROP COLUMN description,
        DROP COLUMN channel,
        DROP COLUMN created_by_type,
        DROP COLUMN created_by_id,
        DROP COLUMN created_by_user_id`);
  }
}
