import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { EventsService } from '../../events/events.service.js';
import { Message } from '../entities/message.entity.js';
import type { ChannelAdapter, OutboundMessage } from './channel-adapter.js';

/** The built-in adapter: stores the outbound message and emits `message.sent` for connectors. */
@Injectable()
export class StoringChannelAdapter implements ChannelAdapter {
  constructor(private readonly events: EventsService) {}

  async send(manager: EntityManager, out: OutboundMessage): Promise<Message> {
    const repo = manager.getRepository(Message);
    const message = await repo.save(
      repo.create({
        organizationId: out.organizationId,
        customerId: out.customerId,
        channel: out.channel,
        direction: 'outbound',
        content: out.content,
        executionId: out.executionId,
        nodeId: out.nodeId,
      }),
    );
    await this.events.record(manager, {
      organizationId: out.organizationId,
      type: 'message.sent',
      data: {
        message_id: message.id,
        customer_id: out.customerRef,
        channel: out.channel,
        content: out.content,
        execution_id: out.executionId,
        node_id: out.nodeId,
      },
    });
    return message;
  }
}
