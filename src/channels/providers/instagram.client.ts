import { credential, postGraph } from './graph-api.js';
import { ProviderSendError, type SendAccepted, type SendRequest } from './provider-connector.js';

const PROVIDER = 'Instagram';

/**
 * Sends one text through Instagram Messaging: POST {baseUrl}/me/messages with the account's access
 * token as bearer; the token names the account, so `account_id` is not part of the request. A person's
 * message goes as `messaging_type: MESSAGE_TAG` with `tag: HUMAN_AGENT`, which Meta accepts up to 7 days
 * after the customer's last message (24 hours without it).
 */
export async function sendInstagram(request: SendRequest): Promise<SendAccepted> {
  if (request.content.kind !== 'text') throw new ProviderSendError('Instagram has no message templates', false);
  const accessToken = credential(request.credentials, 'access_token', PROVIDER);
  const providerMessageId = await postGraph(
    {
      provider: PROVIDER,
      url: `${request.baseUrl}/me/messages`,
      accessToken,
      body: {
        recipient: { id: request.to },
        ...(request.content.humanAgent ? { messaging_type: 'MESSAGE_TAG', tag: 'HUMAN_AGENT' } : {}),
        message: { text: request.content.text },
      },
      timeoutMs: request.timeoutMs,
    },
    (answer) => (answer as { message_id?: unknown } | undefined)?.message_id,
  );
  return { providerMessageId };
}
