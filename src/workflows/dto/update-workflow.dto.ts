import { ApiPropertyOptional, OmitType, PartialType } from '@nestjs/swagger';
import { IsString, Length, Matches } from 'class-validator';
import { CreateWorkflowDto } from './create-workflow.dto.js';
import { IsOmittable } from '../../common/validation/is-omittable.decorator.js';

/** Any subset of the create fields; omitted fields keep their values. */
export class UpdateWorkflowDto extends PartialType(OmitType(CreateWorkflowDto, ['name'] as const)) {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @IsOmittable()
  @IsString()
  @Length(1, 200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name?: string;
}
