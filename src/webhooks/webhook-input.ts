import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { EVENT_TYPES } from '../events/event-types.js';
import { InvalidRequestError } from '../common/errors/common.errors.js';
import { InvalidEventTypesError, InvalidRetryPolicyError, InvalidWebhookUrlError } from './webhooks.errors.js';

/**
 * The rules of a webhook's fields (docs/API.md, "Outbound webhooks"), as pure functions: the DTOs only check that
 * the property is present, so that each rule fails with its own code and `field`.
 */

export const URL_MAX_LENGTH = 2048;
export const RETRY_BOUNDS = { max_retries: [0, 10], retry_delay_ms: [100, 30_000] } as const;
export const DEFAULT_RETRY_POLICY = { max_retries: 3, retry_delay_ms: 1000 } as const;
export interface RetryPolicy {
  max_retries: number;
  retry_delay_ms: number;
}

/** A host name of letters, digits and hyphens in dot-separated labels, with at least one dot or a known single label. */
const HOST_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** The normalised URL (WHATWG parsing: `127.1` and `0x7f.0.0.1` become 127.0.0.1), or 400 INVALID_WEBHOOK_URL. */
export function parseWebhookUrl(value: unknown): URL {
  if (typeof value !== 'string' || value.trim() === '') throw new InvalidWebhookUrlError('url must be an HTTPS URL');
  if (value.length > URL_MAX_LENGTH) throw new InvalidWebhookUrlError(`url must be at most ${URL_MAX_LENGTH} characters long`);
  if (/[\s\u0000-\u001f\u007f]/.test(value)) throw new InvalidWebhookUrlError('url must not contain spaces or control characters');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidWebhookUrlError('url is not a valid URL');
  }
  if (url.protocol !== 'https:') throw new InvalidWebhookUrlError('url must use https');
  if (url.username !== '' || url.password !== '') throw new InvalidWebhookUrlError('url must not contain credentials');
  if (url.hash !== '' || value.includes('#')) throw new InvalidWebhookUrlError('url must not contain a fragment');
  const host = url.hostname;
  const literal = host.startsWith('[') ? host.slice(1, -1) : host;
  if (isIP(literal) === 0) {
    const labels = host.replace(/\.$/, '').split('.');
    if (host.length > 253 || labels.some((l) => !HOST_LABEL.test(l)) || /^[0-9]+$/.test(labels[labels.length - 1] as string)) {
      throw new InvalidWebhookUrlError('url must name a real host name or an IP address');
    }
  }
  if (url.href.length > URL_MAX_LENGTH) throw new InvalidWebhookUrlError(`url must be at most ${URL_MAX_LENGTH} characters long`);
  return url;
}

const GROUPS = new Set(EVENT_TYPES.map((t) => t.split('.')[0] as string));

/** Non-empty array of known types, `<group>.*` wildcards or `*`; stored as given (duplicates dropped). */
export function parseEventTypes(value: unknown, field = 'events'): string[] {
  if (!Array.isArray(value)) throw new InvalidEventTypesError(`${field} must be an array of event types`, field);
  if (value.length === 0) throw new InvalidEventTypesError(`${field} must name at least one event type`, field);
  if (value.length > 50) throw new InvalidEventTypesError(`${field} must have at most 50 entries`, field);
  value.forEach((type, i) => {
    if (typeof type !== 'string') throw new InvalidEventTypesError(`${field}[${i}] must be a string`, `${field}[${i}]`);
    if (!isEventPattern(type)) {
      throw new InvalidEventTypesError(`${field}[${i}] is not a known event type (${EVENT_TYPES.join(', ')}, a group wildcard such as workflow.*, or *)`, `${field}[${i}]`);
    }
  });
  return [...new Set(value as string[])];
}

export function isEventPattern(type: string): boolean {
  if (type === '*') return true;
  if ((EVENT_TYPES as readonly string[]).includes(type)) return true;
  return type.endsWith('.*') && GROUPS.has(type.slice(0, -2));
}

/** Whether a subscription pattern matches an event type (the relay matches the same way in SQL). */
export function eventMatches(pattern: string, type: string): boolean {
  return pattern === '*' || pattern === type || (pattern.endsWith('.*') && type.startsWith(pattern.slice(0, -1)));
}

/** A full or partial policy; omitted keys come from `base`. Integers within the policy's bounds (max_retries 0..10, retry_delay_ms 100..30000), no other keys. */
export function parseRetryPolicy(value: unknown, base: RetryPolicy = DEFAULT_RETRY_POLICY): RetryPolicy {
  if (value === undefined) return { ...base };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InvalidRetryPolicyError('retry_policy must be an object {max_retries, retry_delay_ms}');
  const input = value as Record<string, unknown>;
  for (const key of Object.keys(input)) {
    if (!(key in RETRY_BOUNDS)) throw new InvalidRetryPolicyError(`retry_policy.${key} is not a retry policy field`, `retry_policy.${key}`);
  }
  const policy = { ...base };
  for (const key of Object.keys(RETRY_BOUNDS) as (keyof RetryPolicy)[]) {
    const v = input[key];
    if (v === undefined) continue;
    const [min, max] = RETRY_BOUNDS[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      throw new InvalidRetryPolicyError(`retry_policy.${key} must be an integer from ${min} to ${max}`, `retry_policy.${key}`);
    }
    policy[key] = v;
  }
  return policy;
}

const WHSEC = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

/** A client's secret: 16..256 printable ASCII characters; a `whsec_` one must carry base64 of 24..64 bytes. */
export function parseSecret(value: unknown): string {
  if (typeof value !== 'string' || !/^[\x21-\x7e]{16,256}$/.test(value)) {
    throw new InvalidRequestError('secret must be 16 to 256 printable ASCII characters without spaces', 'secret');
  }
  if (value.startsWith('whsec_')) {
    const match = WHSEC.exec(value);
    const bytes = match ? Buffer.from(match[1] as string, 'base64') : Buffer.alloc(0);
    if (!match || bytes.length < 24 || bytes.length > 64 || bytes.toString('base64').replace(/=+$/, '') !== (match[1] as string).replace(/=+$/, '')) {
      throw new InvalidRequestError('a secret starting with whsec_ must continue with the base64 of 24 to 64 bytes', 'secret');
    }
  }
  return value;
}

/** `whsec_` + base64 of 32 random bytes, the Standard Webhooks form. */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
