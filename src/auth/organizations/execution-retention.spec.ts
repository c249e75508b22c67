import { describe, expect, it } from 'vitest';
import { formatExecutionRetention, parseExecutionRetention } from './execution-retention.js';

describe('an organization execution retention as written and shown', () => {
  it('reads off, default and durations of at least a day; refuses the rest', () => {
    expect(parseExecutionRetention('off')).toBe(0);
    expect(parseExecutionRetention('default')).toBeNull();
    expect(parseExecutionRetention('30d')).toBe(30 * 86_400_000);
    expect(parseExecutionRetention('24h')).toBe(86_400_000);
    for (const bad of ['23h', '0d', '-1d', '30 d', '1w', '', 'OFF']) expect(parseExecutionRetention(bad), bad).toBeUndefined();
  });

  it('shows the stored milliseconds in the largest whole unit, off, or null for the service setting', () => {
    expect(formatExecutionRetention(null)).toBeNull();
    expect(formatExecutionRetention('0')).toBe('off');
    expect(formatExecutionRetention(String(30 * 86_400_000))).toBe('30d');
    expect(formatExecutionRetention(String(36 * 3_600_000))).toBe('36h');
    expect(formatExecutionRetention(String(86_400_000 + 1))).toBe('86400001ms');
  });
});
