import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject, IsOptional, IsString } from 'class-validator';
import { CHANNELS } from '../../common/channels.js';
import { TextLength } from '../../common/validation/text-length.decorator.js';
import { CHANNEL_MESSAGE, MAX_CUSTOMER_ID_LENGTH, MAX_MESSAGE_LENGTH } from './inbound-message.dto.js';

export class FireTriggerDto {
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString()
  @TextLength(1, MAX_CUSTOMER_ID_LENGTH)
  customer_id?: string;

  @ApiPropertyOptional({ enum: CHANNELS })
  @IsOptional()
  @IsIn(CHANNELS as unknown as string[], { message: CHANNEL_MESSAGE })
  channel?: string;

  @ApiPropertyOptional({ maxLength: 4096 })
  @IsOptional()
  @IsString()
  @TextLength(0, MAX_MESSAGE_LENGTH)
  message?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @IsOptional()
  @IsObject()
  data?: Record<string, unknown>;
}
