/** The domain events of the specification; webhooks subscribe to these. */
export const EVENT_TYPES = [
  'workflow.started',
  'workflow.completed',
  'workflow.failed',
  'message.received',
  'message.sent',
  'message.delivered',
  'message.read',
  'message.failed',
  'trigger.activated',
  'customer.created',
  'customer.updated',
  'conversation.handoff_started',
  'conversation.handoff_ended',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * A domain event as the code records it. Events are written to `outbox_events` by the statement
 * that makes the change (inbound messages, firings, run commits), in its transaction.
 */
export interface DomainEvent {
  organizationId: string;
  type: EventType;
  data: Record<string, unknown>;
}
