import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { CHANNEL_SENDS_QUEUE, channelSendsQueueSettings } from '../executions/channels/channel-sends.queue.js';
import { ExecutionsModule } from '../executions/executions.module.js';
import { TriggersModule } from '../triggers/triggers.module.js';
import { ChannelAccountsModule } from './channel-accounts.module.js';
import { ChannelInboundService } from './channel-inbound.service.js';
import { ChannelSender } from './channel-sender.service.js';
import { ChannelSendsProcessor } from './channel-sends.processor.js';
import { ChannelAccountWebhooksController } from './channel-account-webhooks.controller.js';

/** Provider webhooks in (verified, stored, applied through the triggers module's conversation path). */
@Module({
  imports: [ChannelAccountsModule, TriggersModule, BullModule.registerQueue({ name: CHANNEL_SENDS_QUEUE, settings: channelSendsQueueSettings })],
  controllers: [ChannelAccountWebhooksController],
  providers: [ChannelInboundService, ChannelSender],
  exports: [ChannelInboundService, ChannelSender, BullModule],
})
export class ChannelsModule {}

/** The sender and the sweeps, loaded only in worker processes (APP_ROLE worker or all). */
@Module({ imports: [ChannelsModule, ChannelAccountsModule, ExecutionsModule], providers: [ChannelSendsProcessor] })
export class ChannelsWorkerModule {}
