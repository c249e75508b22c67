/**
 * SQL fragments of the outbox (events module), for the statements of other modules that record
 * their events in the statement that makes the change (docs/ARCHITECTURE.md, "One inbound message, end to end").
 *
 * An event is written only when an active webhook of its organization subscribes to its type at that
 * moment (docs/DECISIONS.md, "Events nobody subscribes to are not written"): the outbox exists to feed
 * webhook deliveries, and an organization without a matching subscription would have each event
 * inserted, marked published and purged for nothing.
 */
import { activeSubscriber } from '../webhooks/webhooks.sql.js';

/**
 * Inserts the events of `events`, a query of (organization_id, type, data) rows (a UNION ALL of
 * several is fine), keeping those some active webhook subscribes to.
 */
export function insertOutboxEvents(events: string): string {
  return `INSERT INTO outbox_events (organization_id, type, data)
    SELECT ev.organization_id, ev.type, ev.data FROM (${events}) AS ev(organization_id, type, data)
     WHERE ${activeSubscriber('ev.organization_id', 'ev.type')}`;
}

/**
 * The same with the W3C `traceparent` of the span that caused the events (NULL with traces off), which
 * their webhook deliveries send on (the run's commit, RunsRepository): `events` is a query of
 * (organization_id, type, data, traceparent) rows.
 */
export function insertOutboxEventsTraced(events: string): string {
  return `INSERT INTO outbox_events (organization_id, type, data, traceparent)
    SELECT ev.organization_id, ev.type, ev.data, ev.traceparent FROM (${events}) AS ev(organization_id, type, data, traceparent)
     WHERE ${activeSubscriber('ev.organization_id', 'ev.type')}`;
}

/**
 * Seconds since the oldest unpublished event was written (null when none): the relay's lag, read at
 * scrape time (`/metrics`). One probe of the partial index of unpublished events (idx_outbox_events_unpublished).
 */
export const OUTBOX_LAG_SECONDS = `SELECT EXTRACT(EPOCH FROM clock_timestamp() - min(occurred_at))::float8 FROM outbox_events WHERE published_at IS NULL`;
