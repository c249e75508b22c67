import type { DataSource } from 'typeorm';
import { expect } from 'vitest';
import { foldRollups } from './rollups.js';

/**
 * The performance rollups of an organization (migration PerformanceRollups) row by row against its
 * executions: finished executions with a duration per workflow, UTC day (and UTC month) and duration bucket, and
 * failed ones per workflow, UTC day and error code. Rows left at zero by deletions are ignored.
 */
export async function expectPerformanceRollupsMatchRows(ds: DataSource, organizationId: string): Promise<void> {
  await foldRollups(ds);
  const sorted = (sql: string) => ds.query(`${sql} ORDER BY 1, 2, 3`, [organizationId]);
  expect(await sorted(`SELECT workflow_id, day, bucket, executions FROM workflow_duration_days WHERE organization_id = $1 AND executions <> 0`)).toEqual(
    await sorted(
      `SELECT workflow_id, date_trunc('day', started_at, 'UTC') AS day, duration_bucket(duration_ms) AS bucket, count(*)::int AS executions
         FROM workflow_executions WHERE organization_id = $1 AND status <> 'running' AND duration_ms IS NOT NULL GROUP BY 1, 2, 3`,
    ),
  );
  expect(await sorted(`SELECT workflow_id, month, bucket, executions FROM workflow_duration_months WHERE organization_id = $1 AND executions <> 0`)).toEqual(
    await sorted(
      `SELECT workflow_id, date_trunc('month', started_at, 'UTC') AS month, duration_bucket(duration_ms) AS bucket, count(*)::int AS executions
         FROM workflow_executions WHERE organization_id = $1 AND status <> 'running' AND duration_ms IS NOT NULL GROUP BY 1, 2, 3`,
    ),
  );
  expect(await sorted(`SELECT workflow_id, day, code, failed FROM workflow_error_days WHERE organization_id = $1 AND failed <> 0`)).toEqual(
    await sorted(
      `SELECT workflow_id, date_trunc('day', started_at, 'UTC') AS day, COALESCE(error->>'code', 'UNKNOWN') AS code, count(*)::int AS failed
         FROM workflow_executions WHERE organization_id = $1 AND status = 'failed' GROUP BY 1, 2, 3`,
    ),
  );
}
