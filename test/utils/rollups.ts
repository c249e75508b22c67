import type { DataSource } from 'typeorm';
import { expect } from 'vitest';

/**
 * Folds the execution change logs into the rollups (migration RollupFolding), as every reader of
 * the rollups does before it reads: what follows compares the rollups with every committed row.
 */
export async function foldRollups(ds: DataSource): Promise<void> {
  await ds.query('SELECT rollups_fold(1000000)');
}

/**
 * The hourly rollups of an organization (migration ExecutionRollups) against what its recorded
 * rows say, row by row: counts, duration sums, message counts and customer sets per hour. Rows
 * left at zero by deletions are ignored (a bucket shows only with executions). With `days`
 * (migration MetricsCustomerSketches), the day rows too, and the customer checksums of both.
 */
export async function expectRollupsMatchRows(ds: DataSource, organizationId: string, { days = true } = {}): Promise<void> {
  await foldRollups(ds);
  if (days) {
    for (const unit of ['hour', 'day'] as const) await expectGrainMatchesRows(ds, organizationId, unit);
  }
  const hour = (column: string) => `date_trunc('hour', ${column}, 'UTC')`;
  const sorted = async (sql: string) => ds.query(`${sql} ORDER BY 1, 2, 3`, [organizationId]);

  const workflowRollup = await sorted(
    `SELECT workflow_id, hour, channel, executions, successful, failed, duration_sum::bigint::text AS duration_sum, messages_sent, messages_received
       FROM workflow_execution_hours WHERE organization_id = $1 AND (executions <> 0 OR messages_sent <> 0 OR messages_received <> 0)`,
  );
  const workflowRows = await sorted(
    `SELECT e.workflow_id, ${hour('e.started_at')} AS hour, COALESCE(e.channel, 'unknown') AS channel, count(*)::int AS executions,
            (count(*) FILTER (WHERE status = 'success'))::int AS successful, (count(*) FILTER (WHERE status = 'failed'))::int AS failed,
            COALESCE(sum(duration_ms) FILTER (WHERE status <> 'running'), 0)::bigint::text AS duration_sum,
            COALESCE(sum(m.sent), 0)::int AS messages_sent, COALESCE(sum(m.received), 0)::int AS messages_received
       FROM workflow_executions e
       LEFT JOIN (SELECT execution_id, count(*) FILTER (WHERE direction = 'outbound') AS sent, count(*) FILTER (WHERE direction = 'inbound') AS received
                    FROM messages GROUP BY execution_id) m ON m.execution_id = e.id
      WHERE e.organization_id = $1 GROUP BY 1, 2, 3`,
  );
  expect(workflowRollup).toEqual(workflowRows);

  const triggerRollup = await sorted(
    `SELECT trigger_id, hour, channel, workflow_id, executions, successful, failed, duration_sum::bigint::text AS duration_sum
       FROM trigger_execution_hours WHERE organization_id = $1 AND executions <> 0`,
  );
  const triggerRows = await sorted(
    `SELECT trigger_id, ${hour('triggered_at')} AS hour, COALESCE(input->>'channel', 'unknown') AS channel, workflow_id, count(*)::int AS executions,
            (count(*) FILTER (WHERE status = 'success'))::int AS successful, (count(*) FILTER (WHERE status = 'failed'))::int AS failed,
            COALESCE(sum(duration_ms) FILTER (WHERE status <> 'running'), 0)::bigint::text AS duration_sum
       FROM trigger_executions WHERE organization_id = $1 GROUP BY 1, 2, 3, 4`,
  );
  expect(triggerRollup).toEqual(triggerRows);

  const customerSets = await sorted(
    `SELECT c.workflow_id, c.hour, c.customer, c.executions FROM workflow_customer_hours c JOIN workflows w ON w.id = c.workflow_id WHERE w.organization_id = $1`,
  );
  const customerRows = await sorted(
    `SELECT workflow_id, ${hour('started_at')} AS hour, customer_ref AS customer, count(*)::int AS executions
       FROM workflow_executions WHERE organization_id = $1 AND customer_ref IS NOT NULL GROUP BY 1, 2, 3`,
  );
  expect(customerSets).toEqual(customerRows);
}

const CHECKSUM = (customer: string) => `COALESCE(sum(hashtextextended(${customer}, 0) & 2147483647), 0)::bigint::text`;

/** The hour or day rows of both rollups (every column but the histogram) against the recorded rows, checksums included. */
async function expectGrainMatchesRows(ds: DataSource, organizationId: string, unit: 'hour' | 'day'): Promise<void> {
  const at = (column: string) => `date_trunc('${unit}', ${column}, 'UTC')`;
  const sorted = async (sql: string) => ds.query(`${sql} ORDER BY 1, 2, 3`, [organizationId]);
  const workflowRollup = await sorted(
    `SELECT workflow_id, ${unit} AS at, channel, executions, successful, failed, duration_sum::text AS duration_sum, messages_sent, messages_received,
            customer_checksum::text AS customer_checksum
       FROM workflow_execution_${unit}s WHERE organization_id = $1 AND (executions <> 0 OR messages_sent <> 0 OR messages_received <> 0)`,
  );
  const workflowRows = await sorted(
    `SELECT e.workflow_id, ${at('e.started_at')} AS at, COALESCE(e.channel, 'unknown') AS channel, count(*)::int AS executions,
            (count(*) FILTER (WHERE status = 'success'))::int AS successful, (count(*) FILTER (WHERE status = 'failed'))::int AS failed,
            COALESCE(sum(duration_ms) FILTER (WHERE status <> 'running'), 0)::bigint::text AS duration_sum,
            COALESCE(sum(m.sent), 0)::int AS messages_sent, COALESCE(sum(m.received), 0)::int AS messages_received,
            ${CHECKSUM('e.customer_ref')} AS customer_checksum
       FROM workflow_executions e
       LEFT JOIN (SELECT execution_id, count(*) FILTER (WHERE direction = 'outbound') AS sent, count(*) FILTER (WHERE direction = 'inbound') AS received
                    FROM messages GROUP BY execution_id) m ON m.execution_id = e.id
      WHERE e.organization_id = $1 GROUP BY 1, 2, 3`,
  );
  expect({ unit, rows: workflowRollup }).toEqual({ unit, rows: workflowRows });
  const triggerRollup = await sorted(
    `SELECT trigger_id, ${unit} AS at, channel, workflow_id, executions, successful, failed, duration_sum::text AS duration_sum, customer_checksum::text AS customer_checksum
       FROM trigger_execution_${unit}s WHERE organization_id = $1 AND executions <> 0`,
  );
  const triggerRows = await sorted(
    `SELECT trigger_id, ${at('triggered_at')} AS at, COALESCE(input->>'channel', 'unknown') AS channel, workflow_id, count(*)::int AS executions,
            (count(*) FILTER (WHERE status = 'success'))::int AS successful, (count(*) FILTER (WHERE status = 'failed'))::int AS failed,
            COALESCE(sum(duration_ms) FILTER (WHERE status <> 'running'), 0)::bigint::text AS duration_sum, ${CHECKSUM("input->>'customer_id'")} AS customer_checksum
       FROM trigger_executions WHERE organization_id = $1 GROUP BY 1, 2, 3, 4`,
  );
  expect({ unit, rows: triggerRollup }).toEqual({ unit, rows: triggerRows });
  // The histograms of the day rows add up those of their hours.
  const [{ n }] = await ds.query(
    `SELECT count(*)::int AS n FROM workflow_execution_days d
      WHERE d.organization_id = $1 AND d.duration_histogram IS DISTINCT FROM (
        SELECT rollup_histogram_sum(h.duration_histogram) FROM workflow_execution_hours h
         WHERE h.workflow_id = d.workflow_id AND h.channel = d.channel AND date_trunc('day', h.hour, 'UTC') = d.day)`,
    [organizationId],
  );
  expect(n).toBe(0);
}
