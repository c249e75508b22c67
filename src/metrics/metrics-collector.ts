import { getQueueToken } from '@nestjs/bull';
import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { collectDefaultMetrics } from 'prom-client';
import type { DataSource } from 'typeorm';
import { ANALYTICS_FILES_QUEUE } from '../analytics/files/analytics-files.queue.js';
import { SEND_BACKLOG } from '../channels/channels.sql.js';
import { OUTBOX_LAG_SECONDS } from '../events/outbox.sql.js';
import { CHANNEL_SENDS_QUEUE } from '../executions/channels/channel-sends.queue.js';
import { EXECUTIONS_QUEUE } from '../executions/executions.queue.js';
import { ROLLUP_BACKLOG } from '../rollups/rollup-backlog.sql.js';
import { BURSTS_QUEUE, SCHEDULES_QUEUE } from '../triggers/triggers.queue.js';
import { WEBHOOKS_QUEUE } from '../webhooks/webhooks.queue.js';
import { metricsRegistry } from './metrics.middleware.js';
import { setScrapeSource, type ScrapeSnapshot } from './scrape-gauges.js';

export const QUEUE_NAMES = [EXECUTIONS_QUEUE, CHANNEL_SENDS_QUEUE, WEBHOOKS_QUEUE, SCHEDULES_QUEUE, BURSTS_QUEUE, ANALYTICS_FILES_QUEUE];

/** A scrape storm reads Redis and PostgreSQL once per this period, whatever the number of scrapes. */
export const SNAPSHOT_TTL_MS = 5_000;
const READ_TIMEOUT_MS = 2_000;

/** One statement for the database gauges: the outbox lag, the send backlog, the rollup backlog (each module's SQL). */
const DATABASE_GAUGES = `
  SELECT (${OUTBOX_LAG_SECONDS}) AS outbox_lag_seconds, s.sends, s.oldest_seconds,
         (SELECT json_agg(json_build_object('log', r.log, 'rows', r.rows)) FROM (${ROLLUP_BACKLOG}) r) AS rollup_backlog
    FROM (${SEND_BACKLOG}) s`;

interface DatabaseGaugesRow {
  outbox_lag_seconds: number | null;
  sends: number;
  oldest_seconds: number | null;
  rollup_backlog: { log: string; rows: number }[];
}

/**
 * Feeds the scrape-time gauges (scrape-gauges.ts) of this process, API or worker: Bull's job counts
 * and oldest waiting job per queue (the queues' own clients, no new connection), and one statement for
 * the database gauges. Read when scraped, kept SNAPSHOT_TTL_MS; a dependency that does not answer
 * within 2 s leaves its gauges without values for that scrape. Also starts the process metrics.
 */
@Injectable()
export class MetricsCollector implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Metrics');
  private cached?: { at: number; snapshot: Promise<ScrapeSnapshot> };
  private unset?: () => void;

  constructor(
    private readonly moduleRef: ModuleRef,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  onModuleInit(): void {
    if (!metricsRegistry.getSingleMetric('process_cpu_seconds_total')) collectDefaultMetrics({ register: metricsRegistry });
    this.unset = setScrapeSource(() => this.snapshot());
  }

  onModuleDestroy(): void {
    this.unset?.();
  }

  snapshot(): Promise<ScrapeSnapshot> {
    const now = Date.now();
    if (!this.cached || now - this.cached.at >= SNAPSHOT_TTL_MS) this.cached = { at: now, snapshot: this.read() };
    return this.cached.snapshot;
  }

  private async read(): Promise<ScrapeSnapshot> {
    const [queues, database] = await Promise.all([
      this.within(this.readQueues(), 'Redis'),
      this.within(this.readDatabase(), 'PostgreSQL'),
    ]);
    return { queues, database };
  }

  private async readQueues(): Promise<ScrapeSnapshot['queues']> {
    const queues = QUEUE_NAMES.map((name) => ({ name, queue: this.queue(name) })).filter((q): q is { name: string; queue: Queue } => q.queue !== undefined);
    const now = Date.now();
    return Promise.all(
      queues.map(async ({ name, queue }) => {
        const [counts, [oldest]] = await Promise.all([queue.getJobCounts(), queue.getJobs(['waiting'], 0, 0, true)]);
        // Waiting since it was added, or since its delay ran out.
        const since = oldest ? oldest.timestamp + (oldest.opts.delay ?? 0) : now;
        return {
          queue: name,
          waiting: counts.waiting,
          active: counts.active,
          delayed: counts.delayed,
          failed: counts.failed,
          oldestWaitingSeconds: Math.max(0, (now - since) / 1000),
        };
      }),
    );
  }

  private async readDatabase(): Promise<ScrapeSnapshot['database']> {
    const [row] = (await this.dataSource.query(DATABASE_GAUGES)) as DatabaseGaugesRow[];
    return {
      outboxLagSeconds: Math.max(0, row!.outbox_lag_seconds ?? 0),
      sendBacklog: row!.sends,
      sendBacklogOldestSeconds: Math.max(0, row!.oldest_seconds ?? 0),
      rollupBacklog: row!.rollup_backlog ?? [],
    };
  }

  private queue(name: string): Queue | undefined {
    try {
      return this.moduleRef.get<Queue>(getQueueToken(name), { strict: false });
    } catch {
      return undefined;
    }
  }

  private async within<T>(work: Promise<T>, what: string): Promise<T | undefined> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), READ_TIMEOUT_MS)))]);
    } catch (error) {
      this.logger.warn(`metrics: ${what} did not answer (${(error as Error).message}); its gauges are left out of this scrape`);
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }
}
