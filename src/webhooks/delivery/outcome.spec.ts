import { describe, expect, it } from 'vitest';
import { outcomeOf, parseRetryAfter, retryDelayMs } from './outcome.js';

describe('outcomeOf', () => {
  const at = (statusCode: number | null) => outcomeOf({ statusCode, responseTimeMs: 1, error: null });
  it('follows the delivery rules of docs/API.md', () => {
    expect(at(200)).toBe('delivered');
    expect(at(204)).toBe('delivered');
    for (const code of [400, 401, 403, 404, 409, 410, 422, 301, 302]) expect(at(code)).toBe('failed');
    for (const code of [408, 429, 500, 502, 503]) expect(at(code)).toBe('retry');
    expect(at(null)).toBe('retry');
    expect(outcomeOf({ statusCode: null, responseTimeMs: 0, error: 'target address not allowed', refused: true })).toBe('failed');
  });
});

describe('retryDelayMs', () => {
  it('doubles from retry_delay_ms and caps at 30 s', () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, 1000))).toEqual([1000, 2000, 4000, 8000]);
    expect(retryDelayMs(10, 1000)).toBe(30_000);
    expect(retryDelayMs(1, 30_000)).toBe(30_000);
  });
  it('honours a larger Retry-After within the cap', () => {
    expect(retryDelayMs(1, 1000, 5000)).toBe(5000);
    expect(retryDelayMs(3, 1000, 2000)).toBe(4000);
    expect(retryDelayMs(1, 1000, 120_000)).toBe(30_000);
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP-dates', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});
