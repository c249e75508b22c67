import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { DateQueryParam } from '../../common/date-range.js';
import { CursorPageQuery } from '../../common/pagination/page.query.js';
import { EXECUTION_STATUSES, type ExecutionStatus } from '../entities/workflow-execution.entity.js';

/** Filters of the workflow and trigger execution lists; the dates bound started_at / triggered_at. */
export class ListExecutionsQuery extends CursorPageQuery {
  @ApiPropertyOptional({ enum: EXECUTION_STATUSES })
  @IsOptional()
  @IsIn(EXECUTION_STATUSES as unknown as string[], { message: `status must be one of ${EXECUTION_STATUSES.join(', ')}` })
  status?: ExecutionStatus;

  @DateQueryParam('Earliest start of the executions listed')
  start_date?: string;

  @DateQueryParam('Latest start of the executions listed. A date alone includes that whole day')
  end_date?: string;
}
