import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { HandoffService } from './handoff.service.js';

/** How often the workers look for handoffs whose time ran out (to emit their end; reads need no sweep). */
export const HANDOFF_SWEEP_INTERVAL_MS = 2_000;

/** The sweep of expired handoffs, in every worker process; rows another sweep holds are skipped. */
@Injectable()
export class HandoffSweepLoop implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(HandoffSweepLoop.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  constructor(private readonly handoffs: HandoffService) {}

  onApplicationBootstrap(): void {
    this.schedule();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.handoffs
        .sweep()
        .then((n) => void (n > 0 && this.logger.log(`${n} handoff(s) ended by HANDOFF_TIMEOUT`)))
        .catch((error: unknown) => void (!this.stopped && this.logger.warn(`handoff sweep failed: ${(error as Error).message}`)))
        .finally(() => this.schedule());
    }, HANDOFF_SWEEP_INTERVAL_MS);
    this.timer.unref();
  }
}
