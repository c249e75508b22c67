import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Delivery figures of a year without reading a year of sends. Each send records its channel and the
 * start of the execution that sent it, so that its figures fall in the same hour as the execution's
 * other figures (analytics and reports count an execution in the hour it started). `workflow_delivery_hours`
 * counts, per workflow, UTC hour of that start and channel, the sends that settled (accepted by the
 * provider, or failed), those delivered (delivered or read) and those read. Kept by statement triggers
 * on `message_deliveries` from the rows' old and new states (any change, in any order, adds up to the
 * rows), on UPDATE and DELETE only (a send settles when it gets `sent_at` or `failed_at`): a send is
 * inserted queued, which counts nothing, so the run commit that inserts it pays no trigger. Analytics read whole hours here and the partial hours at the
 * period's ends from the sends, by the (workflow_id, started_at) index.
 */
export class DeliveryRollups1770400000000 implements MigrationInterface {
  name = 'DeliveryRollups1770400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE message_deliveries ADD COLUMN channel varchar(32) NOT NULL DEFAULT 'unknown', ADD COLUMN started_at timestamptz`);
    await q.query(`UPDATE message_deliveries SET started_at = queued_at WHERE started_at IS NULL`);
    await q.query(`ALTER TABLE message_deliveries ALTER COLUMN started_at SET NOT NULL`);
    await q.query(`
      CREATE TABLE workflow_delivery_hours (
        organization_id uuid NOT NULL,
        workflow_id uuid NOT NULL,
        hour timestamptz NOT NULL,
        channel varchar(32) NOT NULL,
        concluded int NOT NULL DEFAULT 0,
        delivered int NOT NULL DEFAULT 0,
        read int NOT NULL DEFAULT 0,
        PRIMARY KEY (workflow_id, hour, channel)
      )`);
    await q.query(`CREATE INDEX idx_message_deliveries_workflow_started ON message_deliveries (workflow_id, started_at) WHERE workflow_id IS NOT NULL`);
    for (const [name, source] of [
      ['message_deliveries_rollup_update', `${COUNTS('new_rows', '1')} UNION ALL ${COUNTS('old_rows', '-1')}`],
      ['message_deliveries_rollup_delete', COUNTS('old_rows', '-1')],
    ] as const) {
      await q.query(`
        CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $fn$
        BEGIN
          INSERT INTO workflow_delivery_hours AS r (organization_id, workflow_id, hour, channel, concluded, delivered, read)
          SELECT organization_id, workflow_id, hour, channel, sum(concluded)::int, sum(delivered)::int, sum(read)::int
            FROM (${source}) c
           GROUP BY organization_id, workflow_id, hour, channel
          HAVING sum(concluded) <> 0 OR sum(delivered) <> 0 OR sum(read) <> 0
           -- One order for every statement: two never wait on each other's rows in opposite orders.
           ORDER BY workflow_id, hour, channel
          ON CONFLICT (workflow_id, hour, channel) DO UPDATE
             SET concluded = r.concluded + EXCLUDED.concluded, delivered = r.delivered + EXCLUDED.delivered, read = r.read + EXCLUDED.read;
          RETURN NULL;
        END
        $fn$`);
    }
    await q.query(`
      CREATE TRIGGER message_deliveries_rollup_update AFTER UPDATE ON message_deliveries
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION message_deliveries_rollup_update()`);
    await q.query(`
      CREATE TRIGGER message_deliveries_rollup_delete AFTER DELETE ON message_deliveries
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION message_deliveries_rollup_delete()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER message_deliveries_rollup_update ON message_deliveries`);
    await q.query(`DROP TRIGGER message_deliveries_rollup_delete ON message_deliveries`);
    await q.query(`DROP FUNCTION message_deliveries_rollup_update()`);
    await q.query(`DROP FUNCTION message_deliveries_rollup_delete()`);
    await q.query(`DROP INDEX idx_message_deliveries_workflow_started`);
    await q.query(`DROP TABLE workflow_delivery_hours`);
    await q.query(`ALTER TABLE message_deliveries DROP COLUMN channel, DROP COLUMN started_at`);
  }
}

/** What each row of a transition table counts, times `sign`. */
function COUNTS(table: string, sign: string): string {
  return `SELECT t.organization_id, t.workflow_id, date_trunc('hour', t.started_at, 'UTC') AS hour, t.channel,
                 ${sign} * (t.sent_at IS NOT NULL OR t.failed_at IS NOT NULL)::int AS concluded,
                 ${sign} * (t.delivered_at IS NOT NULL)::int AS delivered,
                 ${sign} * (t.read_at IS NOT NULL)::int AS read
            FROM ${table} t WHERE t.workflow_id IS NOT NULL`;
}
