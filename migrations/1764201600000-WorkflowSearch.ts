import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `GET /v1/workflows?search=` (name or description, case-insensitive substring) as an index scan:
 * trigram GIN indexes (pg_trgm) answer `ILIKE '%term%'` for terms of 3+ characters, and the
 * organization is a key of the same index (btree_gin), so one organization's search does not
 * read the matches of the others. Without them every search read all of the organization's
 * workflows twice (the page and the count). The extensions stay when undone: other objects may
 * use them, and dropping one is not this migration's to decide.
 */
export class WorkflowSearch1764201600000 implements MigrationInterface {
  name = 'WorkflowSearch1764201600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await q.query(`CREATE EXTENSION IF NOT EXISTS btree_gin`);
    await q.query(`CREATE INDEX IF NOT EXISTS idx_workflows_org_name_trgm ON workflows USING gin (organization_id, name gin_trgm_ops)`);
    await q.query(`CREATE INDEX IF NOT EXISTS idx_workflows_org_description_trgm ON workflows USING gin (organization_id, description gin_trgm_ops)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS idx_workflows_org_description_trgm`);
    await q.query(`DROP INDEX IF EXISTS idx_workflows_org_name_trgm`);
  }
}
