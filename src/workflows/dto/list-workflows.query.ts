import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString } from 'class-validator';
import { CHANNELS } from '../../common/channels.js';
import { CursorPageQuery } from '../../common/pagination/page.query.js';
import { WORKFLOW_STATUSES, type WorkflowStatus } from '../entities/workflow.entity.js';
import { TextLength } from '../../common/validation/text-length.decorator.js';

export class ListWorkflowsQuery extends CursorPageQuery {
  @ApiPropertyOptional({ enum: WORKFLOW_STATUSES })
  @IsOptional()
  @IsIn(WORKFLOW_STATUSES as unknown as string[], { message: `status must be one of ${WORKFLOW_STATUSES.join(', ')}` })
  status?: WorkflowStatus;

  @ApiPropertyOptional({ enum: CHANNELS })
  @IsOptional()
  @IsIn(CHANNELS as unknown as string[], { message: `channel must be one of ${CHANNELS.join(', ')}` })
  channel?: string;

  @ApiPropertyOptional({ description: 'Case-insensitive match on name or description', maxLength: 200 })
  @IsOptional()
  @IsString()
  @TextLength(0, 200)
  search?: string;
}
