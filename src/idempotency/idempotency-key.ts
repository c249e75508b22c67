import { createHash } from 'node:crypto';
import type { Principal } from '../auth/access.js';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_KEY_PATTERN } from '../common/http/idempotency-headers.js';

/**
 * The header's value, or an explanation of why it is not a key. Absent: undefined. Sent twice
 * (Node joins repeated headers with ", "), the joined value is checked like any other.
 */
export function parseIdempotencyKey(value: string | string[] | undefined): { key?: string; problem?: string } {
  if (value === undefined) return {};
  const text = Array.isArray(value) ? value.join(', ') : value;
  if (!IDEMPOTENCY_KEY_PATTERN.test(text)) {
    return { problem: `${IDEMPOTENCY_KEY_HEADER} must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters` };
  }
  return { key: text };
}

/**
 * JSON with object keys sorted at every depth and no whitespace: two bodies that parse to the same
 * value have the same text, whatever their key order, spacing or escapes (`"\u0041"` is `"A"`,
 * `1.0` is `1`). Array order counts. A body that is not JSON (text) is itself; no body is ''.
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return '';
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
  return sorted;
}

export interface FingerprintInput {
  method: string;
  /** The request path without query string (`/v1/triggers/<id>/fire`). */
  path: string;
  /** Parsed query parameters. */
  query?: unknown;
  /** Parsed body (JSON value, or the text of a text body). */
  body?: unknown;
}

/**
 * What a repeat must match: method, path (a trailing slash ignored, as the router does), query and
 * body, the last two canonical (canonicalJson). SHA-256, hex.
 */
export function requestFingerprint(input: FingerprintInput): string {
  const path = input.path.length > 1 ? input.path.replace(/\/+$/, '') : input.path;
  const query = input.query && typeof input.query === 'object' && Object.keys(input.query).length === 0 ? undefined : input.query;
  return createHash('sha256')
    .update(`${input.method.toUpperCase()}\n${path}\n${canonicalJson(query)}\n`)
    .update(typeof input.body === 'string' ? `text:${input.body}` : `json:${canonicalJson(input.body)}`)
    .digest('hex');
}

/**
 * Whose key it is: the organization and the credential. An API key by its id; an OAuth client by its
 * id and the user who authorized it (its access tokens rotate every hour, a retry may carry the next
 * one); a JWT client by its application id (each JWT is short-lived). The client's key is hashed, so
 * that any printable character is safe in the Redis key and its length is fixed.
 */
export function idempotencyScope(principal: Principal, key: string): string[] {
  const credential = principal.userId ? `${principal.credentialId}/${principal.userId}` : principal.credentialId;
  return [principal.organizationId, principal.credentialType, credential, createHash('sha256').update(key).digest('hex')];
}
