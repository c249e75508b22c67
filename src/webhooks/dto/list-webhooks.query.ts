import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional, IsString } from 'class-validator';
import { PageQuery } from '../../common/pagination/page.query.js';
import { TextLength } from '../../common/validation/text-length.decorator.js';

export class ListWebhooksQuery extends PageQuery {
  @ApiPropertyOptional({ type: Boolean })
  @IsOptional()
  @Transform(({ value }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean({ message: 'active must be true or false' })
  active?: boolean;

  @ApiPropertyOptional({ maxLength: 64, description: 'Webhooks that receive this event type (directly or through a wildcard)', example: 'workflow.completed' })
  @IsOptional()
  @IsString()
  @TextLength(1, 64)
  event_type?: string;
}
