import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsString } from 'class-validator';
import { PERMISSION_LEVELS, type PermissionLevel } from '../../access.js';
import { TextLength } from '../../../common/validation/text-length.decorator.js';

export class CreateApiKeyDto {
  @ApiProperty({ example: 'Production integration', minLength: 1, maxLength: 200 })
  @IsString()
  @TextLength(1, 200)
  name: string;

  @ApiProperty({ enum: PERMISSION_LEVELS })
  @IsIn(PERMISSION_LEVELS as unknown as string[], { message: `permission_level must be one of ${PERMISSION_LEVELS.join(', ')}` })
  permission_level: PermissionLevel;
}
