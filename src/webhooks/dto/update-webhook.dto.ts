import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsString, Matches, ValidateIf } from 'class-validator';
import { IsOmittable } from '../../common/validation/is-omittable.decorator.js';
import { TextLength } from '../../common/validation/text-length.decorator.js';
import { EVENTS_SCHEMA, RETRY_POLICY_SCHEMA, URL_DESCRIPTION } from './create-webhook.dto.js';

const present = (_object: object, value: unknown) => value !== undefined;

/** Any subset of the create fields; omitted ones keep their values. A partial retry_policy keeps the other key. */
export class UpdateWebhookDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @IsOmittable()
  @IsString()
  @TextLength(1, 200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name?: string;

  @ApiPropertyOptional({ type: String, maxLength: 2048, description: URL_DESCRIPTION })
  @ValidateIf(present)
  @IsOptional()
  url?: unknown;

  @ApiPropertyOptional(EVENTS_SCHEMA)
  @ValidateIf(present)
  @IsOptional()
  events?: unknown;

  @ApiPropertyOptional({ type: String, minLength: 16, maxLength: 256, description: 'A new signing secret (rotation: deliveries are signed with it from now on)' })
  @IsOmittable()
  @IsString()
  @TextLength(16, 256)
  secret?: string;

  @ApiPropertyOptional()
  @IsOmittable()
  @IsBoolean({ message: 'active must be a boolean' })
  active?: boolean;

  @ApiPropertyOptional(RETRY_POLICY_SCHEMA)
  @IsOptional()
  retry_policy?: unknown;
}
