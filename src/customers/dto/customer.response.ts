import { ApiProperty } from '@nestjs/swagger';
import type { Customer } from '../entities/customer.entity.js';
import type { Message, MessageDirection } from '../entities/message.entity.js';
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

export class MessageResponse {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['inbound', 'outbound'] }) direction: MessageDirection;
  @ApiProperty() channel: string;
  @ApiProperty() content: string;
  @ApiProperty({ type: String, nullable: true }) language: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The workflow execution that sent it, or that an inbound reply was routed to' })
  execution_id: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The node that sent it or asked for it' }) node_id: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;

  static from(m: Message): MessageResponse {
    return {
      id: m.id,
      direction: m.direction,
      channel: m.channel,
      content: m.content,
      language: m.language,
      execution_id: m.executionId,
      node_id: m.nodeId,
      created_at: isoTime(m.createdAt),
    };
  }
}
