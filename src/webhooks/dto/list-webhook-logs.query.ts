import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { DateQueryParam } from '../../common/date-range.js';
import { PageQuery } from '../../common/pagination/page.query.js';
import { ATTEMPT_STATUSES, type AttemptStatus } from '../entities/webhook-delivery-attempt.entity.js';

export class ListWebhookLogsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: ATTEMPT_STATUSES })
  @IsOptional()
  @IsIn(ATTEMPT_STATUSES as unknown as string[], { message: `status must be one of ${ATTEMPT_STATUSES.join(', ')}` })
  status?: AttemptStatus;

  @DateQueryParam('Attempts at or after this time')
  start_date?: string;

  @DateQueryParam('Attempts at or before this time. A date alone includes that whole day')
  end_date?: string;
}
