import { InvalidDateRangeError, parseGranularity, parseIsoDate, type Granularity } from '../common/date-range.js';
import { InvalidTimezoneError } from './analytics.errors.js';
import { isoTime } from '../common/iso-time.js';

/**
 * The period of an analytics request in the caller's time zone: `start_date`/`end_date` without an
 * offset are wall-clock times of `timezone` (a date alone is that local day's first or last
 * millisecond), buckets are local calendar units. Periods are at most 366 days and start no later
 * than now; default the 30 days ending now (or the 30 local days ending on a date-only end_date).
 */
export interface AnalyticsPeriod {
  start: Date;
  end: Date;
  granularity: Granularity;
  /** A name PostgreSQL's `AT TIME ZONE` and Intl both know. */
  timezone: string;
}

export interface AnalyticsPeriodInput {
  start_date?: string;
  end_date?: string;
  granularity?: unknown;
  timezone?: string;
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
export const MAX_PERIOD_DAYS = 366;
const DEFAULT_DAYS = 30;
const DATE_ONLY = /^\s*\d{4}-\d{2}-\d{2}\s*$/;
const HAS_OFFSET = /(Z|[+\- ]\d{2}(:?\d{2})?)\s*$/i;
const TIME_PART = /T/i;
/** Region/City style names (and UTC); offsets such as "+05:00" mean opposite things to Intl and POSIX, so they are refused. */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+\-]*(\/[A-Za-z0-9_+\-]+){0,2}$/;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timezone: string): Intl.DateTimeFormat {
  let f = formatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    formatters.set(timezone, f);
  }
  return f;
}

/** The zone's UTC offset at an instant, in milliseconds (positive east of Greenwich). */
export function zoneOffsetMs(timezone: string, instant: number): number {
  const parts: Record<string, number> = {};
  for (const p of formatter(timezone).formatToParts(new Date(instant))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const wall = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  return wall - Math.floor(instant / 1000) * 1000;
}

/** The instant at which the zone's clocks show `wall` (a wall-clock time written as if it were UTC). */
export function fromWallClock(timezone: string, wall: number): number {
  const first = wall - zoneOffsetMs(timezone, wall);
  return wall - zoneOffsetMs(timezone, first);
}

/**
 * An IANA name known to both PostgreSQL (`known`, lower-cased name → its spelling there) and Intl;
 * anything else is 400 INVALID_REQUEST on `timezone`. Absent → UTC.
 */
export function resolveTimezone(value: string | undefined, known: ReadonlyMap<string, string>): string {
  if (value === undefined) return 'UTC';
  const name = known.get(value.toLowerCase());
  if (!ZONE_NAME.test(value) || !name) throw new InvalidTimezoneError();
  try {
    formatter(name);
  } catch {
    throw new InvalidTimezoneError();
  }
  return name;
}

function parseLocal(value: string, field: 'start_date' | 'end_date', timezone: string): Date {
  const parsed = parseIsoDate(value, field, field === 'start_date' ? 'start' : 'end');
  const naive = DATE_ONLY.test(value) || (TIME_PART.test(value) && !HAS_OFFSET.test(value.trim()));
  return naive ? new Date(fromWallClock(timezone, parsed.getTime())) : parsed;
}

export function resolveAnalyticsPeriod(input: AnalyticsPeriodInput, timezone: string, now: Date = new Date(), withGranularity = true): AnalyticsPeriod {
  const end = input.end_date === undefined ? now : parseLocal(input.end_date, 'end_date', timezone);
  let start: Date;
  if (input.start_date !== undefined) start = parseLocal(input.start_date, 'start_date', timezone);
  else if (input.end_date !== undefined && DATE_ONLY.test(input.end_date)) {
    // The 30 whole local days ending on that date.
    const lastDay = parseIsoDate(input.end_date, 'end_date', 'start').getTime();
    start = new Date(fromWallClock(timezone, lastDay - (DEFAULT_DAYS - 1) * DAY_MS));
  } else start = new Date(end.getTime() - DEFAULT_DAYS * DAY_MS);

  if (start.getTime() > now.getTime()) throw new InvalidDateRangeError('start_date is in the future');
  if (end.getTime() < start.getTime()) throw new InvalidDateRangeError();
  // One hour of slack: 366 local days can be an hour longer across a DST change.
  if (end.getTime() - start.getTime() > MAX_PERIOD_DAYS * DAY_MS + HOUR_MS) {
    throw new InvalidDateRangeError(`A period is at most ${MAX_PERIOD_DAYS} days`);
  }
  const granularity = withGranularity ? parseGranularity(input.granularity) : 'day';
  return { start, end, granularity, timezone };
}

/** An instant as ISO 8601 in the zone's local time with its offset, e.g. 2025-03-01T00:00:00.000-05:00. */
export function toZonedIso(instant: Date, timezone: string): string {
  const offset = zoneOffsetMs(timezone, instant.getTime());
  const local = isoTime(new Date(instant.getTime() + offset)).slice(0, -1);
  if (offset === 0) return `${local}Z`;
  const minutes = Math.abs(offset) / 60_000;
  const sign = offset > 0 ? '+' : '-';
  return `${local}${sign}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

/**
 * Whether the zone's offset is a whole number of hours throughout the period, read weekly and at
 * both ends (offset changes are months apart): then every UTC hour lies in one local bucket and
 * the hourly rollups can serve it.
 */
export function wholeHourOffsets(timezone: string, start: Date, end: Date): boolean {
  const readings = [end.getTime()];
  for (let t = start.getTime(); t < end.getTime(); t += 7 * DAY_MS) readings.push(t);
  return readings.every((t) => zoneOffsetMs(timezone, t) % HOUR_MS === 0);
}
