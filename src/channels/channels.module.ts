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
import { CustomersModule } from '../customers/customers.module.js';
import { ChannelAccountVoiceController } from './voice/channel-account-voice.controller.js';
import { VoiceCallsService } from './voice/voice-calls.service.js';
import { VoiceTurnWaiter } from './voice/voice-turn.waiter.js';

/**
 * Provider webhooks in (verified, stored, applied through the triggers module's conversation path), and
 * phone calls answered with TwiML (voice/: the customers module's conversation path, the engine's runs).
 */
@Module({
  imports: [
    ChannelAccountsModule,
    TriggersModule,
    ExecutionsModule,
    CustomersModule,
    BullModule.registerQueue({ name: CHANNEL_SENDS_QUEUE, settings: channelSendsQueueSettings }),
  ],
  controllers: [ChannelAccountWebhooksController, ChannelAccountVoiceController],
  providers: [ChannelInboundService, ChannelSender, VoiceCallsService, VoiceTurnWaiter],
  exports: [ChannelInboundService, ChannelSender, BullModule],
})
export class ChannelsModule {}

/** The sender and the sweeps, loaded only in worker processes (APP_ROLE worker or all). */
@Module({ imports: [ChannelsModule, ChannelAccountsModule, ExecutionsModule], providers: [ChannelSendsProcessor] })
export class ChannelsWorkerModule {}
