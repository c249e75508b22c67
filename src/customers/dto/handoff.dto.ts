import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, IsString, IsUUID } from 'class-validator';
import { TextLength } from '../../common/validation/text-length.decorator.js';

/** customers.handoff_reason is varchar(500). */
export const MAX_HANDOFF_REASON_LENGTH = 500;
/** As an inbound message's text. */
export const MAX_AGENT_MESSAGE_LENGTH = 4096;

const trimmed = () => Transform(({ value }) => (typeof value === 'string' ? value.trim() : value));

/** POST /v1/customers/{customer_id}/handoff. */
export class StartHandoffDto {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: MAX_HANDOFF_REASON_LENGTH,
    description: 'Why a person takes over (trimmed; empty or null: none). On an active handoff, replaces its reason; omitted, the reason is kept',
    example: 'Customer asked for a refund',
  })
  @IsOptional()
  @trimmed()
  @IsString({ message: 'reason must be a string' })
  @TextLength(0, MAX_HANDOFF_REASON_LENGTH, { message: `reason must be at most ${MAX_HANDOFF_REASON_LENGTH} characters` })
  reason?: string | null;
}

/** POST /v1/customers/{customer_id}/messages. */
export class AgentMessageDto {
  @ApiProperty({ maxLength: MAX_AGENT_MESSAGE_LENGTH, description: 'The text to send (surrounding whitespace trimmed; not empty)' })
  @trimmed()
  @IsString({ message: 'content must be a string' })
  @TextLength(1, MAX_AGENT_MESSAGE_LENGTH, { message: `content must be 1 to ${MAX_AGENT_MESSAGE_LENGTH} characters, not only whitespace` })
  content: string;

  @ApiPropertyOptional({
    format: 'uuid',
    description: "The channel account to send through (404 CHANNEL_ACCOUNT_NOT_FOUND if not the organization's); default: the one the customer last wrote from",
  })
  @IsOptional()
  @IsUUID('all', { message: 'channel_account_id must be a UUID' })
  channel_account_id?: string;
}
