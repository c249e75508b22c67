import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `organizations.workflows_version`: a number that changes, in the same transaction, whenever the
 * set of the organization's workflows a filtered list or a search could match changes (a workflow
 * inserted, deleted, moved to another organization, or its name, description, status or channel
 * changed). The workflow list keeps the exact total of a filtered list or search per
 * (organization, filters, version) and reuses it while the version is unchanged: counting the
 * matches of a common search term reads every match (~27,000 rows for `refund` among 100,000),
 * which no index can answer without visiting the rows. Changes of the counters the engine keeps
 * on each workflow (execution_count, ...) and of its configuration do not change the version.
 *
 * Inserts and deletes bump it once per statement (transition tables), so a bulk insert touches the
 * organization's row once, not once per workflow; updates bump it per row, and only when one of
 * the columns above changed (the engine's counter updates never fire it).
 */
export class ListsWorkflowsVersion1767400000000 implements MigrationInterface {
  name = 'ListsWorkflowsVersion1767400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE organizations ADD COLUMN workflows_version bigint NOT NULL DEFAULT 0`);
    await q.query(`
      CREATE FUNCTION workflows_version_statement() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          UPDATE organizations SET workflows_version = workflows_version + 1 WHERE id IN (SELECT organization_id FROM new_rows);
        ELSE
          UPDATE organizations SET workflows_version = workflows_version + 1 WHERE id IN (SELECT organization_id FROM old_rows);
        END IF;
        RETURN NULL;
      END
      $$`);
    await q.query(`
      CREATE FUNCTION workflows_version_row() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE organizations SET workflows_version = workflows_version + 1 WHERE id IN (OLD.organization_id, NEW.organization_id);
        RETURN NULL;
      END
      $$`);
    await q.query(`
      CREATE TRIGGER workflows_version_insert AFTER INSERT ON workflows
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION workflows_version_statement()`);
    await q.query(`
      CREATE TRIGGER workflows_version_delete AFTER DELETE ON workflows
        REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION workflows_version_statement()`);
    await q.query(`
      CREATE TRIGGER workflows_version_update AFTER UPDATE ON workflows
        FOR EACH ROW WHEN ((OLD.organization_id, OLD.name, OLD.description, OLD.status, OLD.channel)
                           IS DISTINCT FROM (NEW.organization_id, NEW.name, NEW.description, NEW.status, NEW.channel))
        EXECUTE FUNCTION workflows_version_row()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS workflows_version_update ON workflows`);
    await q.query(`DROP TRIGGER IF EXISTS workflows_version_delete ON workflows`);
    await q.query(`DROP TRIGGER IF EXISTS workflows_version_insert ON workflows`);
    await q.query(`DROP FUNCTION IF EXISTS workflows_version_row()`);
    await q.query(`DROP FUNCTION IF EXISTS workflows_version_statement()`);
    await q.query(`ALTER TABLE organizations DROP COLUMN IF EXISTS workflows_version`);
  }
}
