import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The rollups' trigger functions (migrations ExecutionRollups, PerformanceRollups, JourneyRollups,
 * EngagementRollups) plan their statements once per connection, often while a table is still
 * empty (a fresh database, the first statements after a deploy). Such a plan reads the table
 * sequentially, and PL/pgSQL keeps it: on the bench's fresh database each message then scanned
 * every session row (1.2 ms per statement and growing with the table), and the seed's second batch
 * of 100,000 executions ran for minutes instead of seconds. With sequential scans disabled inside
 * these functions their lookups go through the indexes they were written for, whatever the
 * statistics said when they were planned. (A join that has no index path still runs: the setting
 * only makes a scan the planner's last resort.) Each new trigger function on those tables needs the same setting
 * (in the migration that creates it); test/e2e/migrations.e2e-spec.ts fails until it has it.
 */
const FUNCTIONS = [
  // The hourly rollups' (migrations ExecutionRollups, MetricsCustomerSketches): the same trap.
  'workflow_execution_hours_maintain()',
  'trigger_execution_hours_maintain()',
  'workflow_execution_hours_messages()',
  'workflow_execution_hours_forget_messages()',
  // The analytics rollups'.
  'customer_sessions_maintain()',
  'execution_answers_executions()',
  'execution_answers_refresh(uuid[])',
  'execution_answers_steps()',
  'workflow_duration_days_maintain()',
  'workflow_node_days_forget_steps()',
  'workflow_node_days_maintain()',
  'workflow_outcome_days_maintain()',
];

export class TriggerPlans1768500000000 implements MigrationInterface {
  name = 'TriggerPlans1768500000000';

  async up(q: QueryRunner): Promise<void> {
    for (const fn of FUNCTIONS) await q.query(`ALTER FUNCTION ${fn} SET enable_seqscan = off`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const fn of FUNCTIONS) await q.query(`ALTER FUNCTION ${fn} RESET enable_seqscan`);
  }
}
