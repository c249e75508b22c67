import { counter, histogram, statusClass } from '../metrics/metric-factory.js';
import type { AttemptResult } from './delivery/outcome.js';

/** Attempts by outcome: delivered, retrying, failed (incl. refused targets). */
export const webhookAttempts = counter('webhook_delivery_attempts_total', 'Webhook delivery attempts by outcome', ['status']);
/** Attempt latency (request sent → answer or error). */
export const webhookAttemptSeconds = histogram('webhook_delivery_attempt_duration_seconds', 'Webhook attempt duration', [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);
/** Relay lag: event written to the outbox → first attempt. */
export const webhookRelayLagSeconds = histogram('webhook_relay_lag_seconds', 'From event written to first delivery attempt', [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]);
/** Outbox rows relayed, and deliveries they produced. */
export const outboxRelayed = counter('webhook_outbox_relayed_total', 'Outbox events marked published by the relay', []);
export const deliveriesCreated = counter('webhook_deliveries_created_total', 'Deliveries created by the relay', []);
/**
 * Attempts by what the receiver answered: 2xx, 3xx (redirects are not followed), 4xx, 5xx, timeout,
 * network (no connection, TLS, DNS), refused (the target resolved to an address deliveries may not reach).
 */
export const webhookResponses = counter('webhook_delivery_responses_total', 'Webhook delivery attempts by status class of the answer', ['class']);

export function countWebhookResponse(result: AttemptResult): void {
  webhookResponses.inc({ class: result.refused ? 'refused' : statusClass(result.statusCode, result.timedOut) });
}
