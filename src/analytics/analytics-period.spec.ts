import { describe, expect, it } from 'vitest';
import { fromWallClock, resolveAnalyticsPeriod, resolveTimezone, toZonedIso, wholeHourOffsets, zoneOffsetMs } from './analytics-period.js';

const known = new Map(['UTC', 'Asia/Tokyo', 'America/New_York', 'Asia/Kolkata', 'Europe/Berlin'].map((z) => [z.toLowerCase(), z]));
const NOW = new Date('2025-07-01T12:00:00Z');

describe('analytics period', () => {
  it('offsets, including DST and half-hour zones', () => {
    expect(zoneOffsetMs('Asia/Tokyo', Date.parse('2025-06-01T00:00:00Z'))).toBe(9 * 3_600_000);
    expect(zoneOffsetMs('America/New_York', Date.parse('2025-01-15T00:00:00Z'))).toBe(-5 * 3_600_000);
    expect(zoneOffsetMs('America/New_York', Date.parse('2025-06-15T00:00:00Z'))).toBe(-4 * 3_600_000);
    expect(zoneOffsetMs('Asia/Kolkata', Date.parse('2025-06-15T00:00:00Z'))).toBe(5.5 * 3_600_000);
    // 2025-03-09 02:30 does not exist in New York; 2025-03-09 03:30 is EDT.
    expect(new Date(fromWallClock('America/New_York', Date.parse('2025-03-09T03:30:00Z'))).toISOString()).toBe('2025-03-09T07:30:00.000Z');
    expect(new Date(fromWallClock('America/New_York', Date.parse('2025-03-08T23:59:59.999Z'))).toISOString()).toBe('2025-03-09T04:59:59.999Z');
  });

  it('reads dates without an offset as local time, with an offset as given', () => {
    const p = resolveAnalyticsPeriod({ start_date: '2025-06-01', end_date: '2025-06-07' }, 'Asia/Tokyo', NOW);
    expect([p.start.toISOString(), p.end.toISOString()]).toEqual(['2025-05-31T15:00:00.000Z', '2025-06-07T14:59:59.999Z']);
    const q = resolveAnalyticsPeriod({ start_date: '2025-06-01T10:00:00', end_date: '2025-06-01T12:00:00Z' }, 'Asia/Tokyo', NOW);
    expect([q.start.toISOString(), q.end.toISOString()]).toEqual(['2025-06-01T01:00:00.000Z', '2025-06-01T12:00:00.000Z']);
    const d = resolveAnalyticsPeriod({ end_date: '2025-06-30' }, 'UTC', NOW);
    expect(d.start.toISOString()).toBe('2025-06-01T00:00:00.000Z');
    expect(resolveAnalyticsPeriod({}, 'UTC', NOW).start.toISOString()).toBe('2025-06-01T12:00:00.000Z');
  });

  it('refuses reversed, over-long and future periods with INVALID_DATE_RANGE on end_date; bad granularity with 422', () => {
    for (const input of [
      { start_date: '2025-06-02', end_date: '2025-06-01' },
      { start_date: '2024-01-01', end_date: '2025-01-02' },
      { start_date: '2025-07-02' },
    ]) {
      expect(() => resolveAnalyticsPeriod(input, 'UTC', NOW)).toThrow(expect.objectContaining({ code: 'INVALID_DATE_RANGE', extra: expect.objectContaining({ field: 'end_date' }) }));
    }
    expect(() => resolveAnalyticsPeriod({ start_date: '2024-01-01', end_date: '2024-12-31' }, 'America/New_York', NOW)).not.toThrow();
    expect(() => resolveAnalyticsPeriod({ granularity: 'minute' }, 'UTC', NOW, true)).toThrow(expect.objectContaining({ code: 'INVALID_GRANULARITY', status: 422 }));
  });

  it('knows zones by name only, case-insensitively', () => {
    expect(resolveTimezone(undefined, known)).toBe('UTC');
    expect(resolveTimezone('asia/tokyo', known)).toBe('Asia/Tokyo');
    for (const bad of ['Mars/Olympus', '+05:00', 'UTC+5', '', 'Asia/Tokyo; DROP']) {
      expect(() => resolveTimezone(bad, known)).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST', extra: expect.objectContaining({ field: 'timezone' }) }));
    }
  });

  it('writes instants in local time with the offset', () => {
    expect(toZonedIso(new Date('2025-06-01T15:00:00Z'), 'Asia/Tokyo')).toBe('2025-06-02T00:00:00.000+09:00');
    expect(toZonedIso(new Date('2025-06-01T15:00:00Z'), 'America/New_York')).toBe('2025-06-01T11:00:00.000-04:00');
    expect(toZonedIso(new Date('2025-06-01T15:00:00Z'), 'Asia/Kolkata')).toBe('2025-06-01T20:30:00.000+05:30');
    expect(toZonedIso(new Date('2025-06-01T15:00:00Z'), 'UTC')).toBe('2025-06-01T15:00:00.000Z');
  });

  it('tells zones the hourly rollups can serve', () => {
    const [a, b] = [new Date('2025-01-01T00:00:00Z'), new Date('2025-12-31T23:59:59Z')];
    expect(wholeHourOffsets('UTC', a, b)).toBe(true);
    expect(wholeHourOffsets('America/New_York', a, b)).toBe(true);
    expect(wholeHourOffsets('Asia/Kolkata', a, b)).toBe(false);
    // Lord Howe: +10:30 in winter, +11 in summer.
    expect(wholeHourOffsets('Australia/Lord_Howe', new Date('2025-01-01T00:00:00Z'), new Date('2025-01-10T00:00:00Z'))).toBe(true);
    expect(wholeHourOffsets('Australia/Lord_Howe', a, b)).toBe(false);
  });
});
