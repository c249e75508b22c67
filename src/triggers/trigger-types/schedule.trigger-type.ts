import cronParser from 'cron-parser';
import { InvalidCronExpressionError } from '../triggers.errors.js';
import type { ConfigReader, TriggerTypeDefinition } from './trigger-type.js';
import { isoTime } from '../../common/iso-time.js';

export const MAX_CRON_LENGTH = 120;
/** The macros cron-parser (and so Bull) understands besides five fields. */
const CRON_MACROS = ['@yearly', '@monthly', '@weekly', '@daily', '@hourly'];
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

export interface ScheduleTriggerConfiguration {
  /** Five fields (minute hour day-of-month month day-of-week) or a macro, whitespace collapsed. */
  cron_expression: string;
  /** IANA time zone the expression is read in. */
  timezone: string;
  /** ISO 8601 instants (UTC) bounding the schedule; null when open. */
  start_date: string | null;
  end_date: string | null;
}

/** The repeat options of the schedule's Bull job: recomputed from the configuration, never stored. */
export interface ScheduleRepeat {
  cron: string;
  tz: string;
  startDate?: string;
  endDate?: string;
}

export function scheduleRepeat(configuration: ScheduleTriggerConfiguration): ScheduleRepeat {
  return {
    cron: configuration.cron_expression,
    tz: configuration.timezone,
    ...(configuration.start_date ? { startDate: configuration.start_date } : {}),
    ...(configuration.end_date ? { endDate: configuration.end_date } : {}),
  };
}

let zonesByLowerName: Map<string, string> | undefined;

/**
 * The zone's name if the runtime's time-zone database knows it (canonical names and their
 * aliases, such as `US/Eastern`), with the canonical spelling when it differs only in case;
 * undefined otherwise. Offsets (`+05:00`) and abbreviations beyond IANA's are refused.
 */
export function ianaTimeZone(name: string): string | undefined {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name) || name.length > 64) return undefined;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
  } catch {
    return undefined;
  }
  zonesByLowerName ??= new Map(['UTC', ...Intl.supportedValuesOf('timeZone')].map((zone) => [zone.toLowerCase(), zone]));
  return zonesByLowerName.get(name.toLowerCase()) ?? name;
}

/**
 * An ISO 8601 date (`2025-01-31`, midnight UTC) or date-time with `Z` or an offset, as a UTC
 * instant; undefined when it is not one or names a day that does not exist.
 */
export function isoInstant(value: string): string | undefined {
  const match = ISO_DATE_TIME.exec(value) ?? ISO_DATE.exec(value);
  if (!match) return undefined;
  const [, year, month, day, hour = '00', minute = '00', second = '00'] = match;
  const date = new Date(match.length > 4 ? value : `${value}T00:00:00Z`);
  if (Number.isNaN(date.getTime())) return undefined;
  // Date rolls 2025-02-30 over to March; refuse it instead.
  const probe = new Date(Date.UTC(+year, +month - 1, +day, +hour, +minute, +second));
  if (probe.getUTCDate() !== +day || probe.getUTCMonth() !== +month - 1 || +hour > 23 || +minute > 59 || +second > 59) return undefined;
  return isoTime(date);
}

function readCron(r: ConfigReader, timezone: string): string {
  const field = r.field('cron_expression');
  const raw = r.required('cron_expression');
  if (typeof raw !== 'string') r.fail('cron_expression', 'cron_expression must be a string');
  const expression = raw.trim().replace(/\s+/g, ' ');
  if (expression === '') throw new InvalidCronExpressionError(field, 'The expression is empty');
  if (expression.length > MAX_CRON_LENGTH) throw new InvalidCronExpressionError(field, `At most ${MAX_CRON_LENGTH} characters`);
  const isMacro = CRON_MACROS.includes(expression.toLowerCase());
  // cron-parser fills missing fields in and reads six as seconds-first; only standard cron is taken.
  if (!isMacro && expression.split(' ').length !== 5) {
    throw new InvalidCronExpressionError(field, 'Expected five fields: minute hour day-of-month month day-of-week');
  }
  const normalised = isMacro ? expression.toLowerCase() : expression;
  try {
    // next() proves the expression ever fires (e.g. `0 0 30 2 *` does not).
    cronParser.parseExpression(normalised, { tz: timezone }).next();
  } catch (error) {
    throw new InvalidCronExpressionError(field, error instanceof Error ? error.message : String(error));
  }
  return normalised;
}

function readInstant(r: ConfigReader, key: string): string | null {
  const value = r.optional(key);
  if (value === undefined) return null;
  const instant = typeof value === 'string' ? isoInstant(value) : undefined;
  if (!instant) r.fail(key, `${key} must be an ISO 8601 date or date-time with a UTC offset (e.g. 2025-01-31T09:00:00Z)`);
  return instant;
}

/** Fires on a cron schedule in a time zone, optionally between two instants (a Bull repeatable job). */
export const scheduleTriggerType: TriggerTypeDefinition<ScheduleTriggerConfiguration> = {
  type: 'schedule',
  keys: ['cron_expression', 'timezone', 'start_date', 'end_date'],
  readOnlyKeys: [],

  parse(_input: Record<string, unknown>, r: ConfigReader) {
    const zone = r.optional('timezone');
    let timezone = 'UTC';
    if (zone !== undefined) {
      const known = typeof zone === 'string' ? ianaTimeZone(zone) : undefined;
      if (!known) r.fail('timezone', 'timezone must be an IANA time zone such as UTC or Europe/Paris');
      timezone = known;
    }
    const cron = readCron(r, timezone);
    const start = readInstant(r, 'start_date');
    const end = readInstant(r, 'end_date');
    if (start && end && Date.parse(end) <= Date.parse(start)) r.fail('end_date', 'end_date must be after start_date');
    return { configuration: { cron_expression: cron, timezone, start_date: start, end_date: end } };
  },

  present(configuration) {
    return { ...configuration };
  },
};
