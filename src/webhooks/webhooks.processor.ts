import { InjectQueue } from '@nestjs/bull';
import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { AppConfig } from '../config/app-config.js';
import { WebhookDeliveriesService } from './webhook-deliveries.service.js';
import { WEBHOOKS_QUEUE, WebhookJobs, type DeliverJob } from './webhooks.queue.js';

/** Thrown to have Bull run the same job again after `delayMs` (read by the queue's `webhook` backoff). */
export class RetryLater extends Error {
  constructor(readonly delayMs: number) {
    super(`retry in ${delayMs} ms`);
  }
}

/** Bull's custom backoff: the delay the attempt computed (docs/API.md, "Outbound webhooks": the backoff formula, or Retry-After). */
export function webhookBackoff(_attemptsMade: number, error: Error): number {
  return error instanceof RetryLater ? error.delayMs : 5000;
}

/**
 * Runs delivery attempts with WEBHOOK_CONCURRENCY. A retry is the same job run again by Bull (job
 * id = delivery id), so a delivery has exactly one job however often it is retried.
 */
@Injectable()
export class WebhooksProcessor implements OnApplicationBootstrap {
  constructor(
    @InjectQueue(WEBHOOKS_QUEUE) private readonly queue: Queue,
    private readonly deliveries: WebhookDeliveriesService,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    void this.queue.process(WebhookJobs.deliver, this.config.webhooks.concurrency, (job: Job<DeliverJob>) => this.deliver(job));
  }

  async deliver(job: Job<DeliverJob>): Promise<string> {
    const report = await this.deliveries.attempt(job.data.deliveryId);
    if (report === null) return 'done';
    if ('busyForMs' in report) throw new RetryLater(report.busyForMs);
    if (report.retryInMs !== undefined) throw new RetryLater(report.retryInMs);
    return report.status;
  }
}
