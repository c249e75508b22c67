import { Injectable } from '@nestjs/common';
import type { RunWrites } from '../run-writes.js';
import type { ChannelAdapter, OutboundMessage } from './channel-adapter.js';
import { uuidv7 } from '../../common/ids/uuid-v7.js';
import { ANSWERED_CHANNELS } from './answered-channels.js';

/** The built-in adapter: stores the outbound message and emits `message.sent` for connectors. */
@Injectable()
export class StoringChannelAdapter implements ChannelAdapter {
  send(writes: RunWrites, out: OutboundMessage): { messageId: string } {
    // The id is made here, not by the database: the message is written later, with the run.
    const messageId = uuidv7();
    writes.messages.push({
      id: messageId,
      organizationId: out.organizationId,
      customerId: out.customerId,
      channel: out.channel,
      content: out.content,
      nodeId: out.nodeId,
      channelAccountId: out.channelAccountId,
      kind: out.template ? 'template' : 'text',
      queued: out.channelAccountId !== null && !ANSWERED_CHANNELS.has(out.channel),
      metadata: out.template ? { template: out.template } : {},
    });
    writes.events.push({
      organizationId: out.organizationId,
      type: 'message.sent',
      data: {
        message_id: messageId,
        customer_id: out.customerRef,
        channel: out.channel,
        content: out.content,
        execution_id: out.executionId,
        node_id: out.nodeId,
        author: 'bot',
        ...(out.channelAccountId ? { channel_account_id: out.channelAccountId } : {}),
        ...(out.template ? { template: out.template.name } : {}),
      },
    });
    return { messageId };
  }
}
