import { isoTime } from '../../common/iso-time.js';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject, IsOptional, IsString, IsUUID, Matches } from 'class-validator';
import { CHANNELS } from '../../common/channels.js';
import { TextLength } from '../../common/validation/text-length.decorator.js';
import type { InboundMessageResult } from '../trigger-firing.service.js';
import { FiredExecutionResponse } from './fired-execution.response.js';

export const CHANNEL_MESSAGE = `channel must be one of ${CHANNELS.join(', ')}`;
/** Bounds of the inbound fields, as their columns are wide (customers.external_id, messages.language). */
export const MAX_CUSTOMER_ID_LENGTH = 200;
export const MAX_MESSAGE_LENGTH = 4096;
export const MAX_LANGUAGE_LENGTH = 16;

export class InboundMessageDto {
  @ApiProperty({ enum: CHANNELS })
  @IsIn(CHANNELS as unknown as string[], { message: CHANNEL_MESSAGE })
  channel: string;

  @ApiProperty({ description: "The client's id of the customer (phone number, handle, ...)", maxLength: 200 })
  @IsString()
  @TextLength(1, MAX_CUSTOMER_ID_LENGTH)
  customer_id: string;

  @ApiProperty({ maxLength: 4096 })
  @IsString()
  @TextLength(1, MAX_MESSAGE_LENGTH)
  message: string;

  @ApiPropertyOptional({ example: 'en' })
  @IsOptional()
  @IsString()
  // messages.language is varchar(16).
  @TextLength(0, MAX_LANGUAGE_LENGTH)
  @Matches(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, { message: 'language must be a language code such as en or pt-BR' })
  language?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @IsOptional()
  @IsObject()
  metadata?: Record<string, unknown>;

  @ApiPropertyOptional({
    format: 'uuid',
    description:
      "A channel account of this channel (404 CHANNEL_ACCOUNT_NOT_FOUND otherwise): the message joins that account's conversation (it resumes only executions of that account), a message that matches no trigger starts the account's settings.workflow_id, and what the workflow replies is sent through it",
  })
  @IsOptional()
  @IsUUID('all', { message: 'channel_account_id must be a UUID' })
  channel_account_id?: string;
}

/** A message held for its burst's turn (docs/channels.md, "Bursts"). */
export class InboundMessageTurnResponse {
  @ApiProperty({ format: 'date-time', description: "When the burst's turn is taken (its first message's arrival + the burst window): the held messages' joined text then resumes, or fires, as one message" })
  held_until: string;
}

export class InboundMessageResponse {
  @ApiProperty() message_id: string;
  @ApiProperty({ type: [FiredExecutionResponse], description: 'What the message resumed or fired; empty for a message held for its burst\'s turn (see turn)' }) executions: FiredExecutionResponse[];
  @ApiPropertyOptional({ type: InboundMessageTurnResponse, description: "Only with a burst window (the channel account's settings.burst_window_ms, else CONVERSATION_BURST_WINDOW_MS): the message is held for its burst's turn" })
  turn?: InboundMessageTurnResponse;

  static from(result: InboundMessageResult): InboundMessageResponse {
    return {
      message_id: result.messageId,
      executions: result.executions.map(FiredExecutionResponse.from),
      ...(result.turn ? { turn: { held_until: isoTime(result.turn.heldUntil) } } : {}),
    };
  }
}

