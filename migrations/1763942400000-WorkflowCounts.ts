import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each organization's number of workflows, kept by a trigger on `workflows`: the unfiltered list
 * (`GET /v1/workflows`, the most common page) reads its total from one row instead of counting
 * every workflow of the organization on each request, which grows with the organization and,
 * until a vacuum has run, visits each row. The trigger keeps it exact whichever code path
 * inserts or deletes (the API, a cascade, a manual fix): the count changes in the transaction of
 * the row it counts. Filtered lists still count their matches.
 */
export class WorkflowCounts1763942400000 implements MigrationInterface {
  name = 'WorkflowCounts1763942400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE organizations ADD COLUMN workflow_count integer NOT NULL DEFAULT 0`);
    await q.query(`
      CREATE FUNCTION workflows_count_per_organization() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
          UPDATE organizations SET workflow_count = workflow_count - 1 WHERE id = OLD.organization_id;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
          UPDATE organizations SET workflow_count = workflow_count + 1 WHERE id = NEW.organization_id;
        END IF;
        RETURN NULL;
      END
      $$`);
    await q.query(`
      CREATE TRIGGER workflows_count_insert_delete AFTER INSERT OR DELETE ON workflows
        FOR EACH ROW EXECUTE FUNCTION workflows_count_per_organization()`);
    await q.query(`
      CREATE TRIGGER workflows_count_move AFTER UPDATE OF organization_id ON workflows
        FOR EACH ROW WHEN (OLD.organization_id IS DISTINCT FROM NEW.organization_id)
        EXECUTE FUNCTION workflows_count_per_organization()`);
    // Existing rows, counted under the lock the ALTER TABLE above holds on organizations, and a
    // share lock on workflows so that no insert slips between the count and the trigger.
    await q.query(`LOCK TABLE workflows IN SHARE MODE`);
    await q.query(`
      UPDATE organizations o SET workflow_count = c.n
        FROM (SELECT organization_id, count(*)::int AS n FROM workflows GROUP BY organization_id) c
       WHERE c.organization_id = o.id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS workflows_count_move ON workflows`);
    await q.query(`DROP TRIGGER IF EXISTS workflows_count_insert_delete ON workflows`);
    await q.query(`DROP FUNCTION IF EXISTS workflows_count_per_organization()`);
    await q.query(`ALTER TABLE organizations DROP COLUMN IF EXISTS workflow_count`);
  }
}
