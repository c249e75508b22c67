import { ApiPropertyOptional, OmitType, PartialType } from '@nestjs/swagger';
import { IsString, Length, Matches, ValidateIf } from 'class-validator';
import { CreateWorkflowDto } from './create-workflow.dto.js';

/** Any subset of the create fields; omitted fields keep their values. */
export class UpdateWorkflowDto extends PartialType(OmitType(CreateWorkflowDto, ['name'] as const)) {
  // Not `@IsOptional()`, which would let a null name through to the NOT NULL column (a 500).
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @ValidateIf((_object: object, value: unknown) => value !== undefined)
  @IsString()
  @Length(1, 200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name?: string;
}
