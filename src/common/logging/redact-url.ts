/**
 * Query parameters that carry a credential: their values never reach a log line. Matched on the
 * decoded name, case-insensitively, and on each part of a bracketed name (`api_key[]`,
 * `api_key[0]`, `filter[client_secret]`), so no spelling a query parser understands slips through.
 */
export const CREDENTIAL_QUERY_PARAMETERS: ReadonlySet<string> = new Set([
  'api_key',
  'apikey',
  'access_token',
  'token',
  'id_token',
  'client_secret',
  'refresh_token',
  'code',
  'code_verifier',
  'password',
  'secret',
]);

export const REDACTED = '[REDACTED]';

function decode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

function isCredentialName(rawName: string): boolean {
  return decode(rawName)
    .toLowerCase()
    .split(/[[\].]/)
    .some((part) => CREDENTIAL_QUERY_PARAMETERS.has(part.trim()));
}

/**
 * The URL (path and query, as a request carries it) with the value of every credential-bearing
 * query parameter replaced by `[REDACTED]`; the path and the other parameters are kept as sent.
 */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  if (start === -1) return url;
  const query = url.slice(start + 1);
  let changed = false;
  const parts = query.split('&').map((pair) => {
    const eq = pair.indexOf('=');
    const name = eq === -1 ? pair : pair.slice(0, eq);
    if (!isCredentialName(name)) return pair;
    changed = true;
    return `${name}=${REDACTED}`;
  });
  return changed ? `${url.slice(0, start)}?${parts.join('&')}` : url;
}
