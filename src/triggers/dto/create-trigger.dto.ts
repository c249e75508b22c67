import { ApiExtraModels, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject, IsOptional, IsString, Matches } from 'class-validator';
import { CHANNELS } from '../../common/channels.js';
import { TRIGGER_TYPES, type TriggerType } from '../entities/trigger.entity.js';
import { TRIGGER_CONFIGURATION_DOCS, TRIGGER_CONFIGURATION_SCHEMA } from './trigger-configuration.doc.js';
import { TextLength } from '../../common/validation/text-length.decorator.js';

@ApiExtraModels(...TRIGGER_CONFIGURATION_DOCS)
export class CreateTriggerDto {
  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Support keywords' })
  @IsString()
  @TextLength(1, 200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name: string;

  @ApiProperty({ enum: TRIGGER_TYPES })
  @IsIn(TRIGGER_TYPES as unknown as string[], { message: `type must be one of ${TRIGGER_TYPES.join(', ')}` })
  type: TriggerType;

  @ApiProperty({ format: 'uuid', description: 'A workflow of the caller\'s organization (404 WORKFLOW_NOT_FOUND otherwise)' })
  @IsString()
  @TextLength(0, 100)
  workflow_id: string;

  @ApiPropertyOptional({ enum: CHANNELS, nullable: true })
  @IsOptional()
  @IsIn(CHANNELS as unknown as string[], { message: `channel must be one of ${CHANNELS.join(', ')}` })
  channel?: string | null;

  @ApiProperty(TRIGGER_CONFIGURATION_SCHEMA)
  @IsObject({ message: 'configuration must be an object' })
  configuration: Record<string, unknown>;
}
