import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { CHANNELS } from '../../common/channels.js';
import { API_AUTHENTICATION_METHODS, DEFAULT_API_RATE_LIMIT, MAX_API_RATE_LIMIT } from '../trigger-types/api.trigger-type.js';
import { MAX_KEYWORDS } from '../trigger-types/message.trigger-type.js';
import { MAX_SECRET_LENGTH, MIN_SECRET_LENGTH, WEBHOOK_METHODS } from '../trigger-types/webhook.trigger-type.js';

// Schemas for the documentation only: the trigger-type registry, not class-validator, checks these.

export class MessageTriggerConfigurationDoc {
  @ApiProperty({ type: [String], minItems: 1, maxItems: MAX_KEYWORDS, description: 'Keywords to match (an empty array is invalid)' })
  keywords: string[];
  @ApiPropertyOptional({ default: false }) case_sensitive?: boolean;
  @ApiPropertyOptional({ default: false, description: 'The whole message must equal a keyword' }) exact_match?: boolean;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'en', description: 'Language code (BCP 47)' }) language?: string | null;
  @ApiPropertyOptional({ enum: CHANNELS, nullable: true, description: 'Channel monitored; any when absent' }) channel?: string | null;
}

export class ScheduleTriggerConfigurationDoc {
  @ApiProperty({ example: '0 9 * * 1-5', description: 'Five-field cron expression or @hourly/@daily/@weekly/@monthly/@yearly (422 INVALID_CRON_EXPRESSION)' })
  cron_expression: string;
  @ApiPropertyOptional({ default: 'UTC', example: 'Europe/Paris', description: 'IANA time zone' }) timezone?: string;
  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true, description: 'ISO 8601 with Z or an offset; a date alone is midnight UTC' })
  start_date?: string | null;
  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true, description: 'After start_date' }) end_date?: string | null;
}

export class WebhookTriggerConfigurationDoc {
  @ApiPropertyOptional({ readOnly: true, description: 'Where to send requests: {PUBLIC_BASE_URL}/v1/hooks/{id}. Set by the service; sending it is refused.' })
  url?: string;
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    minLength: MIN_SECRET_LENGTH,
    maxLength: MAX_SECRET_LENGTH,
    description: 'Verification secret (X-Service-Signature = hex HMAC-SHA256 of the body). Stored encrypted; shown by create, get and update only. On update: omitted keeps it, null removes it.',
  })
  secret?: string | null;
  @ApiPropertyOptional({ enum: WEBHOOK_METHODS, default: 'POST' }) method?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, description: 'Headers the request must carry (names case-insensitive)' })
  headers?: Record<string, string>;
}

export class ApiTriggerConfigurationDoc {
  @ApiPropertyOptional({ readOnly: true, description: 'Path that fires the trigger: /v1/triggers/{id}/fire. Set by the service; sending it is refused.' })
  endpoint?: string;
  @ApiPropertyOptional({ enum: API_AUTHENTICATION_METHODS, default: 'bearer' }) authentication?: string;
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_API_RATE_LIMIT, default: DEFAULT_API_RATE_LIMIT, description: 'Firings per hour' })
  rate_limit?: number;
}

export const TRIGGER_CONFIGURATION_DOCS = [
  MessageTriggerConfigurationDoc,
  ScheduleTriggerConfigurationDoc,
  WebhookTriggerConfigurationDoc,
  ApiTriggerConfigurationDoc,
];

/** `oneOf` the four configuration schemas (register them with ApiExtraModels where used). */
export const TRIGGER_CONFIGURATION_SCHEMA = {
  oneOf: TRIGGER_CONFIGURATION_DOCS.map((doc) => ({ $ref: getSchemaPath(doc) })),
  description: 'Depends on type (checked per type: 400 INVALID_TRIGGER_CONFIG, 422 INVALID_CRON_EXPRESSION); unknown keys are refused',
};
