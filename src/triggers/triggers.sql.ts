/**
 * SQL fragments of the triggers table for the execution engine's hot statements, which touch
 * several modules' tables in one statement (docs/ARCHITECTURE.md, "Table ownership"). Owned here, so
 * that the table's columns are named in this module only.
 */

/**
 * Counts firings on their triggers: `counts` is a query of (trigger_id, started) rows, one per
 * trigger, in trigger id order so that two statements lock shared rows in the same order.
 * `= ANY (ARRAY[..])`: by primary key, never a hash join on a scan.
 */
export function countTriggerFirings(counts: string): string {
  return `UPDATE triggers t SET execution_count = t.execution_count + n.started, last_triggered = now()
      FROM (${counts}) n
     WHERE t.id = ANY (ARRAY[n.trigger_id])`;
}

/** Counts one refused firing on its trigger (`id`: the parameter holding the trigger's id). */
export function countRefusedFiring(id: string): string {
  return `UPDATE triggers SET execution_count = execution_count + 1, last_triggered = now() WHERE id = ${id}`;
}

/**
 * The organization's active message triggers (`organization`: an expression of its id), oldest
 * first, as one JSON array `triggers` of { id, organizationId, workflowId, status, channel,
 * configuration } (ActiveMessageTrigger): by the partial index idx_triggers_active_messages.
 * Workflows' managed triggers (their configuration.trigger) are among them.
 */
export function activeMessageTriggersOf(organization: string): string {
  return `SELECT json_agg(json_build_object('id', t.id, 'organizationId', t.organization_id, 'workflowId', t.workflow_id,
                                          'status', t.status, 'channel', t.channel, 'configuration', t.configuration)
                        ORDER BY t.created_at, t.id) AS triggers
          FROM triggers t
         WHERE t.organization_id = ${organization} AND t.type = 'message' AND t.status = 'active'`;
}
