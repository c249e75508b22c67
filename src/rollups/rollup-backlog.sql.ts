/** The change logs the fold reads (src/rollups/README.md). */
export const CHANGE_LOGS = [
  'workflow_execution_changes',
  'trigger_execution_changes',
  'workflow_outcome_changes',
  'execution_step_changes',
  'message_changes',
  'message_delivery_changes',
] as const;

/**
 * Rows of each change log not folded yet (`log`, `rows`), read at scrape time (`/metrics`). An
 * estimate from the primary key: highest seq − lowest seq + 1, two probes of the index per log,
 * whatever the backlog (a count would read every row: a million at 1M). The fold deletes from the
 * lowest seq up, so what is left is one range; identity values skipped by rolled-back inserts make
 * it an upper bound.
 */
export const ROLLUP_BACKLOG = CHANGE_LOGS.map(
  (log) => `SELECT '${log}'::text AS log, COALESCE(max(seq) - min(seq) + 1, 0)::float8 AS rows FROM ${log}`,
).join('\n  UNION ALL ');
