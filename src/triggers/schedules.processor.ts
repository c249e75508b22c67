import { Process, Processor } from '@nestjs/bull';
import { Logger } from '@nestjs/common';
import type { Job } from 'bull';
import { TriggerFiringService } from './trigger-firing.service.js';
import { SCHEDULES_QUEUE, ScheduleJobs, type TickJob } from './triggers.queue.js';

/** Fires schedule triggers on their Bull repeatable ticks (each tick runs on one worker). */
@Processor(SCHEDULES_QUEUE)
export class SchedulesProcessor {
  private readonly logger = new Logger(SchedulesProcessor.name);

  constructor(private readonly firing: TriggerFiringService) {}

  @Process(ScheduleJobs.tick)
  async tick(job: Job<TickJob>): Promise<void> {
    const result = await this.firing.fireSchedule(job);
    if (!result) this.logger.warn(`Tick for trigger ${job.data.triggerId}, which no longer exists or has another schedule now: its job was removed`);
  }
}
