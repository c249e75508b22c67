/**
 * SQL fragments of the webhooks module, for the statements of other modules (the outbox's write filter,
 * src/events/outbox.sql.ts) and its own relay.
 */

/**
 * Whether webhook `w` subscribes to event type `type` (SQL expressions): the exact type, its group
 * (`message.*`) or `*`.
 */
export function subscribes(w: string, type: string): string {
  return `(${type} = ANY (${w}.events) OR '*' = ANY (${w}.events) OR split_part(${type}, '.', 1) || '.*' = ANY (${w}.events))`;
}

/**
 * True when an active webhook of the organization subscribes to the type, NULL otherwise. A scalar
 * subquery with LIMIT, not EXISTS, so that it stays one probe of the partial index of active webhooks
 * (idx_webhooks_org_active) per row: an EXISTS becomes a semi-join that a cached plan could turn into
 * a scan of every organization's webhooks.
 */
export function activeSubscriber(organizationId: string, type: string): string {
  return `(SELECT true FROM webhooks w WHERE w.organization_id = ${organizationId} AND w.active AND ${subscribes('w', type)} LIMIT 1)`;
}
