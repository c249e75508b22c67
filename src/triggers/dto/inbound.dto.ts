import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject, IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';
import { CHANNELS } from '../../common/channels.js';

const CHANNEL_MESSAGE = `channel must be one of ${CHANNELS.join(', ')}`;

export class InboundMessageDto {
  @ApiProperty({ enum: CHANNELS })
  @IsIn(CHANNELS as unknown as string[], { message: CHANNEL_MESSAGE })
  channel: string;

  @ApiProperty({ description: "The client's id of the customer (phone number, handle, ...)", maxLength: 200 })
  @IsString()
  @Length(1, 200)
  customer_id: string;

  @ApiProperty({ maxLength: 4096 })
  @IsString()
  @Length(1, 4096)
  message: string;

  @ApiPropertyOptional({ example: 'en' })
  @IsOptional()
  @IsString()
  @Matches(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, { message: 'language must be a language code such as en or pt-BR' })
  language?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @IsOptional()
  @IsObject()
  metadata?: Record<string, unknown>;
}

export class FireTriggerDto {
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  customer_id?: string;

  @ApiPropertyOptional({ enum: CHANNELS })
  @IsOptional()
  @IsIn(CHANNELS as unknown as string[], { message: CHANNEL_MESSAGE })
  channel?: string;

  @ApiPropertyOptional({ maxLength: 4096 })
  @IsOptional()
  @IsString()
  @MaxLength(4096)
  message?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @IsOptional()
  @IsObject()
  data?: Record<string, unknown>;
}

export class FiredExecutionResponse {
  @ApiProperty({ type: String, nullable: true }) trigger_id: string | null;
  @ApiProperty({ type: String, nullable: true }) trigger_execution_id: string | null;
  @ApiProperty({ type: String, nullable: true }) workflow_execution_id: string | null;
  @ApiProperty({ enum: ['running', 'failed'] }) status: string;
  @ApiPropertyOptional({ description: 'Why the firing was refused (inactive trigger or workflow)' }) error?: { code: string; message: string };
}

export class InboundMessageResponse {
  @ApiProperty() message_id: string;
  @ApiProperty({ type: [FiredExecutionResponse] }) executions: FiredExecutionResponse[];
}
