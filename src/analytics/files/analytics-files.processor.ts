import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { AnalyticsFileJobs, ANALYTICS_FILES_QUEUE, GENERATE_ATTEMPTS, type GenerateFileJob } from './analytics-files.queue.js';
import { FileGenerator } from './file-generator.service.js';
import { FilesRepository } from './files.repository.js';

const CONCURRENCY = 2;
const CLEANUP_EVERY_MS = 15 * 60_000;

/**
 * Makes report and export files (two at a time per worker: each holds a database connection for
 * its whole run) and deletes expired files every 15 minutes. A failure is retried with back-off;
 * after the last attempt the file is `failed` with REPORT_GENERATION_FAILED or EXPORT_FAILED and a
 * message that says nothing of the cause's internals (the cause is logged).
 */
@Injectable()
export class AnalyticsFilesProcessor implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(AnalyticsFilesProcessor.name);
  private cleanupTimer: NodeJS.Timeout | undefined;

  constructor(
    @InjectQueue(ANALYTICS_FILES_QUEUE) private readonly queue: Queue,
    private readonly generator: FileGenerator,
    private readonly files: FilesRepository,
  ) {}

  onApplicationBootstrap(): void {
    void this.queue.process(AnalyticsFileJobs.generate, CONCURRENCY, (job: Job<GenerateFileJob>) => this.generate(job));
    this.cleanupTimer = setInterval(() => void this.cleanup(), CLEANUP_EVERY_MS);
    this.cleanupTimer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.cleanupTimer);
  }

  async generate(job: Job<GenerateFileJob>): Promise<string> {
    try {
      return (await this.generator.generate(job.data.fileId)) ? 'completed' : 'skipped';
    } catch (error) {
      const last = job.attemptsMade + 1 >= (job.opts.attempts ?? GENERATE_ATTEMPTS);
      this.logger.error(`file ${job.data.fileId}: generation attempt ${job.attemptsMade + 1} failed: ${(error as Error).message}`);
      if (last) {
        const file = await this.files.findById(job.data.fileId);
        const code = file?.kind === 'report' ? 'REPORT_GENERATION_FAILED' : 'EXPORT_FAILED';
        await this.files.fail(job.data.fileId, { code, message: `The ${file?.kind ?? 'file'} could not be generated; request it again` });
      }
      throw error;
    }
  }

  /** Deletes expired files in batches; returns how many. */
  async cleanup(): Promise<number> {
    let total = 0;
    try {
      for (let n = -1; n !== 0; total += n) n = await this.files.deleteExpired(100);
    } catch (error) {
      this.logger.warn(`expired file cleanup failed: ${(error as Error).message}`);
    }
    return total;
  }
}
