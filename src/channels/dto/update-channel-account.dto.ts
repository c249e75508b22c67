import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';
import { IsOmittable } from '../../common/validation/is-omittable.decorator.js';
import { TextLength } from '../../common/validation/text-length.decorator.js';
import { CREDENTIALS_SCHEMA, SETTINGS_SCHEMA, VERIFY_TOKEN_DESCRIPTION } from './create-channel-account.dto.js';

/** Omitted fields are kept; the channel and provider of an account do not change (create another account). */
export class UpdateChannelAccountDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @IsOmittable()
  @IsString()
  @TextLength(1, 200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name?: string;

  @ApiPropertyOptional(CREDENTIALS_SCHEMA)
  @IsOmittable()
  credentials?: unknown;

  @ApiPropertyOptional({ type: String, description: VERIFY_TOKEN_DESCRIPTION })
  @IsOmittable()
  verify_token?: unknown;

  @ApiPropertyOptional(SETTINGS_SCHEMA)
  @IsOptional()
  settings?: unknown;
}
