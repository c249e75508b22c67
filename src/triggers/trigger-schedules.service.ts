import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Job, JobInformation, Queue } from 'bull';
import type { Subscription } from 'rxjs';
import { DataSource } from 'typeorm';
import { isUuid } from '../common/ids/uuid.js';
import { AppConfig } from '../config/app-config.js';
import { WorkflowsService } from '../workflows/workflows.service.js';
import { Trigger } from './entities/trigger.entity.js';
import { scheduleRepeat, type ScheduleRepeat, type ScheduleTriggerConfiguration } from './trigger-types/schedule.trigger-type.js';
import { SCHEDULES_QUEUE, ScheduleJobs, type TickJob } from './triggers.queue.js';

export interface ReconcileResult {
  /** Triggers whose repeatable job was re-registered or removed. */
  repaired: string[];
  /** Repeatable jobs that named no trigger at all, removed. */
  strays: number;
}

/** What decides a trigger's job: its type, status and configuration (a row as it was, or is). */
export type ScheduleState = Pick<Trigger, 'id' | 'type' | 'status' | 'configuration'>;

const RECONCILE_EVERY_MS = 10 * 60_000;

/**
 * Keeps one Bull repeatable job per active schedule trigger on SCHEDULES_QUEUE, named
 * ScheduleJobs.tick with `jobId` = the trigger id, so that Bull's deterministic ids make each
 * tick run once however many workers there are. Nothing about the job is stored in the
 * database: its repeat options are computed from the trigger's configuration, and so is its key.
 *
 * A write is O(1) in Redis and runs after its transaction commits (never inside it): apply()
 * removes the job of the row as it was and adds the job of the row as it is, each by its key.
 * Two writes of one trigger can reach Redis in another order than they committed; the leftover
 * job then belongs to a schedule the row no longer has, and its first tick removes it without
 * firing (isCurrent). A job lost from Redis (a failed call after the commit) is restored by
 * reconcile(), which each API process runs when it starts listening and every 10 minutes.
 */
@Injectable()
export class TriggerSchedulesService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(TriggerSchedulesService.name);
  private listening?: Subscription;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    @InjectQueue(SCHEDULES_QUEUE) private readonly queue: Queue,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    private readonly adapterHost: HttpAdapterHost,
    workflows: WorkflowsService,
  ) {
    // A workflow's deletion cascades to its triggers in the database; their jobs go once it is committed.
    workflows.onDelete(async (organizationId, workflowId) => {
      const scheduled: ScheduleState[] = await this.dataSource.getRepository(Trigger).find({
        select: { id: true, type: true, status: true, configuration: true },
        where: { organizationId, workflowId, type: 'schedule', status: 'active' },
      });
      return async () => {
        for (const trigger of scheduled) await this.apply(trigger, null);
      };
    });
  }

  onApplicationBootstrap(): void {
    if (!this.config.servesHttp) return;
    // listen$ emits when app.listen() has bound the port: on every real API start, never in the
    // e2e tests, which only init() the app and call reconcile() themselves when they mean to.
    this.listening = this.adapterHost.listen$.subscribe(() => {
      void this.reconcileQuietly();
      this.timer = setInterval(() => void this.reconcileQuietly(), RECONCILE_EVERY_MS);
      this.timer.unref();
    });
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    this.listening?.unsubscribe();
    clearInterval(this.timer);
  }

  /**
   * After a committed write: the job of `before` (the row as it was; null for a new one) removed
   * unless `after` (the row as it is; null once deleted) has the same schedule, and the job of
   * `after` added when it is an active schedule (again when it exists: adding is idempotent and
   * heals a job lost from Redis). A failure is logged, not thrown: the write stands, and
   * reconcile() or the stale job's own tick puts Redis right.
   */
  async apply(before: ScheduleState | null, after: ScheduleState | null): Promise<void> {
    const was = before ? repeatOf(before) : null;
    const is = after ? repeatOf(after) : null;
    if (!was && !is) return;
    try {
      if (was && !(is && sameRepeat(was, is))) await this.queue.removeRepeatable(ScheduleJobs.tick, { ...was, jobId: before!.id });
      if (is) await this.schedule(after!.id, is);
    } catch (error) {
      this.logger.error({ err: error }, `Updating the schedule job of trigger ${(after ?? before)!.id} failed; the next reconcile repairs it`);
    }
  }

  /**
   * Whether a tick's job is the current job of its trigger: the trigger exists, is an active
   * schedule, and has the schedule the job was made from. A tick that is not removes its own
   * repeatable job (by the key Bull stored on it) and fires nothing.
   */
  async isCurrent(job: Job<TickJob>, trigger: ScheduleState | null): Promise<boolean> {
    const want = trigger ? repeatOf(trigger) : null;
    const have = job.opts.repeat as (ScheduleRepeat & { key?: string }) | undefined;
    if (want && have && sameRepeat(want, { cron: have.cron, tz: have.tz, startDate: have.startDate, endDate: have.endDate })) return true;
    if (have?.key) await this.queue.removeRepeatableByKey(have.key);
    return false;
  }

  /** Re-reads one trigger and makes its jobs match: `jobs` are the ones it has now (from reconcile). */
  private async resync(triggerId: string, jobs: JobInformation[]): Promise<void> {
    const trigger = isUuid(triggerId)
      ? await this.dataSource.getRepository(Trigger).findOne({ select: { id: true, type: true, status: true, configuration: true }, where: { id: triggerId } })
      : null;
    const want = trigger ? repeatOf(trigger) : null;
    for (const job of jobs) if (!want || !sameSchedule(job, want)) await this.queue.removeRepeatableByKey(job.key);
    if (want) await this.schedule(triggerId, want);
  }

  /**
   * Makes the repeatable jobs match the active schedule triggers in the database: adds missing
   * ones, replaces ones whose cron, zone or end differ, removes orphans. Redis is read before the
   * database, and each trigger is read again before its jobs change (resync, no lock and no
   * transaction): beside an API write (another instance starting) a job of a schedule the
   * trigger no longer has can be left behind, and its first tick removes it (isCurrent).
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

    const all = new Map<string, JobInformation[]>();
    for (const job of jobs) if (job.id) all.set(job.id, [...(all.get(job.id) ?? []), job]);
    for (const id of drifted) await this.resync(id, all.get(id) ?? []);
    return { repaired: [...drifted], strays };
  }

  private async schedule(triggerId: string, repeat: ScheduleRepeat): Promise<void> {
    const data: TickJob = { triggerId };
    // A tick that fails is recorded by the firing path as a failed trigger execution; it is not retried late.
    await this.queue.add(ScheduleJobs.tick, data, { jobId: triggerId, repeat: { ...repeat }, removeOnComplete: true, removeOnFail: 100 });
  }

  private async tickJobs(): Promise<JobInformation[]> {
    return (await this.queue.getRepeatableJobs()).filter((job) => job.name === ScheduleJobs.tick);
  }

  private async reconcileQuietly(): Promise<void> {
    if (this.stopped) return;
    try {
      const { repaired, strays } = await this.reconcile();
      if (repaired.length > 0 || strays > 0) {
        this.logger.log(`Schedules reconciled: ${repaired.length} trigger(s) repaired, ${strays} stray job(s) removed`);
      }
    } catch (error) {
      if (!this.stopped) this.logger.error({ err: error }, 'Reconciling schedule jobs failed; they are checked again in 10 minutes');
    }
  }
}

/** The repeat options of a trigger's job, or null when it should have none. */
function repeatOf(trigger: ScheduleState): ScheduleRepeat | null {
  if (trigger.type !== 'schedule' || trigger.status !== 'active') return null;
  return scheduleRepeat(trigger.configuration as unknown as ScheduleTriggerConfiguration);
}

function sameRepeat(a: ScheduleRepeat, b: ScheduleRepeat): boolean {
  const time = (x?: string) => (x ? Date.parse(x) : null);
  return a.cron === b.cron && a.tz === b.tz && time(a.startDate) === time(b.startDate) && time(a.endDate) === time(b.endDate);
}

function sameSchedule(job: JobInformation, want: ScheduleRepeat): boolean {
  const end = want.endDate ? Date.parse(want.endDate) : null;
  // Bull reads the end from the job key: absent is null (its typings say number).
  return job.cron === want.cron && job.tz === want.tz && ((job.endDate as number | null) || null) === end;
}
