import { describe, expect, it } from 'vitest';
import { countDistinct, distinctFigures, engagementDayPlan, halfOfDay } from './engagement-days.js';

const d = (iso: string) => new Date(iso);
const us = (iso: string) => Date.parse(iso) * 1000;

/** A set of 8-byte hashes from small integers (each written as a 64-bit little-endian value). */
function set(...hashes: (number | bigint)[]): Uint8Array {
  const out = new BigInt64Array(hashes.map((h) => BigInt(h)));
  return new Uint8Array(out.buffer);
}

describe('engagementDayPlan', () => {
  it('reads whole UTC days from the sets, the partial ends raw, and splits the middle day at the halves\' boundary', () => {
    const plan = engagementDayPlan(d('2025-03-01T10:00:00.000Z'), d('2025-03-05T09:59:59.999Z'), d('2025-03-03T09:00:00.000Z'));
    expect(plan.daysFrom).toBe(us('2025-03-02T00:00:00Z'));
    expect(plan.daysTo).toBe(us('2025-03-05T00:00:00Z'));
    expect(plan.middleDay).toBe(us('2025-03-03T00:00:00Z'));
    expect(plan.raw).toEqual([
      { from: us('2025-03-01T10:00:00Z'), to: us('2025-03-02T00:00:00Z'), half: 1 },
      // The end is inclusive to the millisecond: its exclusive bound is end + 1 µs.
      { from: us('2025-03-05T00:00:00Z'), to: us('2025-03-05T09:59:59.999Z') + 1, half: 2 },
      { from: us('2025-03-03T00:00:00Z'), to: us('2025-03-03T09:00:00Z'), half: 1 },
      { from: us('2025-03-03T09:00:00Z'), to: us('2025-03-04T00:00:00Z'), half: 2 },
    ]);
    expect(halfOfDay(plan, us('2025-03-02T00:00:00Z'))).toBe(1);
    expect(halfOfDay(plan, us('2025-03-04T00:00:00Z'))).toBe(2);
  });

  it('leaves no middle day when the boundary is a midnight, and no raw part for ends on midnights', () => {
    const plan = engagementDayPlan(d('2025-03-01T00:00:00.000Z'), d('2025-03-04T23:59:59.999Z'), d('2025-03-03T00:00:00.000Z'));
    expect(plan).toMatchObject({ daysFrom: us('2025-03-01T00:00:00Z'), daysTo: us('2025-03-04T00:00:00Z'), middleDay: null });
    // Only the last day's millisecond-short part is raw.
    expect(plan.raw).toEqual([{ from: us('2025-03-04T00:00:00Z'), to: us('2025-03-04T23:59:59.999Z') + 1, half: 2 }]);
    expect([us('2025-03-01T00:00:00Z'), us('2025-03-02T00:00:00Z'), us('2025-03-03T00:00:00Z')].map((day) => halfOfDay(plan, day))).toEqual([1, 1, 2]);
  });

  it('reads a period without a whole UTC day raw, in its two halves', () => {
    const plan = engagementDayPlan(d('2025-03-01T05:00:00.000Z'), d('2025-03-01T23:00:00.000Z'), d('2025-03-01T14:00:00.000Z'));
    expect(plan).toMatchObject({ daysFrom: us('2025-03-01T05:00:00Z'), daysTo: us('2025-03-01T05:00:00Z'), middleDay: null });
    expect(plan.raw).toEqual([
      { from: us('2025-03-01T05:00:00Z'), to: us('2025-03-01T14:00:00Z'), half: 1 },
      { from: us('2025-03-01T14:00:00Z'), to: us('2025-03-01T23:00:00Z') + 1, half: 2 },
    ]);
  });

  it('puts everything in the second half when the boundary (an hour, floored) falls before the start', () => {
    const plan = engagementDayPlan(d('2025-03-01T10:30:00.000Z'), d('2025-03-01T11:00:00.000Z'), d('2025-03-01T10:00:00.000Z'));
    expect(plan.raw).toEqual([{ from: us('2025-03-01T10:30:00Z'), to: us('2025-03-01T11:00:00Z') + 1, half: 2 }]);
  });
});

describe('countDistinct', () => {
  it('counts each hash once across and within sets', () => {
    expect(countDistinct([])).toBe(0);
    expect(countDistinct([set()])).toBe(0);
    expect(countDistinct([set(1, 2, 3), set(3, 4), set(1)])).toBe(4);
    expect(countDistinct([set(7, 7, 7)])).toBe(1);
  });

  it('tells apart hashes that share either 32-bit half, and negative ones', () => {
    const lo = 5n;
    const hashes = [lo, lo + (1n << 32n), lo + (2n << 32n), -lo, -1n, 1n << 62n, (1n << 62n) + 5n];
    expect(countDistinct([set(...hashes), set(...hashes.slice(2))])).toBe(hashes.length);
  });

  it('reads sets at any byte offset of a larger buffer', () => {
    const backing = new Uint8Array(8 * 3 + 3);
    backing.set(set(10, 11, 10), 3);
    expect(countDistinct([backing.subarray(3)])).toBe(2);
  });

  it('counts many hashes exactly (the table grows with them)', () => {
    const big = Array.from({ length: 50_000 }, (_, i) => BigInt(i) * 2_654_435_761n);
    expect(countDistinct([set(...big), set(...big.slice(0, 20_000)), set(...big.slice(49_000))])).toBe(50_000);
  });

  it('refuses a set that is not whole hashes', () => {
    expect(() => countDistinct([new Uint8Array(12)])).toThrow(/8-byte/);
  });
});

describe('distinctFigures', () => {
  it('counts customers overall, per channel and per half, each customer once in each', () => {
    const figures = distinctFigures([
      { channel: 'whatsapp', half: 1, customers: set(1, 2) },
      { channel: 'whatsapp', half: 2, customers: set(2, 3) },
      { channel: 'voice', half: 2, customers: set(1, 4) },
      { channel: 'instagram', half: 1, customers: set() },
    ]);
    expect(figures.all).toBe(4);
    expect(Object.fromEntries(figures.channels)).toEqual({ whatsapp: 3, voice: 2 });
    expect(figures.halves).toEqual([2, 4]);
  });
});
