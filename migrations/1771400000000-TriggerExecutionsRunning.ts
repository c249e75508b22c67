import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A partial index of the firings still running (`status = 'running'`), on every monthly partition of
 * `trigger_executions`. The retention pass asks of each month past retention whether it holds such a firing
 * before it drops the month; without the index that question read the month whole (about a second for eleven
 * months of a million firings a year). Its entries are the firings in flight only: a firing is inserted
 * running and leaves the index's predicate when it ends, so the table's other indexes already pay for the
 * same update (none of these updates is HOT: `status` is in `idx_trigger_executions_trigger_status_triggered`).
 * Built on the partitioned table, it is built on each partition in turn, each locked against writes while its
 * own index is built (a scan of its rows, keeping only the running ones).
 * Frozen: imports nothing from src/.
 */
export class TriggerExecutionsRunning1771400000000 implements MigrationInterface {
  name = 'TriggerExecutionsRunning1771400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX idx_trigger_executions_running ON trigger_executions (id) WHERE status = 'running'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX idx_trigger_executions_running`);
  }
}
