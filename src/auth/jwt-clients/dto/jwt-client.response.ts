import { ApiProperty } from '@nestjs/swagger';
import { ALL_SCOPES } from '../../access.js';
import { JWT_ALGORITHMS } from '../public-key.js';
import type { JwtClient } from '../entities/jwt-client.entity.js';
import { isoTime } from '../../../common/iso-time.js';

export class JwtClientResponse {
  @ApiProperty() id: string;
  @ApiProperty({ description: 'The `iss` of the tokens this client signs (equal to id)' }) application_id: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: [String], enum: JWT_ALGORITHMS, description: "The algorithms the registered key's type allows" }) algorithms: string[];
  @ApiProperty({ type: [String], enum: ALL_SCOPES }) scopes: string[];
  @ApiProperty({ format: 'date-time' }) created_at: string;

  static from(client: JwtClient): JwtClientResponse {
    return {
      id: client.id,
      application_id: client.id,
      name: client.name,
      algorithms: client.algorithms,
      scopes: client.scopes,
      created_at: isoTime(client.createdAt),
    };
  }
}
