import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { AppConfig } from '../config/app-config.js';
import { ConversationsService } from '../customers/conversations.service.js';
import { TriggerFiringService, type TurnOutcome } from './trigger-firing.service.js';
import { BURSTS_QUEUE, BurstJobs, type TurnJob } from './triggers.queue.js';

/** A burst still open this long after its deadline has lost its job: the sweep takes its turn. */
export const BURST_SWEEP_GRACE_MS = 5_000;

/**
 * Bursts' turns (docs/channels.md, "Bursts"), in worker processes: each burst's delayed `turn` job at
 * its deadline, and a sweep every EXECUTION_SWEEP_INTERVAL for bursts whose job was lost (Redis
 * flushed, an add that failed) or whose worker died or failed midway (claimed more than
 * EXECUTION_ORPHAN_AFTER ago and not finished). A claim is conditional (ConversationsService.claimBurst):
 * a job and the sweep, or two workers, never both take a turn.
 */
@Injectable()
export class BurstsProcessor implements OnApplicationBootstrap {
  private readonly logger = new Logger(BurstsProcessor.name);

  constructor(
    @InjectQueue(BURSTS_QUEUE) private readonly queue: Queue,
    private readonly firing: TriggerFiringService,
    private readonly conversations: ConversationsService,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    // A job tried again (its first attempt failed after claiming) may claim its burst again at once.
    void this.queue.process(BurstJobs.turn, 5, (job: Job<TurnJob>) => this.turn(job.data.burstId, job.attemptsMade > 0 ? 0 : undefined));
    void this.queue.process(BurstJobs.sweep, 1, () => this.sweep());
    this.scheduleSweep();
    // A Redis that comes back empty lost the repeatable sweep with every other job: schedule it again.
    let connectedBefore = this.queue.client.status === 'ready';
    this.queue.client.on('ready', () => {
      if (connectedBefore) this.scheduleSweep();
      connectedBefore = true;
    });
  }

  private scheduleSweep(): void {
    void this.queue
      .add(BurstJobs.sweep, {}, { repeat: { every: this.config.executionSweep.everyMs }, jobId: 'bursts-sweep', removeOnComplete: true, removeOnFail: true })
      .catch((error: Error) => this.logger.error(`Could not schedule the bursts sweep: ${error.message}`));
  }

  async turn(burstId: string, leaseMs = this.config.executionSweep.orphanAfterMs): Promise<TurnOutcome> {
    return this.firing.takeTurn(burstId, leaseMs);
  }

  /** Takes the turn of every burst due (see dueBursts); returns how many were taken. */
  async sweep(): Promise<number> {
    const due = await this.conversations.dueBursts(BURST_SWEEP_GRACE_MS, this.config.executionSweep.orphanAfterMs);
    let taken = 0;
    for (const id of due) {
      try {
        if ('taken' in (await this.turn(id))) taken++;
      } catch (error) {
        this.logger.warn(`Burst ${id}: its turn failed in the sweep, tried again later: ${(error as Error).message}`);
      }
    }
    if (taken > 0) this.logger.log(`Bursts sweep: ${taken} turn(s) taken whose job was lost`);
    return taken;
  }
}
