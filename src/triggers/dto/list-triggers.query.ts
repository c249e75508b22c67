import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsUUID } from 'class-validator';
import { PageQuery } from '../../common/pagination/page.query.js';
import { TRIGGER_STATUSES, TRIGGER_TYPES, type TriggerStatus, type TriggerType } from '../entities/trigger.entity.js';

export class ListTriggersQuery extends PageQuery {
  @ApiPropertyOptional({ enum: TRIGGER_TYPES })
  @IsOptional()
  @IsIn(TRIGGER_TYPES as unknown as string[], { message: `type must be one of ${TRIGGER_TYPES.join(', ')}` })
  type?: TriggerType;

  @ApiPropertyOptional({ enum: TRIGGER_STATUSES })
  @IsOptional()
  @IsIn(TRIGGER_STATUSES as unknown as string[], { message: `status must be one of ${TRIGGER_STATUSES.join(', ')}` })
  status?: TriggerStatus;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all', { message: 'workflow_id must be a UUID' })
  workflow_id?: string;
}
