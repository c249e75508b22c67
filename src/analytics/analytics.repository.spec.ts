import { describe, expect, it } from 'vitest';
import { splitDays } from './analytics.repository.js';

const d = (iso: string) => new Date(iso);

describe('splitDays (what /performance reads from the day rollups)', () => {
  it('takes every UTC day whose first and last millisecond are in the period', () => {
    expect(splitDays(d('2025-07-01T00:00:00.000Z'), d('2025-07-03T23:59:59.999Z'))).toMatchObject({
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
      // No whole month: an empty month range.
      monthsFrom: d('2025-07-02T00:00:00.000Z'),
      monthsTo: d('2025-07-02T00:00:00.000Z'),
    });
  });

  it('reads a period without a whole UTC day entirely raw (an empty day range at its start)', () => {
    const start = d('2025-07-01T05:00:00.000Z');
    expect(splitDays(start, d('2025-07-02T04:59:59.999Z'))).toEqual({ daysFrom: start, daysTo: start, monthsFrom: start, monthsTo: start });
    expect(splitDays(start, d('2025-07-01T06:00:00.000Z'))).toEqual({ daysFrom: start, daysTo: start, monthsFrom: start, monthsTo: start });
  });

  it('takes the whole UTC months inside the whole days from the month rows', () => {
    // 365 days ending 2025-11-23T02:51: days 2024-11-24 .. 2025-11-22, months 2024-12 .. 2025-10.
    expect(splitDays(d('2024-11-23T02:51:00.000Z'), d('2025-11-23T02:51:00.000Z'))).toEqual({
      daysFrom: d('2024-11-24T00:00:00.000Z'),
      daysTo: d('2025-11-23T00:00:00.000Z'),
      monthsFrom: d('2024-12-01T00:00:00.000Z'),
      monthsTo: d('2025-11-01T00:00:00.000Z'),
    });
    // A UTC month exactly; Berlin's August (07-31 22:00Z .. 08-31 21:59Z) holds no whole UTC month.
    expect(splitDays(d('2025-08-01T00:00:00.000Z'), d('2025-08-31T23:59:59.999Z'))).toMatchObject({
      monthsFrom: d('2025-08-01T00:00:00.000Z'),
      monthsTo: d('2025-09-01T00:00:00.000Z'),
    });
    expect(splitDays(d('2025-07-31T22:00:00.000Z'), d('2025-08-31T21:59:59.999Z'))).toMatchObject({
      daysFrom: d('2025-08-01T00:00:00.000Z'),
      daysTo: d('2025-08-31T00:00:00.000Z'),
      monthsFrom: d('2025-08-01T00:00:00.000Z'),
      monthsTo: d('2025-08-01T00:00:00.000Z'),
    });
  });
});
