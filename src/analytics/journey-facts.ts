/**
 * What one execution and one step contribute to the journey and node figures, as SQL over a row
 * alias, for the raw reads of the partial days (journeys.repository.ts, analytics-sql.ts). The rollup
 * triggers (migration 1768100000000-JourneyRollups) hold a frozen copy of the same definitions, so
 * that both give the same numbers (test/e2e/journey-rollups.e2e-spec.ts compares them). Changing a
 * definition here needs a new migration that rebuilds the rollups with the new one.
 *
 * An execution's *outcome* (docs/DECISIONS.md "Analytics", "Journeys and node figures"):
 * - `status` as recorded;
 * - `stop_node`: where a failed execution stopped (the error's `node_id`, else its cursor) or where a
 *   running one waits (its cursor, when `waiting`); '' = none known (then the entry node is meant);
 *   '' for successes and for running executions that are not waiting;
 * - `code`: a failed execution's error code (`UNKNOWN` without one), else '';
 * - `waits`: it reached its stop node without a step there — it is waiting there for the customer
 *   (running and `waiting`), or failed because the customer did not reply in time there
 *   (CONVERSATION_TIMEOUT). The engine writes a step when a node finishes, never for a node that
 *   is waiting: every other failure has recorded its failed step at the node.
 */
export const OUTCOME_KEY_COLUMNS = ['status', 'stop_node', 'code', 'waits'] as const;

export function outcomeFacts(r: string): string {
  return `${r}.status::text AS status,
    (CASE WHEN ${r}.status = 'failed' THEN COALESCE(${r}.error->>'node_id', ${r}.state->>'cursor', '')
          WHEN ${r}.status = 'running' AND ${r}.waiting THEN COALESCE(${r}.state->>'cursor', '')
          ELSE '' END)::text AS stop_node,
    (CASE WHEN ${r}.status = 'failed' THEN COALESCE(${r}.error->>'code', 'UNKNOWN') ELSE '' END)::text AS code,
    ((${r}.status = 'running' AND ${r}.waiting) OR (${r}.status = 'failed' AND ${r}.error->>'code' IS NOT DISTINCT FROM 'CONVERSATION_TIMEOUT')) AS waits`;
}

/** The columns of an execution row whose change changes its outcome row (or moves its steps' rows). */
export function outcomeCounted(r: string): string {
  return `(${r}.workflow_id, ${r}.organization_id, ${r}.started_at, ${r}.status, ${r}.waiting, ${r}.error->>'node_id', ${r}.error->>'code', ${r}.state->>'cursor', ${r}.duration_ms)`;
}

/** The UTC day an execution (and so each of its steps) is counted in: the day it started. */
export function dayOf(r: string): string {
  return `date_trunc('day', ${r}.started_at, 'UTC')`;
}

/** The counted columns of a step row. */
export function stepCounted(r: string): string {
  return `(${r}.execution_id, ${r}.node_id, ${r}.type, ${r}.status, ${r}.duration_ms)`;
}
