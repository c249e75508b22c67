/**
 * The version of an organization's workflows (migration ListsWorkflowsVersion), as text:
 * `organization` is an expression of its id. For the workflows list's statements, which cache
 * their counts at that version (WorkflowsRepository).
 */
export function workflowsVersionOf(organization: string): string {
  return `(SELECT workflows_version FROM organizations WHERE id = ${organization})::text`;
}

/** How many workflows the organization has (kept by the workflows table's row triggers, migration WorkflowCounts). */
export function workflowCountOf(organization: string): string {
  return `SELECT workflow_count AS total FROM organizations WHERE id = ${organization}`;
}

/**
 * Each organization's execution data retention in force (migration ExecutionRetention), as a subquery of
 * `(organization_id, retention_ms)`: its override, else the service's EXECUTION_RETENTION (`serviceMs`, a
 * bigint parameter or NULL); NULL when it keeps everything. For the executions module's retention pass.
 */
export function executionRetentionsSql(serviceMs: string): string {
  return `SELECT id AS organization_id, CASE WHEN execution_retention_ms IS NULL THEN ${serviceMs}::bigint ELSE NULLIF(execution_retention_ms, 0) END AS retention_ms FROM organizations`;
}
