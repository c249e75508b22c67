const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are UUIDs; a malformed one can name no resource, so lookups answer not-found without a query. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
