import { describe, expect, it } from 'vitest';
import { splitDays } from './analytics.repository.js';

const d = (iso: string) => new Date(iso);

describe('splitDays (what /performance reads from the day rollups)', () => {
  it('takes every UTC day whose first and last millisecond are in the period', () => {
    expect(splitDays(d('2025-07-01T00:00:00.000Z'), d('2025-07-03T23:59:59.999Z'))).toEqual({
      daysFrom: d('2025-07-01T00:00:00.000Z'),
      daysTo: d('2025-07-04T00:00:00.000Z'),
    });
    // One millisecond short of the last day: that day is read raw.
    expect(splitDays(d('2025-07-01T00:00:00.000Z'), d('2025-07-03T23:59:59.998Z')).daysTo).toEqual(d('2025-07-03T00:00:00.000Z'));
  });

  it('leaves the partial UTC days of a local period (Tokyo 07-02..07-03) to the executions', () => {
    expect(splitDays(d('2025-07-01T15:00:00.000Z'), d('2025-07-03T14:59:59.999Z'))).toEqual({
      daysFrom: d('2025-07-02T00:00:00.000Z'),
      daysTo: d('2025-07-03T00:00:00.000Z'),
    });
  });

  it('reads a period without a whole UTC day entirely raw (an empty day range at its start)', () => {
    const start = d('2025-07-01T05:00:00.000Z');
    expect(splitDays(start, d('2025-07-02T04:59:59.999Z'))).toEqual({ daysFrom: start, daysTo: start });
    expect(splitDays(start, d('2025-07-01T06:00:00.000Z'))).toEqual({ daysFrom: start, daysTo: start });
  });
});
