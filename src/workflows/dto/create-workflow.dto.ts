import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject, IsOptional, IsString, Matches } from 'class-validator';
import { CHANNELS } from '../../common/channels.js';
import { WorkflowConfigurationDoc } from './workflow-configuration.doc.js';
import { IsOmittable } from '../../common/validation/is-omittable.decorator.js';
import { TextLength } from '../../common/validation/text-length.decorator.js';

export class CreateWorkflowDto {
  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Customer support' })
  @IsString()
  @TextLength(1, 200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name: string;

  @ApiPropertyOptional({ maxLength: 2000 })
  @IsOptional()
  @IsString()
  @TextLength(0, 2000)
  description?: string;

  @ApiPropertyOptional({ enum: CHANNELS })
  @IsOptional()
  @IsIn(CHANNELS as unknown as string[], { message: `channel must be one of ${CHANNELS.join(', ')}` })
  channel?: string;

  @ApiPropertyOptional({ type: WorkflowConfigurationDoc, description: 'Node graph; checked by the graph validator (400 INVALID_WORKFLOW_CONFIG, 422 INVALID_NODE_CONFIG)' })
  // Absent means "no nodes yet"; null is refused like any other non-object.
  @IsOmittable()
  @IsObject({ message: 'configuration must be an object' })
  configuration?: Record<string, unknown>;
}
