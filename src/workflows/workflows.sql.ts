/**
 * SQL fragments of the workflows table for the execution engine's hot statements, which touch
 * several modules' tables in one statement (docs/ARCHITECTURE.md, "Table ownership"). Owned here, so
 * that the table's columns are named in this module only.
 */

/** The workflow a firing starts (`id`: an expression of its id), by primary key: its organization, status, version and channel. */
export function workflowToFire(id: string): string {
  return `(SELECT organization_id, status, version, channel FROM workflows WHERE id = ${id} LIMIT 1)`;
}

/**
 * Counts started executions on their workflows: `counts` is a query of (workflow_id, started)
 * rows in workflow id order, so that two statements lock shared counter rows in the same order.
 * `= ANY (ARRAY[..])`: by primary key, never a hash join on a scan.
 */
export function countWorkflowStarts(counts: string): string {
  return `UPDATE workflows w SET execution_count = w.execution_count + n.started
      FROM (${counts}) n
     WHERE w.id = ANY (ARRAY[n.workflow_id])`;
}

/** Counts finished executions on their workflows: `counts` is a query of (workflow_id, succeeded, failed) rows, in workflow id order. */
export function countWorkflowOutcomes(counts: string): string {
  return `UPDATE workflows w
       SET success_count = w.success_count + f.succeeded, failure_count = w.failure_count + f.failed
      FROM (${counts}) f
     WHERE w.id = ANY (ARRAY[f.workflow_id])`;
}
