/** The domain events of the specification; webhooks subscribe to these. */
export const EVENT_TYPES = [
  'workflow.started',
  'workflow.completed',
  'workflow.failed',
  'message.received',
  'message.sent',
  'trigger.activated',
  'customer.created',
  'customer.updated',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
