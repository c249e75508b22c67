import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import type { JobInformation, Queue } from 'bull';
import type { Subscription } from 'rxjs';
import { DataSource, type EntityManager } from 'typeorm';
import { isUuid } from '../common/ids/uuid.js';
import { AppConfig } from '../config/app-config.js';
import { Trigger } from './entities/trigger.entity.js';
import { scheduleRepeat, type ScheduleRepeat, type ScheduleTriggerConfiguration } from './trigger-types/schedule.trigger-type.js';
import { SCHEDULES_QUEUE, ScheduleJobs, type TickJob } from './triggers.queue.js';

export interface ReconcileResult {
  /** Triggers whose repeatable job was re-registered or removed. */
  repaired: string[];
  /** Repeatable jobs that named no trigger at all, removed. */
  strays: number;
}

/**
 * Keeps one Bull repeatable job per active schedule trigger on SCHEDULES_QUEUE, named
 * ScheduleJobs.tick with `jobId` = the trigger id, so that Bull's deterministic ids make each
 * tick run once however many workers there are. Nothing about the job is stored in the
 * database: its repeat options are recomputed from the trigger's configuration, and the
 * entries of a trigger are found by their id in `getRepeatableJobs()`.
 *
 * Writers call sync() after writing the row and before committing, while they hold the row's
 * lock (or, for a new row, lockForSchedule()), so that writes to one trigger reach Redis in
 * the order they reach the database, and a failed Redis call rolls the write back.
 */
@Injectable()
export class TriggerSchedulesService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(TriggerSchedulesService.name);
  private listening?: Subscription;
  private stopped = false;

  constructor(
    @InjectQueue(SCHEDULES_QUEUE) private readonly queue: Queue,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.servesHttp) return;
    // listen$ emits when app.listen() has bound the port: on every real API start, never in the
    // e2e tests, which only init() the app and call reconcile() themselves when they mean to.
    this.listening = this.adapterHost.listen$.subscribe(() => void this.reconcileOnStart());
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    this.listening?.unsubscribe();
  }

  /** Makes the queue match the trigger as given: its job when it is an active schedule, none otherwise. */
  async sync(trigger: Trigger): Promise<void> {
    if (trigger.type !== 'schedule') return;
    await this.unschedule(trigger.id);
    if (trigger.status === 'active') await this.schedule(trigger);
  }

  /** Removes every repeatable job of a trigger; returns how many there were. */
  async unschedule(triggerId: string): Promise<number> {
    const entries = (await this.tickJobs()).filter((job) => job.id === triggerId);
    for (const entry of entries) await this.queue.removeRepeatableByKey(entry.key);
    return entries.length;
  }

  /**
   * Serialises schedule changes of a trigger whose row is not yet visible to others (create),
   * with resync() by the same id. Held until the transaction ends.
   */
  async lockForSchedule(manager: EntityManager, triggerId: string): Promise<void> {
    await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended('trigger-schedule:' || $1, 0))`, [triggerId]);
  }

  /** Re-reads one trigger under lock and makes its job match (or removes it when the trigger is gone). */
  async resync(triggerId: string): Promise<void> {
    if (!isUuid(triggerId)) {
      await this.unschedule(triggerId);
      return;
    }
    await this.dataSource.transaction(async (manager) => {
      await this.lockForSchedule(manager, triggerId);
      const trigger = await manager.getRepository(Trigger).findOne({ where: { id: triggerId }, lock: { mode: 'pessimistic_write' } });
      if (trigger) await this.sync(trigger);
      else await this.unschedule(triggerId);
    });
  }

  /**
   * Makes the repeatable jobs match the active schedule triggers in the database: adds missing
   * ones, replaces ones whose cron, zone or end differ, removes orphans. Redis is read before the
   * database, and every change is re-decided under the trigger's lock, so running beside API
   * writes (another instance starting) is safe.
   */
  async reconcile(): Promise<ReconcileResult> {
    const jobs = await this.tickJobs();
    const byTrigger = new Map<string, JobInformation[]>();
    let strays = 0;
    for (const job of jobs) {
      if (!job.id) {
        await this.queue.removeRepeatableByKey(job.key);
        strays += 1;
        continue;
      }
      byTrigger.set(job.id, [...(byTrigger.get(job.id) ?? []), job]);
    }

    const active = await this.dataSource.getRepository(Trigger).find({
      select: { id: true, configuration: true },
      where: { type: 'schedule', status: 'active' },
    });
    const drifted = new Set<string>();
    for (const trigger of active) {
      const have = byTrigger.get(trigger.id) ?? [];
      const want = scheduleRepeat(trigger.configuration as unknown as ScheduleTriggerConfiguration);
      if (have.length !== 1 || !sameSchedule(have[0], want)) drifted.add(trigger.id);
      byTrigger.delete(trigger.id);
    }
    for (const orphan of byTrigger.keys()) drifted.add(orphan);

    for (const id of drifted) await this.resync(id);
    return { repaired: [...drifted], strays };
  }

  private async schedule(trigger: Trigger): Promise<void> {
    const repeat = scheduleRepeat(trigger.configuration as unknown as ScheduleTriggerConfiguration);
    const data: TickJob = { triggerId: trigger.id };
    // A tick that fails is recorded by the firing path as a failed trigger execution; it is not retried late.
    await this.queue.add(ScheduleJobs.tick, data, { jobId: trigger.id, repeat, removeOnComplete: true, removeOnFail: 100 });
  }

  private async tickJobs(): Promise<JobInformation[]> {
    return (await this.queue.getRepeatableJobs()).filter((job) => job.name === ScheduleJobs.tick);
  }

  private async reconcileOnStart(): Promise<void> {
    if (this.stopped) return;
    try {
      const { repaired, strays } = await this.reconcile();
      if (repaired.length > 0 || strays > 0) {
        this.logger.log(`Schedules reconciled: ${repaired.length} trigger(s) repaired, ${strays} stray job(s) removed`);
      }
    } catch (error) {
      if (!this.stopped) this.logger.error({ err: error }, 'Reconciling schedule jobs failed; they are checked again at the next start');
    }
  }
}

function sameSchedule(job: JobInformation, want: ScheduleRepeat): boolean {
  const end = want.endDate ? Date.parse(want.endDate) : null;
  // Bull reads the end from the job key: absent is null (its typings say number).
  return job.cron === want.cron && job.tz === want.tz && ((job.endDate as number | null) || null) === end;
}
