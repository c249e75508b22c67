import { describe, expect, it } from 'vitest';
import { hourSplit } from '../common/period-split.js';
import { journeySplit, rawJourneySplit } from './analytics-sql.js';
import { splitDays } from './performance.repository.js';
import { countDays, workflowCountsValues } from './workflow-analytics.repository.js';

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

const at = (iso: string) => new Date(iso);

describe('journeySplit: whole UTC days from the rollups, at most half a day of rows at each end', () => {
  it('adds the partial days nearer their inner midnight', () => {
    expect(journeySplit(at('2025-03-02T17:17:00.000Z'), at('2025-03-08T03:44:59.123Z'))).toEqual({
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
    expect(journeySplit(at('2025-03-01T05:00:00.000Z'), at('2025-03-09T23:59:59.999Z'))).toEqual({
      ranges: [
        { from: '2025-03-01T00:00:00.000000Z', to: '2025-03-01T05:00:00.000000Z', sign: -1 },
        { from: '2025-03-09T23:59:59.999001Z', to: '2025-03-10T00:00:00.000000Z', sign: -1 },
      ],
      daysFrom: '2025-03-01T00:00:00.000000Z',
      daysTo: '2025-03-10T00:00:00.000000Z',
    });
  });

  it('midnight bounds leave empty ranges; a period within one UTC day is rows only', () => {
    expect(journeySplit(at('2025-03-01T00:00:00.000Z'), at('2025-03-02T23:59:59.999Z'))).toMatchObject({
      ranges: [{ from: '2025-03-01T00:00:00.000000Z', to: '2025-03-01T00:00:00.000000Z' }, { from: '2025-03-02T23:59:59.999001Z', to: '2025-03-03T00:00:00.000000Z', sign: -1 }],
      daysFrom: '2025-03-01T00:00:00.000000Z',
      daysTo: '2025-03-03T00:00:00.000000Z',
    });
    const within = journeySplit(at('2025-03-03T10:00:00.000Z'), at('2025-03-03T15:00:00.000Z'));
    expect(within).toEqual(rawJourneySplit(at('2025-03-03T10:00:00.000Z'), at('2025-03-03T15:00:00.000Z')));
    expect(within.ranges[0]).toEqual({ from: '2025-03-03T10:00:00.000000Z', to: '2025-03-03T15:00:00.000001Z', sign: 1 });
    expect(within.daysFrom).toBe(within.daysTo);
  });
});

describe('countDays (the whole UTC days WORKFLOW_COUNTS reads from day rows)', () => {
  const at = (x: { firstFrom: Date; firstTo: Date; secondFrom: Date; secondTo: Date }) => [x.firstFrom, x.firstTo, x.secondFrom, x.secondTo].map((t) => t.toISOString());

  it('whole days inside the rollup hours, less the day holding the halves\' split', () => {
    const split = hourSplit(d('2026-10-27T19:42:10.123Z'), d('2026-11-26T19:42:10.122Z'));
    expect(at(countDays(split, d('2026-11-11T19:00:00.000Z')))).toEqual([
      '2026-10-28T00:00:00.000Z', '2026-11-11T00:00:00.000Z', '2026-11-12T00:00:00.000Z', '2026-11-26T00:00:00.000Z',
    ]);
    // A split at midnight leaves no day to the hours.
    expect(at(countDays(split, d('2026-11-11T00:00:00.000Z')))).toEqual([
      '2026-10-28T00:00:00.000Z', '2026-11-11T00:00:00.000Z', '2026-11-11T00:00:00.000Z', '2026-11-26T00:00:00.000Z',
    ]);
  });

  it('no whole day: nothing from day rows (every range empty at the hours\' end)', () => {
    const split = hourSplit(d('2026-11-25T05:30:00.000Z'), d('2026-11-26T04:00:00.000Z'));
    expect(at(countDays(split, d('2026-11-25T16:00:00.000Z')))).toEqual(Array(4).fill('2026-11-26T04:00:00.000Z'));
  });

  it('a split outside the whole days puts them all in one half', () => {
    const split = hourSplit(d('2026-11-23T20:00:00.000Z'), d('2026-11-26T01:00:00.000Z'));
    expect(at(countDays(split, d('2026-11-23T22:00:00.000Z')))).toEqual([
      '2026-11-24T00:00:00.000Z', '2026-11-24T00:00:00.000Z', '2026-11-24T00:00:00.000Z', '2026-11-26T00:00:00.000Z',
    ]);
  });

  it('day rows only in UTC at day, week or month granularity', () => {
    const split = hourSplit(d('2026-10-27T19:42:10.123Z'), d('2026-11-26T19:42:10.122Z'));
    const days = (tz: string, granularity: string) => (workflowCountsValues('o', 'w', split, tz, granularity, d('2026-11-11T19:00:00.000Z')) as Date[]).slice(11);
    expect(days('UTC', 'week')[0]).toEqual(d('2026-10-28T00:00:00.000Z'));
    for (const [tz, granularity] of [['UTC', 'hour'], ['Europe/Berlin', 'day']]) {
      expect(new Set(days(tz, granularity).map((t) => t.getTime()))).toEqual(new Set([split.hoursTo.getTime()]));
    }
  });
});
