import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger } from '@nestjs/common';
import type { Queue } from 'bull';
import { withRedisDeadline } from '../../redis/redis-errors.js';
import { CHANNEL_SENDS_QUEUE, ChannelSendJobs, SEND_JOB_OPTIONS, type SendJob } from './channel-sends.queue.js';
import { currentTraceparent } from '../../common/tracing/trace-context.js';

/** How long adding send jobs may wait on Redis; past it the sweep sends them later. */
const ADD_DEADLINE_MS = 1000;

/**
 * A sender in this process (the channels worker, when this process is a worker): sends the message's
 * conversation as a send job would. Resolves when it is done; never rejects.
 */
export interface LocalChannelSender {
  sendConversation(messageId: string): Promise<void>;
  /** Sends it may run at once beside its queue's jobs (CHANNEL_SEND_CONCURRENCY). */
  readonly concurrency: number;
}

/**
 * Starts the sends of the messages a run committed through a channel account. In a worker process the
 * channels worker attaches its sender and the send starts at once, in this process (no job to add and
 * take back from Redis: the conversation's first reply leaves as soon as the run commits); beyond the
 * sender's concurrency, or in a process without one, a send job is added instead, whose id is the
 * message's (adding it twice adds one job). Nothing is lost either way: the message is committed as
 * queued, and the channels worker's sweep takes up a send whose job or process was lost.
 */
@Injectable()
export class ChannelSendDispatcher {
  private readonly logger = new Logger(ChannelSendDispatcher.name);
  private local?: LocalChannelSender;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(@InjectQueue(CHANNEL_SENDS_QUEUE) private readonly queue: Queue) {}

  /** The channels worker's sender (ChannelSendsProcessor, at start-up). */
  attach(sender: LocalChannelSender): void {
    this.local = sender;
  }

  /** Detaches the sender and waits for its sends in flight (shutdown). */
  async detach(): Promise<void> {
    this.local = undefined;
    await Promise.all(this.inFlight);
  }

  async dispatch(messageIds: readonly string[]): Promise<void> {
    const queued: string[] = [];
    for (const messageId of messageIds) {
      const local = this.local;
      if (!local || this.inFlight.size >= local.concurrency) {
        queued.push(messageId);
        continue;
      }
      const sending = local.sendConversation(messageId).finally(() => this.inFlight.delete(sending));
      this.inFlight.add(sending);
    }
    if (queued.length > 0) await this.addJobs(queued);
  }

  private async addJobs(messageIds: readonly string[]): Promise<void> {
    try {
      const adding = this.queue.addBulk(
        messageIds.map((messageId) => ({ name: ChannelSendJobs.send, data: { messageId, traceparent: currentTraceparent() } satisfies SendJob, opts: { ...SEND_JOB_OPTIONS, jobId: `send:${messageId}` } })),
      );
      adding.catch(() => undefined);
      await withRedisDeadline(adding, ADD_DEADLINE_MS, 'adding send jobs');
    } catch (error) {
      this.logger.warn(`Could not queue ${messageIds.length} send(s) (${(error as Error).message}); the sweep will`);
    }
  }
}
