import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger } from '@nestjs/common';
import type { Queue } from 'bull';
import { withRedisDeadline } from '../../redis/redis-errors.js';
import { CHANNEL_SENDS_QUEUE, ChannelSendJobs, SEND_JOB_OPTIONS, type SendJob } from './channel-sends.queue.js';

/** How long adding send jobs may wait on Redis; past it the sweep sends them later. */
const ADD_DEADLINE_MS = 1000;

/**
 * Adds a send job for each message a run committed through a channel account. The job's id is the
 * message's, so adding it twice adds one job. A lost add (Redis down, a crash after the commit) loses
 * nothing: the message is committed as queued, and the channels worker's sweep queues it again.
 */
@Injectable()
export class ChannelSendDispatcher {
  private readonly logger = new Logger(ChannelSendDispatcher.name);

  constructor(@InjectQueue(CHANNEL_SENDS_QUEUE) private readonly queue: Queue) {}

  async dispatch(messageIds: readonly string[]): Promise<void> {
    if (messageIds.length === 0) return;
    try {
      const adding = this.queue.addBulk(
        messageIds.map((messageId) => ({ name: ChannelSendJobs.send, data: { messageId } satisfies SendJob, opts: { ...SEND_JOB_OPTIONS, jobId: `send:${messageId}` } })),
      );
      adding.catch(() => undefined);
      await withRedisDeadline(adding, ADD_DEADLINE_MS, 'adding send jobs');
    } catch (error) {
      this.logger.warn(`Could not queue ${messageIds.length} send(s) (${(error as Error).message}); the sweep will`);
    }
  }
}
