import { ApiProperty } from '@nestjs/swagger';
import type { Customer } from '../entities/customer.entity.js';
import { authorOf, type MessageAuthor, type MessageDirection } from '../entities/message.entity.js';
import type { CustomerDetail, MessageRow } from '../customers.service.js';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../channels/channels.sql.js';
import type { AgentMessage } from '../handoff.service.js';
import { isoTime } from '../../common/iso-time.js';

export class CustomerResponse {
  @ApiProperty({ description: 'The client\'s id of the customer (phone number, handle, …)', example: '+15551234567' }) customer_id: string;
  @ApiProperty({ type: String, nullable: true, description: 'Channel of the latest contact' }) channel: string | null;
  @ApiProperty({ type: String, nullable: true }) language: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Answers collected by form nodes, by field name' })
  attributes: Record<string, unknown>;
  @ApiProperty({ format: 'date-time' }) first_seen_at: string;
  @ApiProperty({ format: 'date-time' }) last_seen_at: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;

  static from(c: Customer): CustomerResponse {
    return {
      customer_id: c.externalId,
      channel: c.channel,
      language: c.language,
      attributes: c.attributes,
      first_seen_at: isoTime(c.firstSeenAt),
      last_seen_at: isoTime(c.lastSeenAt),
      created_at: isoTime(c.createdAt),
      updated_at: isoTime(c.updatedAt),
    };
  }
}

/** A person's takeover of the conversation; all null (and active false) when there is none, or it expired. */
export class HandoffResponse {
  @ApiProperty({ description: 'Whether a person has the conversation: automation is paused for this customer' }) active: boolean;
  @ApiProperty({ type: String, nullable: true }) reason: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) started_at: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When it ends by itself (HANDOFF_TIMEOUT after it started or was last extended)' })
  ends_at: string | null;

  static from(c: Customer, active: boolean): HandoffResponse {
    if (!active || !c.handoffStartedAt || !c.handoffEndsAt) return { active: false, reason: null, started_at: null, ends_at: null };
    return { active: true, reason: c.handoffReason, started_at: isoTime(c.handoffStartedAt), ends_at: isoTime(c.handoffEndsAt) };
  }
}

/** A customer as `GET /v1/customers/{customer_id}` and the handoff routes show it. */
export class CustomerDetailResponse extends CustomerResponse {
  @ApiProperty({ type: HandoffResponse }) handoff: HandoffResponse;

  static fromDetail({ customer, handoffActive }: CustomerDetail): CustomerDetailResponse {
    return { ...CustomerResponse.from(customer), handoff: HandoffResponse.from(customer, handoffActive) };
  }
}

/** An agent's message, as `POST /v1/customers/{customer_id}/messages` answers it. */
export class AgentMessageResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: ['queued'], description: 'Committed and waiting for the sender; GET .../messages and message.delivered / message.read / message.failed tell the rest' })
  status: 'queued';
  @ApiProperty({ enum: ['agent'] }) author: 'agent';
  @ApiProperty() channel: string;
  @ApiProperty({ format: 'uuid' }) channel_account_id: string;
  @ApiProperty() content: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;

  static from(m: AgentMessage): AgentMessageResponse {
    return { id: m.id, status: 'queued', author: 'agent', channel: m.channel, channel_account_id: m.channelAccountId, content: m.content, created_at: isoTime(m.createdAt) };
  }
}

export class DeliveryErrorResponse {
  @ApiProperty({ type: String, nullable: true, example: '131047' }) code: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'Re-engagement message' }) title: string | null;
}

export class MessageResponse {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['inbound', 'outbound'] }) direction: MessageDirection;
  @ApiProperty() channel: string;
  @ApiProperty() content: string;
  @ApiProperty({ type: String, nullable: true }) language: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The workflow execution that sent it, or that an inbound reply was routed to' })
  execution_id: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The node that sent it or asked for it' }) node_id: string | null;
  @ApiProperty({ enum: ['customer', 'bot', 'agent'], description: 'Who wrote it: the customer, a workflow (bot) or a person (agent, POST .../messages)' })
  author: MessageAuthor;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'The channel account it came in or went out through' })
  channel_account_id: string | null;
  @ApiProperty({
    enum: DELIVERY_STATUSES,
    type: String,
    nullable: true,
    description:
      'Outbound messages sent through a channel account: where the send stands (queued, sending, sent, delivered, read, failed). '
      + 'Null for inbound messages and for outbound ones with no provider to send through (POST /v1/messages without a channel account)',
  })
  delivery_status: DeliveryStatus | null;
  @ApiProperty({ type: DeliveryErrorResponse, nullable: true, description: 'A failed send: the provider\'s error code and title (or ours, e.g. CHANNEL_ACCOUNT_DELETED); null otherwise' })
  delivery_error: DeliveryErrorResponse | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;

  static from(m: MessageRow): MessageResponse {
    return {
      id: m.id,
      direction: m.direction,
      channel: m.channel,
      content: m.content,
      language: m.language,
      execution_id: m.executionId,
      node_id: m.nodeId,
      author: authorOf(m),
      channel_account_id: m.channelAccountId,
      delivery_status: m.delivery_status,
      delivery_error: m.delivery_status === 'failed' ? { code: m.delivery_error_code, title: m.delivery_error_title } : null,
      created_at: isoTime(m.createdAt),
    };
  }
}
