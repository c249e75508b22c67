/**
 * The one place timestamps are formatted for anything that leaves the service (API responses,
 * webhook payloads, export files): ISO 8601 in UTC with milliseconds, `2025-03-01T09:30:00.000Z`,
 * exactly as Date.prototype.toISOString() writes it. Text already in that form (a list row that
 * PostgreSQL formatted, see WorkflowsRepository) passes through. Called directly rather than left to
 * JSON.stringify, which reaches toISOString() through Date's generic toJSON, about three times slower.
 */
export function isoTime(value: Date | string): string {
  return typeof value === 'string' ? value : value.toISOString();
}

/** isoTime, keeping null (a timestamp not reached yet). */
export function isoTimeOrNull(value: Date | string | null): string | null {
  return value === null ? null : isoTime(value);
}

/**
 * The same text written by PostgreSQL, for a read that returns timestamps only to print them
 * (WorkflowsRepository's list rows): a page holds 80 timestamps, and parsing each into a Date only
 * to print it again cost the client more than PostgreSQL spends formatting them. Milliseconds are
 * truncated, as pg's Date parsing truncates them, so both paths write the same text.
 */
export function isoTimeSql(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
