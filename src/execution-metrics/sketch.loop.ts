import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { RollupFolder } from '../rollups/rollup-folder.js';
import { foldSpansOfAll, poolQuery, TRIGGER_SKETCHES, WORKFLOW_SKETCHES, type Query } from './customer-days.js';

/** How often a worker sketches the days and months closed lately; the first pass, a catch-up of the year, comes a little after start. */
export const SKETCH_EVERY_MS = 3_600_000;
/** The days an hourly pass looks back: the last closed month (and the one before while a month is young), late folds. */
export const RECENT_DAYS = 31;
const FIRST_PASS_AFTER_MS = 30_000;
/** The session advisory lock that makes one pass at a time across the workers (any number, fixed). */
const SKETCH_LOCK = 7_710_000_002;
const DAY_MS = 86_400_000;
/** The longest period a metrics or analytics read covers: its closed days and months are the first pass's. */
const MAX_PERIOD_DAYS = 366;

export interface SketchReport {
  /** False when another worker held the pass. */
  ran: boolean;
  /** Sketches folded (missing or stale), workflows' and triggers' together, by span. */
  folded: { day: number; month: number };
}

/** The first instants of the closed UTC months that start within the last `days` days before `now`, newest first. */
export function closedMonths(now: Date, days: number): Date[] {
  const thisMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
  const first = new Date(now.getTime() - days * DAY_MS);
  const months: Date[] = [];
  for (let m = Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), 1); m < thisMonth; m = Date.UTC(new Date(m).getUTCFullYear(), new Date(m).getUTCMonth() + 1, 1)) {
    months.push(new Date(m));
  }
  return months.reverse();
}

/**
 * Keeps the distinct-customer sketches of every closed UTC day and month of every workflow and trigger stored,
 * in the workers: a period's first read (a year by day or by month) then merges stored sketches instead of
 * folding its hourly customer sets while the caller waits. The first pass of a process covers every closed
 * span a period may reach (the last MAX_PERIOD_DAYS); the hourly ones after it, the last RECENT_DAYS (a day or a
 * month is sketched within the hour after it ends). What changes later in an older span (a late fold; a
 * retention trim does not: it moves no rollup) makes its stored checksum stale, and the next read folds it.
 * One pass at a time across the workers (an advisory lock); a pass walks the day rows of its range once per kind.
 */
@Injectable()
export class SketchLoop implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SketchLoop.name);
  private readonly query: Query;
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly folder: RollupFolder,
  ) {
    this.query = poolQuery(dataSource);
  }

  onApplicationBootstrap(): void {
    this.schedule(FIRST_PASS_AFTER_MS, MAX_PERIOD_DAYS);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number, days: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.pass(new Date(), days)
        .then((report) => {
          if (report.folded.day + report.folded.month > 0) this.logger.log(`Sketches folded: ${report.folded.day} days, ${report.folded.month} months`);
        })
        .catch((e: Error) => this.logger.warn(`Sketches not folded (next pass): ${e.message}`))
        .then(() => this.schedule(SKETCH_EVERY_MS, RECENT_DAYS));
    }, delayMs);
    this.timer.unref();
  }

  /** One pass: the closed UTC days of the last `days` days before `now`, and the closed months starting in them. */
  async pass(now: Date, days: number): Promise<SketchReport> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      const [{ locked }] = (await runner.query(`SELECT pg_try_advisory_lock($1) AS locked`, [SKETCH_LOCK])) as { locked: boolean }[];
      const folded = { day: 0, month: 0 };
      if (!locked) return { ran: false, folded };
      try {
        // Every execution committed so far is in the day rows and hourly sets read below.
        await this.folder.catchUp();
        const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
        const months = closedMonths(now, days);
        const ranges = {
          day: { from: new Date(today - days * DAY_MS), to: new Date(today) },
          month: { from: months.at(-1), to: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)) },
        };
        for (const span of ['month', 'day'] as const) {
          const { from, to } = ranges[span];
          if (from === undefined) continue;
          for (const tables of [WORKFLOW_SKETCHES, TRIGGER_SKETCHES]) {
            if (this.stopped) return { ran: true, folded };
            folded[span] += await foldSpansOfAll(this.query, tables, span, from, to);
          }
        }
        return { ran: true, folded };
      } finally {
        await runner.query(`SELECT pg_advisory_unlock($1)`, [SKETCH_LOCK]);
      }
    } finally {
      await runner.release();
    }
  }
}
