import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import type { DataSource } from 'typeorm';
import { uuidv7Floor } from '../common/ids/uuid-v7.js';
import { AppConfig } from '../config/app-config.js';
import { subscribes } from './webhooks.sql.js';
import { deliveriesCreated, outboxRelayed } from './webhooks.metrics.js';
import { deliverJobOptions, WEBHOOKS_QUEUE, WebhookJobs } from './webhooks.queue.js';

const BATCH = 1000;
/**
 * How often the relay looks for new events. Not notified: a NOTIFY in the writing transactions
 * made every one of them take the same lock at commit (migration OutboxPolled).
 */
export const RELAY_POLL_MS = 100;
const SWEEP_MS = 15_000;
/** A pending delivery overdue this long has lost its job (relay died between commit and enqueue, Redis lost it). */
const ORPHAN_AFTER = '30 seconds';
const RETENTION_EVERY_MS = 3_600_000;

/**
 * Turns unpublished outbox rows into deliveries, in one statement per batch: rows are claimed with
 * FOR UPDATE SKIP LOCKED (several relays never take the same row), joined to the active webhooks of
 * their organization that subscribe to their type (exact, `group.*` or `*`), one delivery row is
 * inserted per match, and every claimed row is marked published — rows whose webhooks were deactivated
 * since included, as a set, with no per-row work. (Events no active webhook subscribed to when they
 * occurred were never written: insertOutboxEvents.) After the commit, one Bull job per
 * delivery (job id = delivery id). A relay that dies between the commit and the enqueue loses
 * nothing: the sweep re-enqueues pending deliveries that are overdue.
 *
 * Runs every RELAY_POLL_MS (an empty look is one index probe), and at once again after a full batch.
 */
const RELAY_SQL = `
  WITH batch AS (
    SELECT id, organization_id, type, data, occurred_at, traceparent FROM outbox_events
     WHERE published_at IS NULL
     ORDER BY occurred_at
     LIMIT $1
       FOR UPDATE SKIP LOCKED
  ), published AS (
    UPDATE outbox_events o SET published_at = now() FROM batch b WHERE o.id = b.id
  ), inserted AS (
    INSERT INTO webhook_deliveries (organization_id, webhook_id, event_id, event_type, event_timestamp, data, status, next_attempt_at, traceparent)
    SELECT b.organization_id, w.id, b.id, b.type, b.occurred_at, b.data, 'pending', now(), b.traceparent
      FROM batch b
      JOIN webhooks w ON w.organization_id = b.organization_id AND w.active
       AND ${subscribes('w', 'b.type')}
     ORDER BY b.occurred_at
    RETURNING id
  )
  SELECT (SELECT count(*) FROM batch)::int AS claimed, COALESCE((SELECT array_agg(id::text) FROM inserted), '{}') AS ids`;

@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(OutboxRelay.name);
  private timers: NodeJS.Timeout[] = [];
  private running = false;
  private again = false;
  private pending?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectQueue(WEBHOOKS_QUEUE) private readonly queue: Queue,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.timers.push(setInterval(() => this.wake(), RELAY_POLL_MS));
    this.timers.push(setInterval(() => void this.sweep().catch((e: Error) => this.logger.warn(`Sweep failed: ${e.message}`)), SWEEP_MS));
    this.timers.push(setInterval(() => void this.purge().catch((e: Error) => this.logger.warn(`Outbox purge failed: ${e.message}`)), RETENTION_EVERY_MS));
    for (const t of this.timers) t.unref();
    this.wake();
    void this.sweep().catch(() => undefined);
    void this.purge().catch(() => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    if (this.pending) clearTimeout(this.pending);
    while (this.running) await new Promise((r) => setTimeout(r, 20));
  }

  /** Runs the relay now, or once more right after the current run. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.run();
    }, 0);
    this.pending.unref();
  }

  private run(): void {
    if (this.stopped || this.running) return;
    this.running = true;
    this.again = false;
    void (async () => {
      try {
        while (!this.stopped && (await this.relayBatch()) === BATCH) {
          // a full batch: more may be waiting
        }
      } catch (error) {
        this.logger.warn(`Relay failed (retried on the next poll): ${(error as Error).message}`);
      } finally {
        this.running = false;
        if (this.again) this.wake();
      }
    })();
  }

  /**
   * One batch; returns how many outbox rows it claimed. One statement, atomic by itself: no
   * transaction around it (BEGIN and COMMIT were two of its three round trips).
   */
  async relayBatch(): Promise<number> {
    const [{ claimed, ids }] = (await this.dataSource.query(RELAY_SQL, [BATCH])) as { claimed: number; ids: string[] }[];
    if (claimed > 0) outboxRelayed.inc(claimed);
    if (ids.length > 0) {
      deliveriesCreated.inc(ids.length);
      await this.enqueue(ids);
    }
    return claimed;
  }

  private async enqueue(ids: string[]): Promise<void> {
    await this.queue.addBulk(ids.map((deliveryId) => ({ name: WebhookJobs.deliver, data: { deliveryId }, opts: deliverJobOptions(deliveryId) })));
  }

  /** Re-enqueues pending deliveries that are overdue and not leased: their job was lost. */
  async sweep(): Promise<number> {
    const rows = (await this.dataSource.query(
      `SELECT id FROM webhook_deliveries
        WHERE status = 'pending' AND next_attempt_at < now() - interval '${ORPHAN_AFTER}'
          AND (locked_until IS NULL OR locked_until < now())
        ORDER BY next_attempt_at LIMIT 5000`,
    )) as { id: string }[];
    if (rows.length > 0) await this.enqueue(rows.map((r) => r.id));
    return rows.length;
  }

  /**
   * Deletes published outbox rows whose event is older than OUTBOX_RETENTION, or than EXECUTION_RETENTION
   * when that is shorter (an event carries execution data: it does not outlive the executions), in bounded
   * batches. By the time-ordered primary key (an event's id carries its time), so no index on published_at
   * is kept up on every event for an hourly purge (migration OutboxPurgeByKey).
   */
  async purge(): Promise<number> {
    let total = 0;
    const retentionMs = Math.min(this.config.webhooks.outboxRetentionMs, this.config.executionRetentionMs ?? Infinity);
    const before = uuidv7Floor(Date.now() - retentionMs);
    for (;;) {
      const [, count] = (await this.dataSource.query(
        `DELETE FROM outbox_events WHERE id IN (
           SELECT id FROM outbox_events WHERE id < $1::uuid AND published_at IS NOT NULL ORDER BY id LIMIT 10000)`,
        [before],
      )) as [unknown, number];
      total += count;
      if (count < 10000 || this.stopped) return total;
    }
  }
}
