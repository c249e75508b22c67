import { sendInstagram } from './instagram.client.js';
import { parseInstagramPayload, parseWhatsAppPayload } from './meta-payloads.js';
import type { InboundEvent, ProviderConnector, SendAccepted, SendRequest } from './provider-connector.js';
import { PROVIDERS, type ProviderName } from './provider-definitions.js';
import { sendWhatsAppCloud } from './whatsapp-cloud.client.js';

/** Meta's WhatsApp Cloud API: sends through a phone number id, webhooks per WhatsApp Business Account. */
const whatsappCloud: ProviderConnector = {
  provider: 'whatsapp_cloud',
  channel: PROVIDERS.whatsapp_cloud.channel,
  credentialFields: Object.keys(PROVIDERS.whatsapp_cloud.credentials),
  meta: true,
  templates: true,
  send: (request: SendRequest): Promise<SendAccepted> => sendWhatsAppCloud(request),
  parse: (body: unknown, credentials: Record<string, string>): InboundEvent[] => parseWhatsAppPayload(body, credentials.phone_number_id ?? ''),
};

/** Instagram Messaging: sends to Instagram-scoped ids through /me/messages; no templates. */
const instagram: ProviderConnector = {
  provider: 'instagram',
  channel: PROVIDERS.instagram.channel,
  credentialFields: Object.keys(PROVIDERS.instagram.credentials),
  meta: true,
  templates: false,
  send: (request: SendRequest): Promise<SendAccepted> => sendInstagram(request),
  parse: (body: unknown, credentials: Record<string, string>): InboundEvent[] => parseInstagramPayload(body, credentials.account_id ?? ''),
};

/**
 * The connectors by provider name. A provider without one here (twilio, whose calls are answered with
 * TwiML rather than sent) has an account but no message sends or Meta webhooks.
 */
export const PROVIDER_CONNECTORS: ReadonlyMap<ProviderName, ProviderConnector> = new Map<ProviderName, ProviderConnector>([
  ['whatsapp_cloud', whatsappCloud],
  ['instagram', instagram],
]);

export function connectorFor(provider: string): ProviderConnector | undefined {
  return PROVIDER_CONNECTORS.get(provider as ProviderName);
}
