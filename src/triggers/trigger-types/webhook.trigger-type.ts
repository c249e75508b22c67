import { isPlainObject, type ConfigReader, type TriggerTypeDefinition } from './trigger-type.js';
import { codePointLength } from '../../common/validation/text-length.decorator.js';

export const WEBHOOK_METHODS = ['POST', 'PUT', 'GET'] as const;
export type WebhookMethod = (typeof WEBHOOK_METHODS)[number];
export const MIN_SECRET_LENGTH = 16;
export const MAX_SECRET_LENGTH = 256;
export const MAX_HEADERS = 20;
const MAX_HEADER_VALUE = 1024;
/** RFC 9110 token characters. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
/** Visible characters, spaces and tabs: what an HTTP field value may hold. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

export interface WebhookTriggerConfiguration {
  /** The method the inbound request must use. */
  method: WebhookMethod;
  /** Headers the inbound request must carry with exactly these values; names lower-cased. */
  headers: Record<string, string>;
}

/**
 * Fires on a request to `{PUBLIC_BASE_URL}/v1/hooks/{id}`. Its secret is not part of the stored
 * configuration: it is kept encrypted in its own column and shown (decrypted) to the owner.
 */
export const webhookTriggerType: TriggerTypeDefinition<WebhookTriggerConfiguration> = {
  type: 'webhook',
  keys: ['method', 'headers', 'secret'],
  readOnlyKeys: ['url'],

  parse(input: Record<string, unknown>, r: ConfigReader) {
    const method = r.oneOf('method', WEBHOOK_METHODS, 'POST', (m) => m.toUpperCase());

    const headers: Record<string, string> = {};
    const rawHeaders = r.optional('headers');
    if (rawHeaders !== undefined) {
      if (!isPlainObject(rawHeaders)) r.fail('headers', 'headers must be an object of header names to string values');
      const entries = Object.entries(rawHeaders);
      if (entries.length > MAX_HEADERS) r.fail('headers', `At most ${MAX_HEADERS} headers`);
      for (const [name, value] of entries) {
        if (!HEADER_NAME.test(name)) r.fail(`headers.${name}`, 'A header name must be an HTTP token (letters, digits and !#$%&\'*+.^_`|~-)');
        if (typeof value !== 'string' || codePointLength(value) > MAX_HEADER_VALUE || !HEADER_VALUE.test(value)) {
          r.fail(`headers.${name}`, `A header value must be a string of at most ${MAX_HEADER_VALUE} visible characters`);
        }
        const lower = name.toLowerCase();
        if (lower in headers) r.fail(`headers.${name}`, `Header ${lower} is given twice (names are case-insensitive)`);
        headers[lower] = value;
      }
    }

    // Omitted: keep the stored secret; null: remove it; a string: replace it.
    let secret: string | null | undefined;
    if (input.secret === null) secret = null;
    else if (input.secret !== undefined) {
      if (typeof input.secret !== 'string' || input.secret.length < MIN_SECRET_LENGTH || input.secret.length > MAX_SECRET_LENGTH) {
        r.fail('secret', `secret must be a string of ${MIN_SECRET_LENGTH} to ${MAX_SECRET_LENGTH} characters`);
      }
      secret = input.secret;
    }
    return { configuration: { method, headers }, secret };
  },

  present(configuration, context) {
    return {
      url: `${context.publicBaseUrl}/v1/hooks/${context.id}`,
      ...(context.secret !== undefined ? { secret: context.secret } : {}),
      method: configuration.method,
      headers: { ...configuration.headers },
    };
  },
};
