import { ApiProperty } from '@nestjs/swagger';
import { IsString } from 'class-validator';
import { TextLength } from '../../common/validation/text-length.decorator.js';

export class RecoverWebhookDto {
  @ApiProperty({ type: String, maxLength: 64, example: '2025-03-01T00:00:00Z', description: 'ISO 8601 date or date-time: events whose deliveries ended failed at or after it are queued again' })
  @IsString()
  @TextLength(1, 64)
  since: string;
}
