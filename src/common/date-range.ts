import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { InvalidRequestError } from './errors/common.errors.js';
import { DomainError } from './errors/domain-error.js';
import { TextLength } from './validation/text-length.decorator.js';

/**
 * Date ranges and time buckets of metrics, analytics and list filters: one parser, so that every
 * endpoint reads `start_date`, `end_date` and `granularity` the same way and fails with the same codes.
 *
 * - Dates are ISO 8601: `YYYY-MM-DD`, or a date-time `YYYY-MM-DDTHH:MM[:SS[.fraction]]` with `Z` or an
 *   offset; a date-time without an offset is UTC. A date alone means the start of that UTC day for
 *   `start_date` and its last millisecond for `end_date`, so `end_date=2025-03-31` includes March 31.
 * - Both bounds are inclusive.
 */

export const GRANULARITIES = ['hour', 'day', 'week', 'month'] as const;
export type Granularity = (typeof GRANULARITIES)[number];
export const DEFAULT_GRANULARITY: Granularity = 'day';
export const DEFAULT_PERIOD_DAYS = 30;

const DAY_MS = 86_400_000;

export class InvalidDateRangeError extends DomainError {
  constructor(message = 'end_date must not be before start_date') {
    super('INVALID_DATE_RANGE', 400, message, { field: 'end_date' });
  }
}

export class InvalidGranularityError extends DomainError {
  constructor() {
    super('INVALID_GRANULARITY', 422, `granularity must be one of ${GRANULARITIES.join(', ')}`, { field: 'granularity' });
  }
}

export interface DateRange {
  start: Date;
  end: Date;
}

/** A filter's bounds; either may be open. */
export interface OptionalDateRange {
  start?: Date;
  end?: Date;
}

export interface Period extends DateRange {
  granularity: Granularity;
}

export interface DateRangeInput {
  start_date?: string;
  end_date?: string;
}

export interface PeriodInput extends DateRangeInput {
  granularity?: unknown;
}

// The offset may arrive as " 02:00": an unencoded "+" in a query string decodes to a space.
const DATE_ONLY = /^\s*\d{4}-\d{2}-\d{2}\s*$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+\- ]\d{2}(?::?\d{2})?)?)?$/i;

/**
 * Parses one ISO 8601 date or date-time into an instant; anything else (including impossible
 * calendar dates such as 2025-02-30, which `Date` would roll over) is 400 INVALID_REQUEST on `field`.
 */
export function parseIsoDate(value: string, field: string, bound: 'start' | 'end' = 'start'): Date {
  const m = ISO_DATE.exec(value.trim());
  if (!m) throw new InvalidRequestError(`${field} must be an ISO 8601 date or date-time`, field);
  const [, y, mo, d, h, mi, s, fraction, offset] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = h === undefined ? 0 : Number(h);
  const minute = mi === undefined ? 0 : Number(mi);
  const second = s === undefined ? 0 : Number(s);
  const ms = fraction === undefined ? 0 : Number(fraction.padEnd(3, '0').slice(0, 3));

  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, second, ms);
  const calendarOk = utc.getUTCFullYear() === year && utc.getUTCMonth() === month - 1 && utc.getUTCDate() === day;
  if (!calendarOk || hour > 23 || minute > 59 || second > 59) {
    throw new InvalidRequestError(`${field} is not a valid date`, field);
  }

  let offsetMinutes = 0;
  if (offset && offset.toUpperCase() !== 'Z') {
    const sign = offset[0] === '-' ? -1 : 1;
    const digits = offset.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2)) : 0;
    if (oh > 23 || om > 59) throw new InvalidRequestError(`${field} has an invalid UTC offset`, field);
    offsetMinutes = sign * (oh * 60 + om);
  }
  let instant = utc.getTime() - offsetMinutes * 60_000;
  if (h === undefined && bound === 'end') instant += DAY_MS - 1;
  return new Date(instant);
}

function parseBound(value: string | undefined, field: 'start_date' | 'end_date'): Date | undefined {
  if (value === undefined) return undefined;
  return parseIsoDate(value, field, field === 'start_date' ? 'start' : 'end');
}

function assertOrdered(start: Date, end: Date): void {
  if (end.getTime() < start.getTime()) throw new InvalidDateRangeError();
}

/** A list filter: absent bounds stay open; end before start is 400 INVALID_DATE_RANGE. */
export function parseDateFilter(input: DateRangeInput): OptionalDateRange {
  const start = parseBound(input.start_date, 'start_date');
  const end = parseBound(input.end_date, 'end_date');
  if (start && end) assertOrdered(start, end);
  return { start, end };
}

/**
 * A reporting period: by default the 30 days ending `now`; with only `start_date`, up to `now`;
 * with only `end_date`, the 30 days ending then (the 30 whole days up to and including a date alone).
 */
export function resolveDateRange(input: DateRangeInput, now: Date = new Date()): DateRange {
  const start = parseBound(input.start_date, 'start_date');
  const end = parseBound(input.end_date, 'end_date') ?? now;
  // A date alone ends on its last millisecond; the default start then falls on a midnight (30 whole days).
  const endsDay = input.end_date !== undefined && DATE_ONLY.test(input.end_date);
  const defaultStart = new Date(end.getTime() + (endsDay ? 1 : 0) - DEFAULT_PERIOD_DAYS * DAY_MS);
  const range = { start: start ?? defaultStart, end };
  if (start && input.end_date === undefined && end.getTime() < start.getTime()) {
    throw new InvalidDateRangeError('start_date is in the future and end_date defaults to now');
  }
  assertOrdered(range.start, range.end);
  return range;
}

/** `day` when absent; anything but an exact known value is 422 INVALID_GRANULARITY. */
export function parseGranularity(value: unknown): Granularity {
  if (value === undefined) return DEFAULT_GRANULARITY;
  if (typeof value === 'string' && (GRANULARITIES as readonly string[]).includes(value)) return value as Granularity;
  throw new InvalidGranularityError();
}

/** Dates are checked before the granularity, so one request reports its first fault in reading order. */
export function resolvePeriod(input: PeriodInput, now: Date = new Date()): Period {
  const range = resolveDateRange(input, now);
  return { ...range, granularity: parseGranularity(input.granularity) };
}

/** The `start_date` / `end_date` query parameters; parsed by the functions above, not by class-validator. */
export function DateQueryParam(description: string) {
  return applyDecorators(
    ApiPropertyOptional({ type: String, description: `${description}. ISO 8601 date or date-time (UTC unless an offset is given); inclusive`, example: '2025-03-01T00:00:00Z' }),
    IsOptional(),
    IsString(),
    TextLength(0, 64),
  );
}

/** `start_date`, `end_date` of a reporting period (default: the last 30 days). */
export class DateRangeQuery {
  @DateQueryParam('Start of the period; default 30 days before end_date')
  start_date?: string;

  @DateQueryParam('End of the period; default now. A date alone includes that whole day')
  end_date?: string;
}

/** A reporting period with its time buckets. */
export class PeriodQuery extends DateRangeQuery {
  @ApiPropertyOptional({ enum: GRANULARITIES, default: DEFAULT_GRANULARITY, description: 'Bucket size (UTC; weeks start on Monday). Invalid → 422 INVALID_GRANULARITY' })
  // Checked by parseGranularity so a bad value is 422, not the pipe's 400.
  @IsOptional()
  granularity?: string;
}
