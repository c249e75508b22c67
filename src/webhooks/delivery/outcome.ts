/** What one attempt came to, before the retry rules decide. */
export interface AttemptResult {
  /** null when no HTTP answer came. */
  statusCode: number | null;
  responseTimeMs: number;
  /** null when delivered; a short reason otherwise. */
  error: string | null;
  /** The receiver's Retry-After, in milliseconds, when it sent one. */
  retryAfterMs?: number;
  /** The target resolved to an address deliveries may not reach: failed, never retried. */
  refused?: boolean;
  /** No answer within the delivery timeout (statusCode null). */
  timedOut?: boolean;
}

export const MAX_RETRY_DELAY_MS = 30_000;

export type Outcome = 'delivered' | 'retry' | 'failed';

/**
 * docs/API.md, "Outbound webhooks": 2xx delivered; 408, 429, 5xx, timeouts and network errors retried; every other answer
 * (other 4xx, 3xx since redirects are not followed, 1xx) failed without retry; refused targets failed.
 */
export function outcomeOf(result: AttemptResult): Outcome {
  if (result.refused) return 'failed';
  const code = result.statusCode;
  if (code === null) return 'retry';
  if (code >= 200 && code < 300) return 'delivered';
  if (code === 408 || code === 429 || code >= 500) return 'retry';
  return 'failed';
}

/** Delay before retry n (1-based): min(retry_delay_ms × 2^(n−1), 30000), or Retry-After when larger (still ≤ 30000). */
export function retryDelayMs(retry: number, retryDelay: number, retryAfterMs?: number): number {
  const backoff = Math.min(retryDelay * 2 ** (retry - 1), MAX_RETRY_DELAY_MS);
  return Math.min(Math.max(backoff, retryAfterMs ?? 0), MAX_RETRY_DELAY_MS);
}

/** Retry-After as delta-seconds or an HTTP-date, in milliseconds from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (/^\d{1,10}$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at) || !/[a-z]/i.test(trimmed)) return undefined;
  return Math.max(0, at - now);
}
