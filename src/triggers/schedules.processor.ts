import { Process, Processor } from '@nestjs/bull';
import { Logger } from '@nestjs/common';
import type { Job } from 'bull';
import { TriggerFiringService } from './trigger-firing.service.js';
import { SCHEDULES_QUEUE, ScheduleJobs, type TickJob } from './triggers.queue.js';

/** The return value of a tick that fired. */
export interface TickResult {
  trigger_execution_id: string | null;
  workflow_execution_id: string | null;
}

/** Fires schedule triggers on their Bull repeatable ticks (each tick runs on one worker). */
@Processor(SCHEDULES_QUEUE)
export class SchedulesProcessor {
  private readonly logger = new Logger(SchedulesProcessor.name);

  constructor(private readonly firing: TriggerFiringService) {}

  /**
   * Returns what the tick did, which Bull keeps as the job's return value and publishes with its
   * `completed` event: the execution it started, or null when it fired nothing (an operator, or
   * test/e2e/queue-mode.e2e-spec.ts, can tell each slot's one firing from the events).
   */
  @Process(ScheduleJobs.tick)
  async tick(job: Job<TickJob>): Promise<TickResult | null> {
    const outcome = await this.firing.fireSchedule(job);
    if ('skipped' in outcome) {
      if (outcome.skipped === 'stale') this.logger.warn(`Tick for trigger ${job.data.triggerId}, which no longer exists or has another schedule now: its job was removed`);
      else this.logger.warn(`Tick ${job.id} of trigger ${job.data.triggerId} ran again (its worker stopped before completing it): its slot has fired already`);
      return null;
    }
    return { trigger_execution_id: outcome.fired.triggerExecutionId, workflow_execution_id: outcome.fired.workflowExecutionId };
  }
}
