/**
 * What the channels module needs of one messaging provider. Each provider is one class in this
 * folder, registered in PROVIDER_CONNECTORS (provider-connectors.ts); adding a provider touches that
 * folder and that list.
 */

/**
 * A message to send: free-form text, or (WhatsApp) a template for outside the reply window. `humanAgent`:
 * a person wrote it (POST /v1/customers/{id}/messages); Instagram then sends it with the HUMAN_AGENT tag.
 */
export type OutboundContent =
  | { kind: 'text'; text: string; humanAgent?: boolean }
  | { kind: 'template'; template: { name: string; language: string; components?: unknown[] } };

export interface SendRequest {
  /** The provider's base URL from configuration (WHATSAPP_API_URL, INSTAGRAM_API_URL, TWILIO_API_URL), no trailing slash. */
  baseUrl: string;
  /** The account's credentials, unsealed (never logged, never put in an error). */
  credentials: Record<string, string>;
  /** The customer's address at the provider: a WhatsApp phone number (wa_id), an Instagram-scoped id. */
  to: string;
  content: OutboundContent;
  /** Abort the request after this long (a hanging provider is a transient fault). */
  timeoutMs: number;
}

/** The provider accepted the message. */
export interface SendAccepted {
  providerMessageId: string;
}

/**
 * A send the provider did not accept. `retryable`: 429, 5xx, a timeout or a network fault (try again
 * later, after `retryAfterMs` when the provider said so); otherwise permanent (another 4xx), with the
 * provider's error code and title when its error object had them. `message` is ours, safe for
 * clients: never the provider's raw body, never a credential.
 */
export class ProviderSendError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    /** `transport`: no answer came (timed out, or a network fault); absent when the provider answered or nothing was sent. */
    readonly details: { httpStatus?: number; code?: string; title?: string; retryAfterMs?: number; transport?: 'timeout' | 'network' } = {},
  ) {
    super(message);
    this.name = 'ProviderSendError';
  }
}

/** What a provider's webhook payload says: customers' messages and statuses of messages we sent. */
export type InboundEvent = InboundMessageEvent | InboundStatusEvent;

export interface InboundMessageEvent {
  kind: 'message';
  /** The provider's id of the message (wamid…, mid…): unique per account, how a redelivery is recognised. */
  providerMessageId: string;
  /** The customer's address (WhatsApp wa_id / phone number, Instagram-scoped sender id). */
  from: string;
  /** The provider's timestamp of the message. */
  timestamp: Date;
  /** text, interactive, button, image, audio, video, document, sticker, location, contacts, reaction, unsupported… */
  type: string;
  /** The text a workflow matches and reads: a text's body, an interactive reply's or a button's title; null for other types. */
  text: string | null;
  /** The customer's profile name when the payload carries one. */
  profileName?: string;
  /** A few type-specific facts worth recording (media id and mime type, location, reaction emoji…), never the whole payload. */
  details?: Record<string, unknown>;
}

export interface InboundStatusEvent {
  kind: 'status';
  /** The provider's id of the message we sent. */
  providerMessageId: string;
  status: 'sent' | 'delivered' | 'read' | 'failed';
  /** The customer's address. */
  recipient: string;
  timestamp: Date;
  /** For `failed`: the provider's first error (code and title). */
  error?: { code: string; title: string };
}

/** One provider: how credentials look, how a message leaves, how a webhook payload reads. */
export interface ProviderConnector {
  readonly provider: string;
  readonly channel: string;
  /** Credential field names, all required strings. */
  readonly credentialFields: readonly string[];
  /** Whether webhooks come from Meta (GET handshake with verify_token, X-Hub-Signature-256). */
  readonly meta: boolean;
  /** Whether the provider can send a template outside the reply window. */
  readonly templates: boolean;
  send(request: SendRequest): Promise<SendAccepted>;
  /** Reads a webhook payload that passed the signature check; never throws (unknown shapes give no events). */
  parse(body: unknown, credentials: Record<string, string>): InboundEvent[];
}
