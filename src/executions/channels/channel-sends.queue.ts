import type { AdvancedSettings, JobOptions } from 'bull';

/**
 * The queue of sends to messaging providers. Owned by the executions module, whose run commits the
 * messages and adds their jobs (ChannelSendDispatcher); the channels module's worker side processes
 * it (ChannelSendsProcessor).
 */
export const CHANNEL_SENDS_QUEUE = 'channel-sends';

export const ChannelSendJobs = {
  /** Send one outbound message if it heads its customer's conversation on its account. */
  send: 'send',
} as const;

export interface SendJob {
  messageId: string;
  /** W3C traceparent of the run that queued the send (traces on only). */
  traceparent?: string;
}

/** The name of the backoff strategy that honours a provider's Retry-After (registered with the queue). */
export const PROVIDER_BACKOFF = 'provider';

/** Attempts of one send before the message fails: with the backoff below, about 8 minutes of waits between them. */
export const SEND_ATTEMPTS = 15;

export const SEND_JOB_OPTIONS: JobOptions = {
  attempts: SEND_ATTEMPTS,
  backoff: { type: PROVIDER_BACKOFF },
  removeOnComplete: true,
  removeOnFail: 1000,
};

/** Delay after attempt n (counted on the message): the provider's Retry-After when it gave one, else 0.5 s doubling up to a minute. */
export function sendBackoffMs(attemptsMade: number, retryAfterMs: number | undefined): number {
  if (retryAfterMs !== undefined && retryAfterMs >= 0) return Math.min(retryAfterMs, 3_600_000);
  return Math.min(60_000, 500 * 2 ** Math.max(0, attemptsMade - 1));
}

/**
 * The queue's settings wherever it is registered: a worker killed mid-send loses its job's lock after
 * 15 s, then another takes it up; the backoff strategy reads a provider's Retry-After off the error.
 */
export const channelSendsQueueSettings: AdvancedSettings = {
  lockDuration: 15_000,
  stalledInterval: 5_000,
  maxStalledCount: 5,
  backoffStrategies: {
    [PROVIDER_BACKOFF]: (attemptsMade: number, error?: Error) => sendBackoffMs(attemptsMade, (error as { retryAfterMs?: number } | undefined)?.retryAfterMs),
  },
};
