import type { DataSource } from 'typeorm';
import { expect } from 'vitest';
import { outcomeFacts } from '../../src/analytics/journey-facts.js';
import { foldRollups } from './rollups.js';

/**
 * The journey rollups of an organization (migration JourneyRollups) against what its recorded
 * executions and steps say, row by row: outcomes per workflow, UTC start day, status, stop node,
 * code and wait; steps per workflow, day, node and type. Rows left at zero by deletions are
 * ignored. Returns how many executions and steps the rows hold (so a caller can tell it compared something).
 */
export async function expectJourneyRollupsMatchRows(ds: DataSource, organizationId: string): Promise<{ executions: number; steps: number }> {
  await foldRollups(ds);
  const sorted = (sql: string) => ds.query(`${sql} ORDER BY 1, 2, 3, 4, 5, 6`, [organizationId]);
  const outcomeRollup = await sorted(
    `SELECT workflow_id, day, status, stop_node, code, waits, executions, duration_sum::text AS duration_sum, timed
       FROM workflow_outcome_days WHERE organization_id = $1 AND (executions <> 0 OR duration_sum <> 0 OR timed <> 0)`,
  );
  const outcomeRows = await sorted(
    `SELECT workflow_id, day, status, stop_node, code, waits, count(*)::int AS executions, COALESCE(sum(duration_ms), 0)::bigint::text AS duration_sum,
            count(duration_ms)::int AS timed
       FROM (SELECT we.workflow_id, date_trunc('day', we.started_at, 'UTC') AS day, ${outcomeFacts('we')}, we.duration_ms
               FROM workflow_executions we WHERE we.organization_id = $1) x
      GROUP BY 1, 2, 3, 4, 5, 6`,
  );
  expect({ rollup: 'workflow_outcome_days', rows: outcomeRollup }).toEqual({ rollup: 'workflow_outcome_days', rows: outcomeRows });
  const nodeRollup = await sorted(
    `SELECT workflow_id, day, node_id, type, steps, completed, failed, duration_sum::text AS duration_sum
       FROM workflow_node_days WHERE organization_id = $1 AND (steps <> 0 OR completed <> 0 OR failed <> 0 OR duration_sum <> 0)`,
  );
  const nodeRows = await sorted(
    `SELECT e.workflow_id, date_trunc('day', e.started_at, 'UTC') AS day, s.node_id, s.type, count(*)::int AS steps,
            (count(*) FILTER (WHERE s.status = 'completed'))::int AS completed, (count(*) FILTER (WHERE s.status = 'failed'))::int AS failed,
            sum(s.duration_ms)::bigint::text AS duration_sum
       FROM execution_steps s JOIN workflow_executions e ON e.id = s.execution_id WHERE e.organization_id = $1
      GROUP BY 1, 2, 3, 4`,
  );
  expect({ rollup: 'workflow_node_days', rows: nodeRollup }).toEqual({ rollup: 'workflow_node_days', rows: nodeRows });
  return {
    executions: outcomeRows.reduce((n: number, r: { executions: number }) => n + r.executions, 0),
    steps: nodeRows.reduce((n: number, r: { steps: number }) => n + r.steps, 0),
  };
}
