import { credential, postGraph } from './graph-api.js';
import type { OutboundContent, SendAccepted, SendRequest } from './provider-connector.js';

const PROVIDER = 'WhatsApp';

/**
 * Sends one message through the WhatsApp Cloud API: POST {baseUrl}/{phone_number_id}/messages with
 * the access token as bearer. A text goes as `type: "text"` (free-form, inside the 24-hour window),
 * a template as `type: "template"` (the only kind Meta delivers outside it).
 */
export async function sendWhatsAppCloud(request: SendRequest): Promise<SendAccepted> {
  const phoneNumberId = credential(request.credentials, 'phone_number_id', PROVIDER);
  const accessToken = credential(request.credentials, 'access_token', PROVIDER);
  const providerMessageId = await postGraph(
    {
      provider: PROVIDER,
      url: `${request.baseUrl}/${encodeURIComponent(phoneNumberId)}/messages`,
      accessToken,
      body: { messaging_product: 'whatsapp', recipient_type: 'individual', to: request.to, ...contentBody(request.content) },
      timeoutMs: request.timeoutMs,
    },
    (answer) => (answer as { messages?: { id?: unknown }[] } | undefined)?.messages?.[0]?.id,
  );
  return { providerMessageId };
}

function contentBody(content: OutboundContent): Record<string, unknown> {
  if (content.kind === 'text') return { type: 'text', text: { body: content.text } };
  const { name, language, components } = content.template;
  return { type: 'template', template: { name, language: { code: language }, ...(components !== undefined && { components }) } };
}
