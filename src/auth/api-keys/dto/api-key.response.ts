import { ApiProperty } from '@nestjs/swagger';
import { PERMISSION_LEVELS, type PermissionLevel } from '../../access.js';
import type { ApiKey } from '../entities/api-key.entity.js';
import { isoTime } from '../../../common/iso-time.js';

export class ApiKeyResponse {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'The first characters of the key', example: 'wfk_Ab3dE9xZ' }) prefix: string;
  @ApiProperty({ enum: PERMISSION_LEVELS }) permission_level: PermissionLevel;
  @ApiProperty({ format: 'date-time' }) created_at: string;

  static from(key: ApiKey): ApiKeyResponse {
    return { id: key.id, name: key.name, prefix: key.prefix, permission_level: key.permissionLevel, created_at: isoTime(key.createdAt) };
  }
}

export class CreatedApiKeyResponse extends ApiKeyResponse {
  @ApiProperty({ description: 'The key itself; returned by this response only' }) key: string;

  static override from(key: ApiKey & { key: string }): CreatedApiKeyResponse {
    return { ...ApiKeyResponse.from(key), key: key.key };
  }
}
