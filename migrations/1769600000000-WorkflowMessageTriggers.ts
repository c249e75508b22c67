import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A workflow's `configuration.trigger` (`{type: "message", keywords}`) starts it: the workflow keeps
 * one managed message trigger (`triggers.managed`), kept in sync by a row trigger on workflows in
 * the statement that changes the workflow. While the workflow is active and its configuration
 * names message keywords, the managed trigger is active with those keywords (and the workflow's
 * channel); otherwise it is inactive (its firings stay readable); deleting the workflow deletes it
 * (the foreign key's cascade). Inbound messages then match it as any active message trigger, in the
 * receive statement's one read by idx_triggers_active_messages: nothing is added to that hot path.
 * Managed triggers are listed by GET /v1/triggers and refuse changes through the trigger routes;
 * their names are outside the organization's unique trigger names.
 */
export class WorkflowMessageTriggers1769600000000 implements MigrationInterface {
  name = 'WorkflowMessageTriggers1769600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE triggers ADD COLUMN managed boolean NOT NULL DEFAULT false`);
    await q.query(`DROP INDEX uq_triggers_org_name`);
    await q.query(`CREATE UNIQUE INDEX uq_triggers_org_name ON triggers (organization_id, name) WHERE NOT managed`);
    await q.query(`CREATE UNIQUE INDEX uq_triggers_workflow_managed ON triggers (workflow_id) WHERE managed`);
    await q.query(`
      CREATE FUNCTION workflow_message_trigger_sync() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        keywords jsonb := CASE WHEN NEW.configuration -> 'trigger' ->> 'type' = 'message' THEN NEW.configuration -> 'trigger' -> 'keywords' END;
      BEGIN
        IF NEW.status = 'active' AND jsonb_typeof(keywords) = 'array' AND jsonb_array_length(keywords) > 0 THEN
          INSERT INTO triggers (organization_id, workflow_id, name, type, status, channel, configuration, managed, activated_at)
          VALUES (NEW.organization_id, NEW.id, 'configuration.trigger of workflow ' || NEW.id, 'message', 'active', NEW.channel,
                  jsonb_build_object('keywords', keywords, 'case_sensitive', false, 'exact_match', false, 'language', NULL, 'channel', NULL),
                  true, now())
          ON CONFLICT (workflow_id) WHERE managed DO UPDATE
            SET status = 'active', channel = EXCLUDED.channel, configuration = EXCLUDED.configuration, updated_at = now(),
                activated_at = CASE WHEN triggers.status = 'active' THEN triggers.activated_at ELSE now() END
            WHERE triggers.status <> 'active' OR triggers.channel IS DISTINCT FROM EXCLUDED.channel
               OR triggers.configuration <> EXCLUDED.configuration;
        ELSE
          UPDATE triggers SET status = 'inactive', deactivated_at = now(), updated_at = now()
           WHERE workflow_id = NEW.id AND managed AND status <> 'inactive';
        END IF;
        RETURN NULL;
      END $$`);
    // Only where a message configuration.trigger is or was involved: a bulk insert of workflows
    // without one, and the firings' and runs' counter updates, do not call the function at all.
    await q.query(`
      CREATE TRIGGER workflows_message_trigger_insert AFTER INSERT ON workflows
        FOR EACH ROW WHEN (NEW.status = 'active' AND NEW.configuration -> 'trigger' ->> 'type' = 'message')
        EXECUTE FUNCTION workflow_message_trigger_sync()`);
    await q.query(`
      CREATE TRIGGER workflows_message_trigger_update AFTER UPDATE OF status, configuration, channel ON workflows
        FOR EACH ROW WHEN ((OLD.configuration -> 'trigger' ->> 'type' = 'message' OR NEW.configuration -> 'trigger' ->> 'type' = 'message')
                           AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.channel IS DISTINCT FROM NEW.channel
                                OR OLD.configuration -> 'trigger' IS DISTINCT FROM NEW.configuration -> 'trigger'))
        EXECUTE FUNCTION workflow_message_trigger_sync()`);
    // Workflows active before this release start from their configuration.trigger too.
    await q.query(`
      INSERT INTO triggers (organization_id, workflow_id, name, type, status, channel, configuration, managed, activated_at)
      SELECT organization_id, id, 'configuration.trigger of workflow ' || id, 'message', 'active', channel,
             jsonb_build_object('keywords', configuration -> 'trigger' -> 'keywords', 'case_sensitive', false, 'exact_match', false,
                                'language', NULL, 'channel', NULL),
             true, now()
        FROM workflows
       WHERE status = 'active' AND configuration -> 'trigger' ->> 'type' = 'message'
         AND jsonb_typeof(configuration -> 'trigger' -> 'keywords') = 'array' AND jsonb_array_length(configuration -> 'trigger' -> 'keywords') > 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER workflows_message_trigger_update ON workflows`);
    await q.query(`DROP TRIGGER workflows_message_trigger_insert ON workflows`);
    await q.query(`DROP FUNCTION workflow_message_trigger_sync()`);
    await q.query(`DELETE FROM triggers WHERE managed`);
    await q.query(`DROP INDEX uq_triggers_workflow_managed`);
    await q.query(`DROP INDEX uq_triggers_org_name`);
    await q.query(`CREATE UNIQUE INDEX uq_triggers_org_name ON triggers (organization_id, name)`);
    await q.query(`ALTER TABLE triggers DROP COLUMN managed`);
  }
}
