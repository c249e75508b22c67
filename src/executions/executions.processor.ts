import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { AppConfig } from '../config/app-config.js';
import { ExecutionEngine, type RunResult } from './execution-engine.service.js';
import { EXECUTIONS_QUEUE, ExecutionJobs, type ExpireJob, type RunJob } from './executions.queue.js';
import { ExecutionsService, RUN_ATTEMPTS } from './executions.service.js';

const SWEEP_EVERY_MS = 60_000;
/** A running, non-waiting execution untouched this long has lost its job. */
const ORPHAN_AFTER_MS = 120_000;

/**
 * The execution engine's worker side: runs jobs with WORKER_CONCURRENCY, schedules the
 * expiry of each wait, fails an execution after its last attempt, and sweeps every minute
 * for overdue waits and executions whose job was lost.
 */
@Injectable()
export class ExecutionsProcessor implements OnApplicationBootstrap {
  private readonly logger = new Logger(ExecutionsProcessor.name);

  constructor(
    @InjectQueue(EXECUTIONS_QUEUE) private readonly queue: Queue,
    private readonly engine: ExecutionEngine,
    private readonly executions: ExecutionsService,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    void this.queue.process(ExecutionJobs.run, this.config.workerConcurrency, (job: Job<RunJob>) => this.run(job));
    void this.queue.process(ExecutionJobs.expire, 2, async (job: Job<ExpireJob>) => this.afterRun(job.data.executionId, await this.engine.expire(job.data.executionId)));
    void this.queue.process(ExecutionJobs.sweep, 1, () => this.sweep());
    this.queue.on('failed', (job: Job, error: Error) => void this.onFailed(job, error));
    void this.queue
      .add(ExecutionJobs.sweep, {}, { repeat: { every: SWEEP_EVERY_MS }, jobId: 'executions-sweep', removeOnComplete: true, removeOnFail: true })
      .catch((error: Error) => this.logger.error(`Could not schedule the sweep: ${error.message}`));
  }

  async run(job: Job<RunJob>): Promise<RunResult> {
    const result = await this.engine.run(job.data.executionId);
    await this.afterRun(job.data.executionId, result);
    return result;
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
    const { expired, orphaned } = await this.engine.findStale(ORPHAN_AFTER_MS);
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
