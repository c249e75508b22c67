import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsOptional, IsString, Matches } from 'class-validator';
import { IsOmittable } from '../../common/validation/is-omittable.decorator.js';
import { TextLength } from '../../common/validation/text-length.decorator.js';

export const CREDENTIALS_SCHEMA = {
  type: 'object',
  description:
    'Write-only, sealed at rest, never returned. whatsapp_cloud: phone_number_id, access_token, app_secret; instagram: account_id, access_token, app_secret; twilio: account_sid, auth_token, phone_number. On update, the fields sent replace those stored. Otherwise 400 INVALID_CHANNEL_ACCOUNT naming the field',
  additionalProperties: { type: 'string' },
  example: { phone_number_id: '106540352242922', access_token: 'EAAG…', app_secret: '3f1c…' },
} as const;

export const SETTINGS_SCHEMA = {
  type: 'object',
  description:
    'workflow_id: the workflow a conversation (or a call) starts when no trigger matches (a workflow of the organization, or null to clear it). ' +
    "Message accounts only: burst_window_ms, a customer's messages within this many ms after the first are handled as one turn (0..10000, 0 or absent: off). " +
    "Voice accounts only: voice (a Twilio <Say> voice such as alice or Polly.Joanna) and language (such as en-US); unset or null, Twilio's defaults apply",
  properties: {
    workflow_id: { type: 'string', format: 'uuid', nullable: true },
    burst_window_ms: { type: 'integer', minimum: 0, maximum: 10_000 },
    voice: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9._-]{0,63}$', nullable: true },
    language: { type: 'string', pattern: '^[a-zA-Z]{2,3}(-[A-Za-z0-9]{2,8}){0,2}$', nullable: true },
  },
  additionalProperties: false,
} as const;

export const VERIFY_TOKEN_DESCRIPTION = "Meta providers only: the token Meta's webhook verification sends back (16..128 printable characters); generated when omitted";

export class CreateChannelAccountDto {
  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Support line' })
  @IsString()
  @TextLength(1, 200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name: string;

  @ApiProperty({ enum: ['whatsapp', 'instagram', 'voice'] })
  // Checked with the provider by parseChannelAndProvider (INVALID_CHANNEL_ACCOUNT).
  @IsDefined()
  channel: unknown;

  @ApiProperty({ enum: ['whatsapp_cloud', 'instagram', 'twilio'], description: 'whatsapp → whatsapp_cloud, instagram → instagram, voice → twilio' })
  @IsDefined()
  provider: unknown;

  @ApiProperty(CREDENTIALS_SCHEMA)
  @IsDefined()
  credentials: unknown;

  @ApiPropertyOptional({ type: String, description: VERIFY_TOKEN_DESCRIPTION })
  @IsOmittable()
  verify_token?: unknown;

  @ApiPropertyOptional(SETTINGS_SCHEMA)
  @IsOptional()
  settings?: unknown;
}
