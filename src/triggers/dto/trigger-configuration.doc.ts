import type { Type } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { CHANNELS } from '../../common/channels.js';
import { ApiClosedSchema } from '../../common/http/openapi/schema-markers.js';
import type { TriggerType } from '../entities/trigger.entity.js';
import { API_AUTHENTICATION_METHODS, DEFAULT_API_RATE_LIMIT, MAX_API_RATE_LIMIT } from '../trigger-types/api.trigger-type.js';
import { LANGUAGE_TAG, MAX_KEYWORD_LENGTH, MAX_KEYWORDS } from '../trigger-types/message.trigger-type.js';
import { MAX_CRON_LENGTH } from '../trigger-types/schedule.trigger-type.js';
import { MAX_HEADERS, MAX_SECRET_LENGTH, MIN_SECRET_LENGTH, WEBHOOK_METHODS } from '../trigger-types/webhook.trigger-type.js';

// Schemas for the documentation only: the trigger-type registry (trigger-types/*.ts), not class-validator,
// checks these, so each one repeats its type's rules by hand. The registry refuses unknown keys
// (closed schemas) and reads null as "absent" for every optional key (nullable).

@ApiClosedSchema()
export class MessageTriggerConfigurationDoc {
  @ApiProperty({
    type: 'array',
    items: { type: 'string', minLength: 1, maxLength: MAX_KEYWORD_LENGTH, pattern: '\\S' },
    minItems: 1,
    maxItems: MAX_KEYWORDS,
    description: 'Keywords to match (an empty array is invalid); trimmed, duplicates dropped',
  })
  keywords: string[];
  @ApiPropertyOptional({ type: Boolean, nullable: true, default: false }) case_sensitive?: boolean | null;
  @ApiPropertyOptional({ type: Boolean, nullable: true, default: false, description: 'The whole message must equal a keyword' }) exact_match?: boolean | null;
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 35, pattern: LANGUAGE_TAG.source, example: 'en', description: 'Language code (BCP 47)' })
  language?: string | null;
  @ApiPropertyOptional({ type: String, enum: CHANNELS, nullable: true, description: 'Channel monitored; any when absent' }) channel?: string | null;
}

@ApiClosedSchema()
export class ScheduleTriggerConfigurationDoc {
  @ApiProperty({
    minLength: 1,
    maxLength: MAX_CRON_LENGTH,
    example: '0 9 * * 1-5',
    description: 'Five-field cron expression or @hourly/@daily/@weekly/@monthly/@yearly (422 INVALID_CRON_EXPRESSION)',
  })
  cron_expression: string;
  @ApiPropertyOptional({ type: String, nullable: true, default: 'UTC', maxLength: 64, example: 'Europe/Paris', description: 'IANA time zone' }) timezone?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, example: '2030-01-01T09:00:00Z', description: 'ISO 8601 date-time with Z or an offset; a date alone is midnight UTC' })
  start_date?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, example: '2030-06-30', description: 'After start_date' }) end_date?: string | null;
}

@ApiClosedSchema()
export class WebhookTriggerConfigurationDoc {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    minLength: MIN_SECRET_LENGTH,
    maxLength: MAX_SECRET_LENGTH,
    description: 'Verification secret (X-Service-Signature = hex HMAC-SHA256 of the body). Stored encrypted; shown by create, get and update only. On update: omitted keeps it, null removes it.',
  })
  secret?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, pattern: anyCase(WEBHOOK_METHODS), default: 'POST', description: `${WEBHOOK_METHODS.join(', ')} (any letter case)` })
  method?: string | null;
  @ApiPropertyOptional({
    type: 'object',
    nullable: true,
    additionalProperties: { type: 'string', maxLength: 1024 },
    maxProperties: MAX_HEADERS,
    description: 'Headers the request must carry (names: HTTP tokens, case-insensitive)',
  })
  headers?: Record<string, string> | null;
}

@ApiClosedSchema()
export class ApiTriggerConfigurationDoc {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    pattern: anyCase(API_AUTHENTICATION_METHODS),
    default: 'any',
    description: `${API_AUTHENTICATION_METHODS.join(', ')} (any letter case)`,
  })
  authentication?: string | null;
  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: 1, maximum: MAX_API_RATE_LIMIT, default: DEFAULT_API_RATE_LIMIT, description: 'Firings per hour' })
  rate_limit?: number | null;
}

/** One of `words`, in any letter case (the registry normalises case), as a pattern: an enum cannot say so. */
function anyCase(words: readonly string[]): string {
  const letters = (word: string) => [...word].map((c) => (/[a-z]/i.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c)).join('');
  return `^(${words.map(letters).join('|')})$`;
}

// What the service answers: every key filled in (defaults applied), plus the service-set url/endpoint.

@ApiClosedSchema()
export class MessageTriggerConfigurationResponse {
  @ApiProperty({ type: [String] }) keywords: string[];
  @ApiProperty() case_sensitive: boolean;
  @ApiProperty() exact_match: boolean;
  @ApiProperty({ type: String, nullable: true }) language: string | null;
  @ApiProperty({ type: String, enum: CHANNELS, nullable: true }) channel: string | null;
}

@ApiClosedSchema()
export class ScheduleTriggerConfigurationResponse {
  @ApiProperty() cron_expression: string;
  @ApiProperty() timezone: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) start_date: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) end_date: string | null;
}

@ApiClosedSchema()
export class WebhookTriggerConfigurationResponse {
  @ApiProperty({ description: 'Where to send requests: {PUBLIC_BASE_URL}/v1/hooks/{id}' }) url: string;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'Shown by create, get and update, not in lists; null when the trigger has none' })
  secret?: string | null;
  @ApiProperty({ enum: WEBHOOK_METHODS }) method: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, description: 'Header names lower-cased' }) headers: Record<string, string>;
}

@ApiClosedSchema()
export class ApiTriggerConfigurationResponse {
  @ApiProperty({ description: 'Path that fires the trigger: /v1/triggers/{id}/fire' }) endpoint: string;
  @ApiProperty({ enum: API_AUTHENTICATION_METHODS }) authentication: string;
  @ApiProperty({ type: 'integer', minimum: 1, maximum: MAX_API_RATE_LIMIT }) rate_limit: number;
}

export const TRIGGER_CONFIGURATION_DOCS = [
  MessageTriggerConfigurationDoc,
  ScheduleTriggerConfigurationDoc,
  WebhookTriggerConfigurationDoc,
  ApiTriggerConfigurationDoc,
  MessageTriggerConfigurationResponse,
  ScheduleTriggerConfigurationResponse,
  WebhookTriggerConfigurationResponse,
  ApiTriggerConfigurationResponse,
];

/** Each request branch of a type-discriminated trigger schema (ApiDiscriminated on `type`). */
export const TRIGGER_REQUEST_BRANCHES = {
  message: { configuration: MessageTriggerConfigurationDoc },
  schedule: { configuration: ScheduleTriggerConfigurationDoc },
  webhook: { configuration: WebhookTriggerConfigurationDoc },
  api: { configuration: ApiTriggerConfigurationDoc },
} satisfies Record<TriggerType, Record<string, Type<unknown>>>;

export const TRIGGER_RESPONSE_BRANCHES = {
  message: { configuration: MessageTriggerConfigurationResponse },
  schedule: { configuration: ScheduleTriggerConfigurationResponse },
  webhook: { configuration: WebhookTriggerConfigurationResponse },
  api: { configuration: ApiTriggerConfigurationResponse },
} satisfies Record<TriggerType, Record<string, Type<unknown>>>;

const REQUEST_DOCS = Object.values(TRIGGER_REQUEST_BRANCHES).map((branch) => branch.configuration);

/**
 * Where the body carries no type (update: the stored trigger's type decides), any of the four
 * request shapes. anyOf, not oneOf: `{}` is a valid webhook and a valid api configuration.
 */
export const TRIGGER_CONFIGURATION_SCHEMA = {
  anyOf: REQUEST_DOCS.map((doc) => ({ $ref: getSchemaPath(doc) })),
  description: "The trigger type's configuration (checked per type: 400 INVALID_TRIGGER_CONFIG, 422 INVALID_CRON_EXPRESSION); unknown keys are refused",
};
