import { describe, expect, it } from 'vitest';
import {
  DEFAULT_GRANULARITY,
  InvalidDateRangeError,
  InvalidGranularityError,
  parseDateFilter,
  parseGranularity,
  parseIsoDate,
  resolveDateRange,
  resolvePeriod,
} from './date-range.js';
import { DomainError } from './errors/domain-error.js';

const NOW = new Date('2025-06-15T12:34:56.789Z');
const DAY_MS = 86_400_000;

/** The error `fn` throws, as code/status/field; fails the test when it does not throw. */
function failure(fn: () => unknown): { code: string; status: number; field?: string } {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    const e = error as DomainError;
    return { code: e.code, status: e.status, field: e.extra.field };
  }
  throw new Error('expected an error');
}

describe('parseIsoDate', () => {
  it('reads a date alone as the start of its UTC day, or its last millisecond as an end bound', () => {
    expect(parseIsoDate('2025-03-01', 'start_date').toISOString()).toBe('2025-03-01T00:00:00.000Z');
    expect(parseIsoDate('2025-03-31', 'end_date', 'end').toISOString()).toBe('2025-03-31T23:59:59.999Z');
    expect(parseIsoDate('2024-02-29', 'end_date', 'end').toISOString()).toBe('2024-02-29T23:59:59.999Z');
  });

  it('reads date-times with Z, an offset, or none (UTC), to the millisecond', () => {
    expect(parseIsoDate('2025-03-01T10:20:30Z', 'f').toISOString()).toBe('2025-03-01T10:20:30.000Z');
    expect(parseIsoDate('2025-03-01T10:20:30.5Z', 'f').toISOString()).toBe('2025-03-01T10:20:30.500Z');
    expect(parseIsoDate('2025-03-01T10:20:30.123456789Z', 'f').toISOString()).toBe('2025-03-01T10:20:30.123Z');
    expect(parseIsoDate('2025-03-01T10:20', 'f').toISOString()).toBe('2025-03-01T10:20:00.000Z');
    expect(parseIsoDate('2025-03-01T10:20:30', 'f').toISOString()).toBe('2025-03-01T10:20:30.000Z');
    expect(parseIsoDate('2025-03-01T10:20:30+02:00', 'f').toISOString()).toBe('2025-03-01T08:20:30.000Z');
    expect(parseIsoDate('2025-03-01T01:00:00-05:30', 'f').toISOString()).toBe('2025-03-01T06:30:00.000Z');
    expect(parseIsoDate('2025-03-01T10:00:00+0100', 'f').toISOString()).toBe('2025-03-01T09:00:00.000Z');
    expect(parseIsoDate('2025-03-01T10:00:00+01', 'f').toISOString()).toBe('2025-03-01T09:00:00.000Z');
    expect(parseIsoDate('2025-03-01t10:00:00z', 'f').toISOString()).toBe('2025-03-01T10:00:00.000Z');
  });

  it('keeps a date-time end bound as given', () => {
    expect(parseIsoDate('2025-03-31T00:00:00Z', 'end_date', 'end').toISOString()).toBe('2025-03-31T00:00:00.000Z');
  });

  it('reads an offset whose "+" was decoded to a space as a positive offset', () => {
    expect(parseIsoDate('2025-03-01T10:00:00 01:00', 'f').toISOString()).toBe('2025-03-01T09:00:00.000Z');
  });

  it('refuses anything else with 400 INVALID_REQUEST on the field', () => {
    const bad = [
      '', ' ', 'now', 'yesterday', '1740787200', '2025', '2025-03', '2025-3-1', '03/01/2025', '2025/03/01', '2025-03-01T', '2025-03-01T10',
      '2025-03-01T10:00:00ZZ', '2025-03-01 10:00:00', '2025-03-01T10:00:00+1', '+2025-03-01', '2025-03-01T10:00:00.Z',
      '2025-13-01', '2025-00-10', '2025-02-30', '2025-02-29', '2025-04-31', '2025-03-01T24:00:00Z', '2025-03-01T10:60:00Z',
      '2025-03-01T10:00:60Z', '2025-03-01T10:00:00+24:00', '2025-03-01T10:00:00+01:60',
    ];
    for (const value of bad) {
      expect(failure(() => parseIsoDate(value, 'start_date')), value).toEqual({ code: 'INVALID_REQUEST', status: 400, field: 'start_date' });
    }
  });
});

describe('parseDateFilter', () => {
  it('leaves absent bounds open', () => {
    expect(parseDateFilter({})).toEqual({ start: undefined, end: undefined });
    expect(parseDateFilter({ start_date: '2025-03-01' })).toEqual({ start: new Date('2025-03-01T00:00:00Z'), end: undefined });
    expect(parseDateFilter({ end_date: '2025-03-01' })).toEqual({ start: undefined, end: new Date('2025-03-01T23:59:59.999Z') });
  });

  it('accepts equal bounds and refuses an end before the start with 400 INVALID_DATE_RANGE on end_date', () => {
    expect(parseDateFilter({ start_date: '2025-03-01T10:00:00Z', end_date: '2025-03-01T10:00:00Z' }).end).toEqual(new Date('2025-03-01T10:00:00Z'));
    expect(parseDateFilter({ start_date: '2025-03-01', end_date: '2025-03-01' }).end).toEqual(new Date('2025-03-01T23:59:59.999Z'));
    expect(failure(() => parseDateFilter({ start_date: '2025-03-01T10:00:00Z', end_date: '2025-03-01T09:59:59.999Z' }))).toEqual({
      code: 'INVALID_DATE_RANGE', status: 400, field: 'end_date',
    });
  });

  it('names the unparseable bound', () => {
    expect(failure(() => parseDateFilter({ start_date: '2025-03-01', end_date: 'x' })).field).toBe('end_date');
    expect(failure(() => parseDateFilter({ start_date: 'x', end_date: '2025-03-01' })).field).toBe('start_date');
  });
});

describe('resolveDateRange', () => {
  it('defaults to the 30 days ending now', () => {
    expect(resolveDateRange({}, NOW)).toEqual({ start: new Date(NOW.getTime() - 30 * DAY_MS), end: NOW });
  });

  it('ends a range with only a start now, and starts a range with only an end 30 days before it', () => {
    expect(resolveDateRange({ start_date: '2025-06-01' }, NOW)).toEqual({ start: new Date('2025-06-01T00:00:00Z'), end: NOW });
    expect(resolveDateRange({ end_date: '2025-03-31' }, NOW)).toEqual({ start: new Date('2025-03-02T00:00:00Z'), end: new Date('2025-03-31T23:59:59.999Z') });
  });

  it('refuses an end before the start, including a future start with the default end', () => {
    expect(failure(() => resolveDateRange({ start_date: '2025-03-02', end_date: '2025-03-01' }, NOW))).toEqual({ code: 'INVALID_DATE_RANGE', status: 400, field: 'end_date' });
    expect(failure(() => resolveDateRange({ start_date: '2025-07-01' }, NOW))).toEqual({ code: 'INVALID_DATE_RANGE', status: 400, field: 'end_date' });
    expect(() => resolveDateRange({ start_date: '2025-07-01' }, NOW)).toThrow(InvalidDateRangeError);
  });
});

describe('parseGranularity and resolvePeriod', () => {
  it('accepts exactly hour, day, week and month, with day by default', () => {
    expect(DEFAULT_GRANULARITY).toBe('day');
    expect(parseGranularity(undefined)).toBe('day');
    for (const g of ['hour', 'day', 'week', 'month']) expect(parseGranularity(g)).toBe(g);
  });

  it('refuses anything else with 422 INVALID_GRANULARITY on granularity', () => {
    for (const g of ['', 'Day', 'DAY', 'days', 'year', 'minute', ' day', null, 1, ['day']]) {
      expect(failure(() => parseGranularity(g)), String(g)).toEqual({ code: 'INVALID_GRANULARITY', status: 422, field: 'granularity' });
    }
    expect(() => parseGranularity('year')).toThrow(InvalidGranularityError);
  });

  it('resolves the whole period, checking dates before the granularity', () => {
    expect(resolvePeriod({ start_date: '2025-03-01', end_date: '2025-03-31', granularity: 'week' }, NOW)).toEqual({
      start: new Date('2025-03-01T00:00:00Z'), end: new Date('2025-03-31T23:59:59.999Z'), granularity: 'week',
    });
    expect(resolvePeriod({}, NOW).granularity).toBe('day');
    expect(failure(() => resolvePeriod({ start_date: 'x', granularity: 'year' }, NOW)).code).toBe('INVALID_REQUEST');
    expect(failure(() => resolvePeriod({ start_date: '2025-03-02', end_date: '2025-03-01', granularity: 'year' }, NOW)).code).toBe('INVALID_DATE_RANGE');
  });
});
