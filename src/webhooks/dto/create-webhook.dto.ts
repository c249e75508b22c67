import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsDefined, IsOptional, IsString, Matches } from 'class-validator';
import { EVENT_TYPES } from '../../events/event-types.js';
import { IsOmittable } from '../../common/validation/is-omittable.decorator.js';
import { TextLength } from '../../common/validation/text-length.decorator.js';

export const EVENTS_SCHEMA = {
  type: 'array',
  minItems: 1,
  maxItems: 50,
  items: { type: 'string', maxLength: 64 },
  example: ['workflow.completed', 'message.*'],
  description: `Event types: ${EVENT_TYPES.join(', ')}; a group wildcard such as \`workflow.*\`, or \`*\` for all. Stored as given. Anything else → 400 INVALID_EVENT_TYPES`,
} as const;

export const RETRY_POLICY_SCHEMA = {
  type: 'object',
  description: 'max_retries integer 0..10 (default 3), retry_delay_ms integer 100..30000 (default 1000); otherwise 400 INVALID_RETRY_POLICY',
  properties: {
    max_retries: { type: 'integer', minimum: 0, maximum: 10 },
    retry_delay_ms: { type: 'integer', minimum: 100, maximum: 30000 },
  },
  additionalProperties: false,
} as const;

export const URL_DESCRIPTION =
  'HTTPS URL without credentials or fragment (400 INVALID_WEBHOOK_URL). Its host must resolve to addresses deliveries may reach (422 WEBHOOK_VALIDATION_FAILED otherwise); unique in the organization (409 WEBHOOK_ALREADY_EXISTS)';

export class CreateWebhookDto {
  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Order system' })
  @IsString()
  @TextLength(1, 200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name: string;

  @ApiProperty({ type: String, maxLength: 2048, example: 'https://hooks.example.com/workflows', description: URL_DESCRIPTION })
  // Checked by parseWebhookUrl, so that any malformed value is INVALID_WEBHOOK_URL.
  @IsDefined()
  url: unknown;

  @ApiProperty(EVENTS_SCHEMA)
  // Checked by parseEventTypes (INVALID_EVENT_TYPES).
  @IsDefined()
  events: unknown;

  @ApiPropertyOptional({ type: String, minLength: 16, maxLength: 256, description: 'Signing secret; generated when omitted (`whsec_` + base64 of 32 random bytes). A `whsec_` secret must carry base64 of 24..64 bytes' })
  @IsOmittable()
  @IsString()
  @TextLength(16, 256)
  secret?: string;

  @ApiPropertyOptional({ default: true })
  @IsOmittable()
  @IsBoolean({ message: 'active must be a boolean' })
  active?: boolean;

  @ApiPropertyOptional(RETRY_POLICY_SCHEMA)
  // Checked by parseRetryPolicy (INVALID_RETRY_POLICY).
  @IsOptional()
  retry_policy?: unknown;
}
