import { describe, expect, it } from 'vitest';
import { hourSplit } from '../common/period-split.js';
import { wholeSpans } from './execution-metrics.repository.js';

const spans = (start: string, end: string, granularity: 'hour' | 'day' | 'week' | 'month') => {
  const w = wholeSpans(hourSplit(new Date(start), new Date(end)), granularity);
  return Object.fromEntries(Object.entries(w).map(([k, v]) => [k, v.toISOString()]));
};

describe('wholeSpans', () => {
  it('takes the whole UTC days inside the whole hours, and the whole months inside those', () => {
    expect(spans('2025-01-15T07:30:00Z', '2025-04-30T23:59:59.999Z', 'day')).toEqual({
      daysFrom: '2025-01-16T00:00:00.000Z',
      daysTo: '2025-04-30T00:00:00.000Z',
      monthsFrom: '2025-02-01T00:00:00.000Z',
      monthsTo: '2025-04-01T00:00:00.000Z',
    });
    // A period from a month's first midnight takes that month whole.
    expect(spans('2025-02-01T00:00:00Z', '2025-03-01T00:00:00Z', 'month')).toEqual({
      daysFrom: '2025-02-01T00:00:00.000Z',
      daysTo: '2025-03-01T00:00:00.000Z',
      monthsFrom: '2025-02-01T00:00:00.000Z',
      monthsTo: '2025-03-01T00:00:00.000Z',
    });
  });

  it('uses no month at week granularity (a week straddles months), and no day at hour granularity', () => {
    expect(spans('2025-01-01', '2025-06-30', 'week')).toEqual({
      daysFrom: '2025-01-01T00:00:00.000Z',
      daysTo: '2025-06-30T00:00:00.000Z',
      monthsFrom: '2025-01-01T00:00:00.000Z',
      monthsTo: '2025-01-01T00:00:00.000Z',
    });
    const hour = spans('2025-01-01', '2025-06-30', 'hour');
    expect(hour.daysFrom).toBe(hour.daysTo);
    expect(hour.monthsFrom).toBe(hour.monthsTo);
  });

  it('finds the months of any year, years before 100 included', () => {
    const w = wholeSpans(hourSplit(new Date('0005-01-10T00:00:00Z'), new Date('0005-04-30T00:00:00Z')), 'month');
    expect([w.monthsFrom.toISOString(), w.monthsTo.toISOString()]).toEqual(['0005-02-01T00:00:00.000Z', '0005-04-01T00:00:00.000Z']);
  });

  it('is empty when no whole day lies inside the period', () => {
    const w = spans('2025-03-01T05:10:00Z', '2025-03-02T23:00:00Z', 'day');
    expect(w.daysFrom).toBe(w.daysTo);
    expect(w.monthsFrom).toBe(w.monthsTo);
    const days = spans('2025-03-01T05:10:00Z', '2025-03-03T01:00:00Z', 'day');
    expect([days.daysFrom, days.daysTo]).toEqual(['2025-03-02T00:00:00.000Z', '2025-03-03T00:00:00.000Z']);
    expect(days.monthsFrom).toBe(days.monthsTo);
  });
});
