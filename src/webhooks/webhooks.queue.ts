/** The webhook deliveries' Bull queue: its name, job names and payloads. */
export const WEBHOOKS_QUEUE = 'webhooks';

export const WebhookJobs = {
  /** One attempt of a delivery; the job id is the delivery id, and Bull's retries are its retries. */
  deliver: 'deliver',
} as const;

export interface DeliverJob {
  deliveryId: string;
}

/** Bull attempts of one job: above any max_retries (10) + 1, with room for lease conflicts. */
export const DELIVER_JOB_ATTEMPTS = 30;
/** The custom backoff that reads the delay a failed attempt computed (see WebhooksProcessor). */
export const WEBHOOK_BACKOFF = 'webhook';

export function deliverJobOptions(deliveryId: string, delay = 0) {
  return {
    jobId: deliveryId,
    delay,
    attempts: DELIVER_JOB_ATTEMPTS,
    backoff: { type: WEBHOOK_BACKOFF },
    removeOnComplete: true,
    removeOnFail: true,
  };
}
