import { ApiExtraModels, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject, IsOptional, IsString, Matches } from 'class-validator';
import { CHANNELS } from '../../common/channels.js';
import { TRIGGER_TYPES, type TriggerType } from '../entities/trigger.entity.js';
import { ApiDiscriminated } from '../../common/http/openapi/schema-markers.js';
import { TRIGGER_CONFIGURATION_DOCS, TRIGGER_CONFIGURATION_SCHEMA, TRIGGER_REQUEST_BRANCHES } from './trigger-configuration.doc.js';
import { TextLength } from '../../common/validation/text-length.decorator.js';

/** Documented as one branch per type, each with its own configuration schema. */
@ApiExtraModels(...TRIGGER_CONFIGURATION_DOCS)
@ApiDiscriminated({ property: 'type', branches: TRIGGER_REQUEST_BRANCHES })
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
