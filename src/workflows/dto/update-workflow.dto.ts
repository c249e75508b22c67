import { ApiPropertyOptional, OmitType, PartialType } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import { CreateWorkflowDto } from './create-workflow.dto.js';
import { IsOmittable } from '../../common/validation/is-omittable.decorator.js';
import { TextLength } from '../../common/validation/text-length.decorator.js';

/** Any subset of the create fields; omitted fields keep their values. */
export class UpdateWorkflowDto extends PartialType(OmitType(CreateWorkflowDto, ['name'] as const)) {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @IsOmittable()
  @IsString()
  @TextLength(1, 200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name?: string;
}
