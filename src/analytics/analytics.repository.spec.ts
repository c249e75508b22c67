import { describe, expect, it } from 'vitest';
import { rawSplit, splitDays } from './analytics.repository.js';

const at = (iso: string) => new Date(iso);

describe('splitDays: whole UTC days from the rollups, at most half a day of rows at each end', () => {
  it('adds the partial days nearer their inner midnight', () => {
    expect(splitDays(at('2025-03-02T17:17:00.000Z'), at('2025-03-08T03:44:59.123Z'))).toEqual({
      ranges: [
        { from: '2025-03-02T17:17:00.000000Z', to: '2025-03-03T00:00:00.000000Z', sign: 1 },
        // The end is inclusive to the millisecond: its exclusive bound is one microsecond later.
        { from: '2025-03-08T00:00:00.000000Z', to: '2025-03-08T03:44:59.123001Z', sign: 1 },
      ],
      daysFrom: '2025-03-03T00:00:00.000000Z',
      daysTo: '2025-03-08T00:00:00.000000Z',
    });
  });

  it('reads whole days and subtracts the rows outside the period when the ends are nearer their outer midnight', () => {
    expect(splitDays(at('2025-03-01T05:00:00.000Z'), at('2025-03-09T23:59:59.999Z'))).toEqual({
      ranges: [
        { from: '2025-03-01T00:00:00.000000Z', to: '2025-03-01T05:00:00.000000Z', sign: -1 },
        { from: '2025-03-09T23:59:59.999001Z', to: '2025-03-10T00:00:00.000000Z', sign: -1 },
      ],
      daysFrom: '2025-03-01T00:00:00.000000Z',
      daysTo: '2025-03-10T00:00:00.000000Z',
    });
  });

  it('midnight bounds leave empty ranges; a period within one UTC day is rows only', () => {
    expect(splitDays(at('2025-03-01T00:00:00.000Z'), at('2025-03-02T23:59:59.999Z'))).toMatchObject({
      ranges: [{ from: '2025-03-01T00:00:00.000000Z', to: '2025-03-01T00:00:00.000000Z' }, { from: '2025-03-02T23:59:59.999001Z', to: '2025-03-03T00:00:00.000000Z', sign: -1 }],
      daysFrom: '2025-03-01T00:00:00.000000Z',
      daysTo: '2025-03-03T00:00:00.000000Z',
    });
    const within = splitDays(at('2025-03-03T10:00:00.000Z'), at('2025-03-03T15:00:00.000Z'));
    expect(within).toEqual(rawSplit(at('2025-03-03T10:00:00.000Z'), at('2025-03-03T15:00:00.000Z')));
    expect(within.ranges[0]).toEqual({ from: '2025-03-03T10:00:00.000000Z', to: '2025-03-03T15:00:00.000001Z', sign: 1 });
    expect(within.daysFrom).toBe(within.daysTo);
  });
});
