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
