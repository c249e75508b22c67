import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { RollupFolder } from '../rollups/rollup-folder.js';
import { foldMonthOfAll, TRIGGER_SKETCHES, WORKFLOW_SKETCHES, type Query } from './customer-days.js';

/** How often a worker checks the last closed month; the first pass, a catch-up of the year, comes a little after start. */
export const MONTH_SKETCH_EVERY_MS = 3_600_000;
const FIRST_PASS_AFTER_MS = 30_000;
/** The session advisory lock that makes one pass at a time across the workers (any number, fixed). */
const MONTH_SKETCH_LOCK = 7_710_000_002;
const DAY_MS = 86_400_000;
/** The longest period a metrics or analytics read covers: its closed months are the first pass's. */
const MAX_PERIOD_DAYS = 366;

export interface MonthSketchReport {
  /** False when another worker held the pass. */
  ran: boolean;
  /** Month sketches folded (missing or stale), workflows' and triggers' together. */
  folded: number;
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
 * Keeps the distinct-customer sketch of every closed UTC month of every workflow and trigger stored, in the
 * workers: a period of a year then merges twelve stored sketches on its first read instead of folding a
 * year of hourly customer sets while the caller waits. The first pass of a process covers every closed
 * month a period may reach (the last MAX_PERIOD_DAYS); the hourly ones after it, the last closed month (a
 * month is sketched within the hour after it ends). What changes later in an older month (a late fold, a
 * retention trim does not: it moves no rollup) makes its stored checksum stale, and the next read folds it.
 * One pass at a time across the workers (an advisory lock); a pass reads each month's day rows once.
 */
@Injectable()
export class MonthSketchLoop implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(MonthSketchLoop.name);
  private readonly query: Query;
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;
  private stopped = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly folder: RollupFolder,
  ) {
    this.query = async (sql, values) => (await ((dataSource.driver as PostgresDriver).master as Pool).query(sql, values)).rows;
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
          if (report.folded > 0) this.logger.log(`Month sketches: ${report.folded} folded`);
          return MONTH_SKETCH_EVERY_MS;
        })
        .catch((e: Error) => {
          this.logger.warn(`Month sketches not folded (next pass): ${e.message}`);
          return MONTH_SKETCH_EVERY_MS;
        })
        // After the first pass, the last closed month (and the one before while a month is young: late folds).
        .then((next) => this.schedule(next, 31));
    }, delayMs);
    this.timer.unref();
  }

  /** One pass: the closed months starting within the last `days` days before `now`, newest first. */
  async pass(now: Date, days: number): Promise<MonthSketchReport> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      const [{ locked }] = (await runner.query(`SELECT pg_try_advisory_lock($1) AS locked`, [MONTH_SKETCH_LOCK])) as { locked: boolean }[];
      if (!locked) return { ran: false, folded: 0 };
      try {
        // Every execution committed so far is in the day rows and hourly sets read below.
        await this.folder.catchUp();
        let folded = 0;
        for (const month of closedMonths(now, days)) {
          for (const tables of [WORKFLOW_SKETCHES, TRIGGER_SKETCHES]) {
            if (this.stopped) return { ran: true, folded };
            folded += await foldMonthOfAll(this.query, tables, month);
          }
        }
        return { ran: true, folded };
      } finally {
        await runner.query(`SELECT pg_advisory_unlock($1)`, [MONTH_SKETCH_LOCK]);
      }
    } finally {
      await runner.release();
    }
  }
}
