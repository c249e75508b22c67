import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The folds plan their statements once per connection. A PL/pgSQL function's statements are cached plans of the
 * connection that runs it, and PostgreSQL plans a cached statement with its parameters' values for its first five
 * executions before it may keep a generic plan. The workers fold five times a second through any connection of
 * their pool (twenty), so a connection ran the fold about fifteen times a minute and planned its dozen statements at each
 * of its first five runs: about 12 ms of planning per fold in a service's first half-minute, a third of the fold's
 * time. Nothing in those statements depends on a value the planner could use (a batch size, arrays of keys; every
 * rollup is reached by its key), so each now keeps its generic plan from its first run.
 * Frozen: imports nothing from src/.
 */
export class RollupFoldGenericPlans1771500000000 implements MigrationInterface {
  name = 'RollupFoldGenericPlans1771500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER FUNCTION rollups_fold(int, boolean) SET plan_cache_mode = force_generic_plan`);
    await q.query(`ALTER FUNCTION delivery_rollups_fold(int, boolean) SET plan_cache_mode = force_generic_plan`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER FUNCTION rollups_fold(int, boolean) RESET plan_cache_mode`);
    await q.query(`ALTER FUNCTION delivery_rollups_fold(int, boolean) RESET plan_cache_mode`);
  }
}
