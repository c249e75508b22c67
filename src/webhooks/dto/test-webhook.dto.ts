import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsOptional, IsString } from 'class-validator';
import { EVENT_TYPES } from '../../events/event-types.js';
import { TextLength } from '../../common/validation/text-length.decorator.js';

export class TestWebhookDto {
  @ApiProperty({ maxLength: 64, example: 'workflow.completed', description: `One of ${EVENT_TYPES.join(', ')} (400 INVALID_EVENT_TYPES otherwise)` })
  @IsString()
  @TextLength(1, 64)
  event_type: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Sent as the payload\'s data; default {}' })
  @IsOptional()
  @IsObject({ message: 'test_data must be an object' })
  test_data?: Record<string, unknown>;
}
