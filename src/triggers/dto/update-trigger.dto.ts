import { ApiExtraModels, ApiHideProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsObject, IsOptional, IsString, Matches, ValidateBy, ValidateIf } from 'class-validator';
import { CHANNELS } from '../../common/channels.js';
import { TRIGGER_CONFIGURATION_DOCS, TRIGGER_CONFIGURATION_SCHEMA } from './trigger-configuration.doc.js';
import { IsOmittable } from '../../common/validation/is-omittable.decorator.js';
import { TextLength } from '../../common/validation/text-length.decorator.js';

const given = (_object: object, value: unknown) => value !== undefined && value !== null;

/** Refuses a property that exists on the resource but cannot change (400 INVALID_REQUEST with its field). */
function Immutable(message: string) {
  return ValidateBy({ name: 'immutable', validator: { validate: () => false, defaultMessage: () => message } });
}

/** Any subset of name, channel and configuration; omitted fields keep their values, the status is unchanged. */
@ApiExtraModels(...TRIGGER_CONFIGURATION_DOCS)
export class UpdateTriggerDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @IsOmittable()
  @IsString()
  @TextLength(1, 200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name?: string;

  @ApiPropertyOptional({ enum: CHANNELS, nullable: true, description: 'null clears it' })
  @IsOptional()
  @IsIn(CHANNELS as unknown as string[], { message: `channel must be one of ${CHANNELS.join(', ')}` })
  channel?: string | null;

  @ApiPropertyOptional({ ...TRIGGER_CONFIGURATION_SCHEMA, description: `Replaces the configuration (omitted keys take their defaults; a webhook's secret is kept unless sent). ${TRIGGER_CONFIGURATION_SCHEMA.description}` })
  @IsOmittable()
  @IsObject({ message: 'configuration must be an object' })
  configuration?: Record<string, unknown>;

  @ApiHideProperty()
  @ValidateIf(given)
  @Immutable('type cannot be changed; create a new trigger instead')
  type?: unknown;

  @ApiHideProperty()
  @ValidateIf(given)
  @Immutable('workflow_id cannot be changed; create a new trigger instead')
  workflow_id?: unknown;
}
