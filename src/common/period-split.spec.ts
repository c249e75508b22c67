import { describe, expect, it } from 'vitest';
import { isoMicros, rawSplit, splitPeriod, type PeriodSplit, type SplitOptions } from './period-split.js';

const us = (iso: string) => new Date(iso).getTime() * 1000;
const HOUR_US = 3_600_000_000;
const DAY_US = 86_400_000_000;

/**
 * How many times a split counts the instant `t` (µs): the whole units' rollup rows plus the signed
 * raw ranges. Reading a period right means counting every instant of `[start, end + 1 µs)` once
 * and every other instant not at all.
 */
function coverage(split: PeriodSplit, t: number): number {
  let n = split.wholeFrom <= t && t < split.wholeTo ? 1 : 0;
  for (const r of split.ranges) if (r.from <= t && t < r.to) n += r.sign;
  return n;
}

/** Instants around every boundary of a split and of the period, and a sample between. */
function probes(split: PeriodSplit, s: number, e: number): number[] {
  const edges = [s, e, split.wholeFrom, split.wholeTo, ...split.ranges.flatMap((r) => [r.from, r.to])];
  const points = edges.flatMap((x) => [x - 1000, x - 1, x, x + 1, x + 999]);
  for (let t = s - DAY_US; t < e + DAY_US; t += 7_777_777_777) points.push(t);
  return points;
}

function expectExact(start: string, end: string, options: SplitOptions): PeriodSplit {
  const split = splitPeriod(new Date(start), new Date(end), options);
  const [s, e] = [us(start), us(end) + 1];
  for (const t of probes(split, s, e)) {
    const inside = s <= t && t < e;
    // The one tolerance: a day read whole whose last 999 µs lie after a period ending on its last millisecond.
    const tolerated = options.wholeLastMillisecond && t >= e && t < e + 999 && t < split.wholeTo;
    expect(coverage(split, t), `${start}..${end} ${JSON.stringify(options)} at ${isoMicros(t)}`).toBe(inside || tolerated ? 1 : 0);
  }
  return split;
}

const PERIODS: [string, string][] = [
  ['2025-03-02T17:17:00.000Z', '2025-03-08T03:44:59.123Z'],
  ['2025-03-01T05:00:00.000Z', '2025-03-09T23:59:59.999Z'],
  ['2025-03-01T00:00:00.000Z', '2025-03-02T23:59:59.999Z'],
  ['2025-03-03T10:00:00.000Z', '2025-03-03T15:00:00.000Z'],
  ['2025-03-03T10:00:00.000Z', '2025-03-04T14:00:00.000Z'],
  ['2025-07-01T15:00:00.000Z', '2025-07-03T14:59:59.999Z'],
  ['2025-07-01T18:30:00.000Z', '2025-07-05T18:29:59.999Z'],
  ['2024-11-23T02:51:16.961Z', '2025-11-23T02:51:16.961Z'],
  ['2025-07-01T05:10:00.000Z', '2025-07-01T05:40:00.000Z'],
  ['2025-07-01T05:00:00.000Z', '2025-07-01T05:00:00.000Z'],
];

describe('splitPeriod: one rule for every rollup read', () => {
  it('counts every instant of the period exactly once and nothing outside, in each way and unit', () => {
    for (const [start, end] of PERIODS) {
      for (const unit of ['hour', 'day'] as const) {
        for (const way of ['inside', 'nearest'] as const) expectExact(start, end, { unit, way });
        expectExact(start, end, { unit, way: 'inside', wholeLastMillisecond: true });
      }
    }
  });

  it('inside: the whole units inside, the partial ends added; none inside: all raw with no unit', () => {
    expect(splitPeriod(new Date('2025-03-02T17:17:00Z'), new Date('2025-03-08T03:44:59.123Z'), { unit: 'day', way: 'inside' })).toEqual({
      ranges: [
        { from: us('2025-03-02T17:17:00Z'), to: us('2025-03-03T00:00:00Z'), sign: 1 },
        { from: us('2025-03-08T00:00:00Z'), to: us('2025-03-08T03:44:59.123Z') + 1, sign: 1 },
      ],
      wholeFrom: us('2025-03-03T00:00:00Z'),
      wholeTo: us('2025-03-08T00:00:00Z'),
    });
    const start = new Date('2025-07-01T05:10:00Z');
    expect(splitPeriod(start, new Date('2025-07-01T05:40:00Z'), { unit: 'hour', way: 'inside' })).toEqual({
      ranges: [{ from: us('2025-07-01T05:10:00Z'), to: us('2025-07-01T05:10:00Z'), sign: 1 }, { from: us('2025-07-01T05:10:00Z'), to: us('2025-07-01T05:40:00Z') + 1, sign: 1 }],
      wholeFrom: us('2025-07-01T05:10:00Z'),
      wholeTo: us('2025-07-01T05:10:00Z'),
    });
  });

  it('inside: the unit holding a last millisecond is raw, unless wholeLastMillisecond', () => {
    const [start, end] = [new Date('2025-07-01T00:00:00Z'), new Date('2025-07-03T23:59:59.999Z')];
    expect(splitPeriod(start, end, { unit: 'day', way: 'inside' }).wholeTo).toBe(us('2025-07-03T00:00:00Z'));
    expect(splitPeriod(start, end, { unit: 'hour', way: 'inside' }).wholeTo).toBe(us('2025-07-03T23:00:00Z'));
    const whole = splitPeriod(start, end, { unit: 'day', way: 'inside', wholeLastMillisecond: true });
    expect(whole.wholeTo).toBe(us('2025-07-04T00:00:00Z'));
    expect(whole.ranges[1].from).toBe(whole.ranges[1].to);
  });

  it('nearest: at most half a unit of rows at each end, subtracting when the outside is smaller', () => {
    for (const [start, end] of PERIODS) {
      for (const unit of ['hour', 'day'] as const) {
        const split = splitPeriod(new Date(start), new Date(end), { unit, way: 'nearest' });
        if (split.wholeFrom === split.wholeTo) continue;
        for (const r of split.ranges) expect(r.to - r.from).toBeLessThanOrEqual((unit === 'day' ? DAY_US : HOUR_US) / 2);
      }
    }
    const split = splitPeriod(new Date('2025-03-01T05:00:00Z'), new Date('2025-03-09T23:59:59.999Z'), { unit: 'day', way: 'nearest' });
    expect(split).toEqual({
      ranges: [
        { from: us('2025-03-01T00:00:00Z'), to: us('2025-03-01T05:00:00Z'), sign: -1 },
        { from: us('2025-03-09T23:59:59.999Z') + 1, to: us('2025-03-10T00:00:00Z'), sign: -1 },
      ],
      wholeFrom: us('2025-03-01T00:00:00Z'),
      wholeTo: us('2025-03-10T00:00:00Z'),
    });
  });

  it('rawSplit reads the whole period from the rows', () => {
    const split = rawSplit(new Date('2025-03-01T05:00:00Z'), new Date('2025-03-09T23:59:59.999Z'));
    expect(split.wholeFrom).toBe(split.wholeTo);
    expect(split.ranges[0]).toEqual({ from: us('2025-03-01T05:00:00Z'), to: us('2025-03-09T23:59:59.999Z') + 1, sign: 1 });
  });

  it('writes microseconds PostgreSQL reads exactly', () => {
    expect(isoMicros(us('2025-03-09T23:59:59.999Z') + 1)).toBe('2025-03-09T23:59:59.999001Z');
  });
});
