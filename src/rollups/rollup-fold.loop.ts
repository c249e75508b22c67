import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { FOLD_BATCH, RollupFolder } from './rollup-folder.js';

/** How long the loop sleeps once the log is empty: the rollups' freshness when nobody reads them. */
export const FOLD_INTERVAL_MS = 200;
/** After a failed fold (the database away), the next try. */
const RETRY_MS = 1_000;

/**
 * Folds the change logs into the rollups in every worker process: a batch, then the next at once
 * while batches come back full, else a pause of FOLD_INTERVAL_MS. A loop that finds another process
 * folding skips its turn (the advisory lock), so one loop per worker is safe and needs no election.
 */
@Injectable()
export class RollupFoldLoop implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RollupFoldLoop.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  constructor(private readonly folder: RollupFolder) {}

  onApplicationBootstrap(): void {
    this.schedule(0);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick().then((next) => this.schedule(next));
    }, delayMs);
    this.timer.unref();
  }

  /** One fold; the delay before the next. */
  private async tick(): Promise<number> {
    try {
      const taken = await this.folder.fold(FOLD_BATCH);
      return taken >= FOLD_BATCH ? 0 : FOLD_INTERVAL_MS;
    } catch (err) {
      if (!this.stopped) this.logger.warn(`rollup fold failed, retrying in ${RETRY_MS} ms: ${(err as Error).message}`);
      return RETRY_MS;
    }
  }
}
