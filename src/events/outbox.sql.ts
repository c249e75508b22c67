/**
 * SQL fragments of the outbox (events module), for the statements of other modules that record
 * their events in the statement that makes the change (docs/ARCHITECTURE.md, "One inbound message, end to end"): followed by a SELECT of
 * (organization_id, type, data).
 */
export const INSERT_OUTBOX_EVENTS = 'INSERT INTO outbox_events (organization_id, type, data)';

/**
 * The same with the W3C `traceparent` of the span that caused the events (NULL with traces off), which
 * their webhook deliveries send on (the run's commit, RunsRepository): followed by a SELECT of
 * (organization_id, type, data, traceparent).
 */
export const INSERT_OUTBOX_EVENTS_TRACED = 'INSERT INTO outbox_events (organization_id, type, data, traceparent)';

/**
 * Seconds since the oldest unpublished event was written (null when none): the relay's lag, read at
 * scrape time (`/metrics`). One probe of the partial index of unpublished events (idx_outbox_events_unpublished).
 */
export const OUTBOX_LAG_SECONDS = `SELECT EXTRACT(EPOCH FROM clock_timestamp() - min(occurred_at))::float8 FROM outbox_events WHERE published_at IS NULL`;
