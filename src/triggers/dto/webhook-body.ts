import { CHANNELS, type Channel } from '../../common/channels.js';
import { InvalidRequestError } from '../../common/errors/common.errors.js';
import { codePointLength } from '../../common/validation/text-length.decorator.js';
import { CHANNEL_MESSAGE, MAX_CUSTOMER_ID_LENGTH, MAX_MESSAGE_LENGTH } from './inbound-message.dto.js';

/** What an inbound webhook's JSON body feeds the execution with. */
export interface WebhookFields {
  customerRef: string | null;
  channel: Channel | null;
  message: string | null;
}

/**
 * `customer_id`, `channel` and `message` of a webhook body, held to the same rules as
 * POST /v1/messages (400 INVALID_REQUEST with the field); absent or null means none. The rest of
 * the body is free-form and only kept as the execution's data.
 */
export function parseWebhookFields(body: unknown): WebhookFields {
  const fields = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const text = (name: string, max: number): string | null => {
    const value = fields[name];
    if (value === undefined || value === null) return null;
    if (typeof value !== 'string' || value.length === 0 || codePointLength(value) > max) {
      throw new InvalidRequestError(`${name} must be a string of 1 to ${max} characters`, name);
    }
    return value;
  };
  const channel = fields.channel;
  if (channel !== undefined && channel !== null && !(CHANNELS as readonly unknown[]).includes(channel)) {
    throw new InvalidRequestError(CHANNEL_MESSAGE, 'channel');
  }
  return {
    customerRef: text('customer_id', MAX_CUSTOMER_ID_LENGTH),
    channel: (channel as Channel | null | undefined) ?? null,
    message: text('message', MAX_MESSAGE_LENGTH),
  };
}

/**
 * The body of POST/PUT /v1/hooks/{id}, for the documentation (the firing service checks it): any JSON
 * (kept whole as the execution's input.data) or text; in a JSON object, customer_id, channel and message
 * are held to POST /v1/messages' rules when present and not null.
 */
export const WEBHOOK_BODY_DOC = {
  required: false,
  content: {
    'application/json': {
      schema: {
        type: 'object' as const,
        additionalProperties: true,
        properties: {
          customer_id: { type: 'string' as const, minLength: 1, maxLength: 200, nullable: true },
          channel: { type: 'string' as const, enum: [...CHANNELS, null], nullable: true },
          message: { type: 'string' as const, minLength: 1, maxLength: 4096, nullable: true },
        },
      },
    },
    'text/plain': { schema: { type: 'string' as const, description: 'Any text; signed over its raw bytes' } },
  },
};
