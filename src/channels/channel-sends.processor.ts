import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { AppConfig } from '../config/app-config.js';
import { ChannelSendDispatcher } from '../executions/channels/channel-send.dispatcher.js';
import { CHANNEL_SENDS_QUEUE, ChannelSendJobs, type SendJob } from '../executions/channels/channel-sends.queue.js';
import { ChannelInboundService } from './channel-inbound.service.js';
import { ChannelSender } from './channel-sender.service.js';

/** How often the worker looks for lost sends and stored payloads left to apply. */
export const CHANNEL_SWEEP_MS = 2_000;

/**
 * The channels module's worker side: processes send jobs (CHANNEL_SEND_CONCURRENCY per process), sends
 * the first messages of this process's runs as they commit (as many again, ChannelSendDispatcher), and
 * every CHANNEL_SWEEP_MS queues again the sends whose job (or process) was lost and applies again the provider
 * payloads stored because they could not be applied entirely. On shutdown it takes no new job or run's send and
 * lets the running sends finish (a send cut short is taken over once its lease runs out).
 */
@Injectable()
export class ChannelSendsProcessor implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(ChannelSendsProcessor.name);
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;
  private stopped = false;

  constructor(
    @InjectQueue(CHANNEL_SENDS_QUEUE) private readonly queue: Queue,
    private readonly sender: ChannelSender,
    private readonly inbound: ChannelInboundService,
    private readonly config: AppConfig,
    private readonly dispatcher: ChannelSendDispatcher,
  ) {}

  onApplicationBootstrap(): void {
    void this.queue.process(ChannelSendJobs.send, this.config.channels.sendConcurrency, (job: Job<SendJob>) => this.sender.send(job));
    // The runs of this process start their first sends here, at once, up to as many again as the queue's.
    this.dispatcher.attach({ sendConversation: (messageId) => this.sender.sendConversation(messageId), concurrency: this.config.channels.sendConcurrency });
    this.schedule();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.dispatcher.detach();
    await this.sweeping;
    await this.queue.close();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.sweeping = this.sweep().finally(() => this.schedule());
    }, CHANNEL_SWEEP_MS);
    this.timer.unref();
  }

  private async sweep(): Promise<void> {
    try {
      const requeued = await this.sender.requeueStalled();
      const applied = await this.inbound.processDue();
      if (requeued + applied > 0) this.logger.log(`Channels sweep: ${requeued} send(s) queued again, ${applied} payload(s) applied again`);
    } catch (error) {
      if (!this.stopped) this.logger.warn(`Channels sweep failed: ${(error as Error).message}`);
    }
  }
}
