import { isoTime } from './iso-time.js';
/**
 * How a period `[start, end]` (end inclusive, to the millisecond) is read from rollups of whole
 * UTC units (hours or days) plus the recorded rows of the rest — the one rule behind the hourly
 * metrics and workflow analytics (hourSplit), `/performance`'s day rollups (splitDays), the journey day
 * rollups (journeySplit) and the answer days. Everything is in integer microseconds, PostgreSQL's
 * precision: the period's exclusive bound is `end + 1 µs`, so a row at 23:59:59.9995 is outside a
 * period ending at 23:59:59.999, in the rollups as in the rows.
 *
 * Two ways of reading the ends:
 * - `inside`: the whole units inside the period from the rollups, the partial units at both ends
 *   from the rows (added). What rollups that cannot subtract rows need (duration histograms, hour
 *   customer sets). No whole unit inside: the whole period raw, and `whole` empty at `start`.
 * - `nearest`: at each end the smaller of the two ways is taken: the partial unit's rows added to
 *   the whole units inside, or the unit read whole from its rollup row and the rows outside the
 *   period subtracted (`sign` -1; the rest of a day that ends in the future, "now", holds no rows
 *   yet). At most half a unit of rows is read at each end. Only when the period crosses no unit
 *   boundary it is read raw.
 */
export type SplitUnit = 'hour' | 'day';
export type SplitWay = 'inside' | 'nearest';

/** Rows in `[from, to)` (µs since the epoch), added (`sign` 1) or subtracted (-1). */
export interface SplitRange {
  from: number;
  to: number;
  sign: 1 | -1;
}

export interface PeriodSplit {
  /** Head then tail; either may be empty (`from` = `to`). */
  ranges: [SplitRange, SplitRange];
  /** The whole units `[wholeFrom, wholeTo)` (µs) read from the rollups; empty: both at `start`. */
  wholeFrom: number;
  wholeTo: number;
}

export interface SplitOptions {
  unit: SplitUnit;
  way: SplitWay;
  /**
   * `inside` only: a unit is whole when its last *millisecond* is in the period (its last 999 µs
   * counted with it), as `/performance` has always read a period ending at 23:59:59.999: its
   * rollups cannot subtract those microseconds, and that day read raw would cost a day of rows.
   */
  wholeLastMillisecond?: boolean;
}

const UNIT_US: Record<SplitUnit, number> = { hour: 3_600_000_000, day: 86_400_000_000 };

export function splitPeriod(start: Date, end: Date, options: SplitOptions): PeriodSplit {
  const u = UNIT_US[options.unit];
  const s = start.getTime() * 1000;
  const e = end.getTime() * 1000 + 1;
  const floorS = Math.floor(s / u) * u;
  const ceilS = Math.ceil(s / u) * u;
  const floorE = Math.floor((options.way === 'inside' && options.wholeLastMillisecond ? e + 999 : e) / u) * u;
  const ceilE = Math.ceil(e / u) * u;
  const none: SplitRange = { from: s, to: s, sign: 1 };
  const all: SplitRange = { from: s, to: e, sign: 1 };
  if (options.way === 'inside') {
    if (ceilS >= floorE) return { ranges: [none, all], wholeFrom: s, wholeTo: s };
    return { ranges: [{ from: s, to: ceilS, sign: 1 }, { from: floorE, to: Math.max(floorE, e), sign: 1 }], wholeFrom: ceilS, wholeTo: floorE };
  }
  if (ceilS > floorE) return { ranges: [all, none], wholeFrom: s, wholeTo: s };
  const head = ceilS - s <= s - floorS ? { from: s, to: ceilS, sign: 1 as const, at: ceilS } : { from: floorS, to: s, sign: -1 as const, at: floorS };
  const tail = e - floorE <= ceilE - e ? { from: floorE, to: e, sign: 1 as const, at: floorE } : { from: e, to: ceilE, sign: -1 as const, at: ceilE };
  return {
    ranges: [
      { from: head.from, to: head.to, sign: head.sign },
      { from: tail.from, to: tail.to, sign: tail.sign },
    ],
    wholeFrom: head.at,
    wholeTo: tail.at,
  };
}

/** No whole unit: the whole period from the rows (the reference the rollups are tested against). */
export function rawSplit(start: Date, end: Date): PeriodSplit {
  const s = start.getTime() * 1000;
  return { ranges: [{ from: s, to: end.getTime() * 1000 + 1, sign: 1 }, { from: s, to: s, sign: 1 }], wholeFrom: s, wholeTo: s };
}

/** An instant in microseconds since the epoch as an ISO string PostgreSQL reads exactly (Date has milliseconds only). */
export function isoMicros(us: number): string {
  const ms = Math.floor(us / 1000);
  return `${isoTime(new Date(ms)).slice(0, -1)}${String(us - ms * 1000).padStart(3, '0')}Z`;
}

/** A bound that is a whole millisecond (unit boundaries, `start`) as a Date. */
export function msDate(us: number): Date {
  if (us % 1000 !== 0) throw new Error(`${us} µs is not a whole millisecond`);
  return new Date(us / 1000);
}

/**
 * How the hourly rollups read a period (way `inside`, in hours): the whole UTC hours inside it
 * from the hourly rollups (workflow_execution_hours, trigger_execution_hours), and the rest — the
 * partial hours at its two ends, at most two hours of rows — from the executions themselves
 * through the (parent, time) index. `raw` is `[from, to)` and `[from2, to2]` (either may be
 * empty); `hours` is `[from, to)`.
 */
export interface HourSplit {
  rawFrom: Date;
  rawTo: Date;
  rawFrom2: Date;
  rawTo2: Date;
  hoursFrom: Date;
  hoursTo: Date;
}

export function hourSplit(start: Date, end: Date): HourSplit {
  // The hour holding `end` is partial (end is inclusive, to the millisecond): it is read raw.
  const split = splitPeriod(start, end, { unit: 'hour', way: 'inside' });
  const [hoursFrom, hoursTo] = [msDate(split.wholeFrom), msDate(split.wholeTo)];
  return { rawFrom: start, rawTo: hoursFrom, rawFrom2: hoursTo, rawTo2: end, hoursFrom, hoursTo };
}
