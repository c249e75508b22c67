import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DeliveryClient } from './delivery/delivery-client.js';
import { WebhookDeliveryAttempt } from './entities/webhook-delivery-attempt.entity.js';
import { WebhookDelivery } from './entities/webhook-delivery.entity.js';
import { Webhook } from './entities/webhook.entity.js';
import { OutboxRelay } from './outbox-relay.service.js';
import { WebhookDeliveriesService } from './webhook-deliveries.service.js';
import { WebhooksController } from './webhooks.controller.js';
import { webhookBackoff, WebhooksProcessor } from './webhooks.processor.js';
import { WEBHOOK_BACKOFF, WEBHOOKS_QUEUE } from './webhooks.queue.js';
import { WebhooksService } from './webhooks.service.js';

@Module({
  imports: [
    TypeOrmModule.forFeature([Webhook, WebhookDelivery, WebhookDeliveryAttempt]),
    // A worker killed mid-attempt loses its lock after lockDuration; another worker then runs the job again.
    BullModule.registerQueue({
      name: WEBHOOKS_QUEUE,
      settings: { lockDuration: 15_000, stalledInterval: 5_000, maxStalledCount: 5, backoffStrategies: { [WEBHOOK_BACKOFF]: webhookBackoff } },
    }),
  ],
  controllers: [WebhooksController],
  providers: [WebhooksService, WebhookDeliveriesService, DeliveryClient],
  exports: [WebhooksService, WebhookDeliveriesService, DeliveryClient, BullModule],
})
export class WebhooksModule {}

/** The relay and the delivery processor, loaded only in worker processes (APP_ROLE worker or all). */
@Module({ imports: [WebhooksModule], providers: [WebhooksProcessor, OutboxRelay] })
export class WebhooksWorkerModule {}
