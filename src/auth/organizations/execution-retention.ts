import { parseDuration } from '../../config/env.schema.js';

/** An organization's execution retention as written: `off` (keep everything), `default` (EXECUTION_RETENTION) or a duration of at least 1d. */
export function parseExecutionRetention(value: string): number | null | undefined {
  if (value === 'default') return null;
  if (value === 'off') return 0;
  if (!/^[1-9]\d*(ms|s|m|h|d)?$/.test(value)) return undefined;
  const ms = parseDuration(value);
  return ms >= 86_400_000 ? ms : undefined;
}

/** The stored override as a duration (`30d`), `off`, or null when the organization follows EXECUTION_RETENTION. */
export function formatExecutionRetention(stored: string | null): string | null {
  if (stored === null) return null;
  const ms = Number(stored);
  if (ms === 0) return 'off';
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
