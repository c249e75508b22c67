import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppConfig } from '../config/app-config.js';
import { ExecutionEngine, type RunResult } from './execution-engine.service.js';
import { EXECUTIONS_QUEUE, ExecutionJobs, type ExpireJob, type RunJob } from './executions.queue.js';
import { contextFromTraceparent, inSpan, SpanKind } from '../common/tracing/trace-context.js';
import { ExecutionsService, RUN_ATTEMPTS } from './executions.service.js';

/**
 * The execution engine's worker side: runs jobs with WORKER_CONCURRENCY, schedules the
 * expiry of each wait, fails an execution after its last attempt, and sweeps
 * (EXECUTION_SWEEP_INTERVAL) for overdue waits and executions whose job was lost
 * (EXECUTION_ORPHAN_AFTER). On shutdown it takes no new job, lets the running ones finish for
 * SHUTDOWN_TIMEOUT and hands the rest back to the queue for another worker.
 */
@Injectable()
export class ExecutionsProcessor implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(ExecutionsProcessor.name);
  /** The jobs this process is running, to hand back if they do not finish in time at shutdown. */
  private readonly active = new Set<Job>();

  constructor(
    @InjectQueue(EXECUTIONS_QUEUE) private readonly queue: Queue,
    private readonly engine: ExecutionEngine,
    private readonly executions: ExecutionsService,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    void this.queue.process(ExecutionJobs.run, this.config.workerConcurrency, (job: Job<RunJob>) => this.tracked(job, () => this.run(job)));
    void this.queue.process(ExecutionJobs.expire, 2, (job: Job<ExpireJob>) =>
      this.tracked(job, async () => this.afterRun(job.data.executionId, await this.engine.expire(job.data.executionId))),
    );
    void this.queue.process(ExecutionJobs.sweep, 1, (job: Job) => this.tracked(job, () => this.sweep()));
    this.queue.on('failed', (job: Job, error: Error) => void this.onFailed(job, error));
    this.scheduleSweep();
    // A Redis that comes back empty (restarted without persistence, a failover) lost the sweep's
    // repeatable job with every other: schedule it again on each reconnection (the same repeat
    // key, so a Redis that kept it still has one), and sweep at once rather than a period later.
    let connectedBefore = false;
    this.queue.client.on('ready', () => {
      if (connectedBefore) {
        this.scheduleSweep();
        void this.queue.add(ExecutionJobs.sweep, {}, { removeOnComplete: true, removeOnFail: true }).catch(() => undefined);
      }
      connectedBefore = true;
    });
    if (this.queue.client.status === 'ready') connectedBefore = true;
  }

  /**
   * Shutdown (SIGTERM): no new job is taken; the running ones get SHUTDOWN_TIMEOUT to finish. A job
   * still running then is handed back at once (moved to be retried, as Bull does after a failed
   * attempt), so that another worker takes it now rather than once its lock expires; its run,
   * which commits only if the execution is unchanged, cannot then be applied twice.
   */
  async beforeApplicationShutdown(): Promise<void> {
    const finished = this.queue.pause(true).then(
      () => true,
      () => true,
    );
    const inTime = await Promise.race([finished, sleep(this.config.shutdownTimeoutMs, false, { ref: false })]);
    if (!inTime) {
      const jobs = [...this.active];
      this.logger.warn(`Shutting down with ${jobs.length} job(s) still running: handing them back to the queue`);
      await Promise.all(jobs.map((job) => this.release(job)));
    }
    // Closed here, not waiting again for the jobs handed back (Bull's own close at shutdown returns this one).
    await this.queue.close(!inTime);
  }

  private async release(job: Job): Promise<void> {
    try {
      if (job.attemptsMade + 1 < (job.opts.attempts ?? 1)) {
        await job.moveToFailed({ message: 'The worker shut down before the job finished; handed back to the queue' }, true);
      } else {
        // Its last attempt: handed back through the stalled-job check, which does not count one.
        await job.releaseLock();
      }
    } catch (error) {
      this.logger.warn(`Could not hand job ${job.id} back (its lock will expire): ${(error as Error).message}`);
    }
  }

  private async tracked<T>(job: Job, work: () => Promise<T>): Promise<T> {
    this.active.add(job);
    try {
      return await work();
    } finally {
      this.active.delete(job);
    }
  }

  private scheduleSweep(): void {
    void this.queue
      .add(ExecutionJobs.sweep, {}, { repeat: { every: this.config.executionSweep.everyMs }, jobId: 'executions-sweep', removeOnComplete: true, removeOnFail: true })
      .catch((error: Error) => this.logger.error(`Could not schedule the sweep: ${error.message}`));
  }

  async run(job: Job<RunJob>): Promise<RunResult> {
    // Traces on: the run is one span, child of the span that queued it (the job's traceparent).
    return inSpan(
      'executions.run',
      { 'execution.id': job.data.executionId, 'job.attempt': job.attemptsMade + 1 },
      async (span) => {
        const result = await this.engine.run(job.data.executionId);
        span?.setAttribute('execution.status', result.status);
        await this.afterRun(job.data.executionId, result);
        return result;
      },
      { kind: SpanKind.CONSUMER, parent: contextFromTraceparent(job.data.traceparent) },
    );
  }

  /** A waiting execution gets a delayed expiry job at its deadline (one per deadline). */
  private async afterRun(executionId: string, result: RunResult): Promise<RunResult> {
    if (result.status === 'running' && result.waitsUntil) {
      const delay = Math.max(0, result.waitsUntil.getTime() - Date.now());
      await this.queue.add(ExecutionJobs.expire, { executionId } satisfies ExpireJob, {
        delay,
        jobId: `expire:${executionId}:${result.waitsUntil.getTime()}`,
        attempts: 5,
        backoff: { type: 'exponential', delay: 1000 },
        removeOnComplete: true,
        removeOnFail: 1000,
      });
    }
    return result;
  }

  private async sweep(): Promise<void> {
    const { expired, orphaned } = await this.engine.findStale(this.config.executionSweep.orphanAfterMs);
    for (const id of expired) await this.afterRun(id, await this.engine.expire(id));
    for (const id of orphaned) await this.executions.enqueue(id);
    if (expired.length + orphaned.length > 0) this.logger.log(`Sweep: ${expired.length} expired, ${orphaned.length} re-enqueued`);
  }

  private async onFailed(job: Job, error: Error): Promise<void> {
    if (job.name !== ExecutionJobs.run || job.attemptsMade < (job.opts.attempts ?? RUN_ATTEMPTS)) return;
    const { executionId } = job.data as RunJob;
    this.logger.error(`Execution ${executionId} failed after ${job.attemptsMade} attempts: ${error.message}`);
    try {
      // The cause stays in the log: a driver or provider message is not for clients.
      await this.engine.abandon(executionId, `The execution could not be run after ${job.attemptsMade} attempts`);
    } catch (abandonError) {
      this.logger.error(`Could not mark execution ${executionId} failed: ${(abandonError as Error).message}`);
    }
  }
}
