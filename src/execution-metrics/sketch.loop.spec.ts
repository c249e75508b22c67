import { describe, expect, it } from 'vitest';
import { closedMonths } from './sketch.loop.js';

const months = (...isos: string[]) => isos.map((iso) => new Date(iso));

describe('closedMonths', () => {
  it('lists the closed UTC months starting within the last days, newest first, never the current one', () => {
    expect(closedMonths(new Date('2026-11-27T10:00:00Z'), 31)).toEqual(months('2026-10-01T00:00:00Z'));
    // Early in a month the hourly pass covers the month before the last too (late folds).
    expect(closedMonths(new Date('2026-03-01T00:30:00Z'), 31)).toEqual(months('2026-02-01T00:00:00Z', '2026-01-01T00:00:00Z'));
    expect(closedMonths(new Date('2026-11-01T00:00:00Z'), 0)).toEqual([]);
  });

  it('covers every closed month a period of 366 days reaches', () => {
    const year = closedMonths(new Date('2026-11-27T10:00:00Z'), 366);
    expect(year[0]).toEqual(new Date('2026-10-01T00:00:00Z'));
    expect(year.at(-1)).toEqual(new Date('2025-11-01T00:00:00Z'));
    expect(year).toHaveLength(12);
  });
});
