/**
 * Webhook payloads as Meta sends them (WhatsApp Cloud API, Instagram Messaging), for the e2e tests
 * to JSON.stringify, sign and POST. Written from Meta's documented examples, not from our parser,
 * so that a parser bug cannot hide in a builder sharing it.
 */

export interface WhatsAppPayload {
  object: 'whatsapp_business_account';
  entry: { id: string; changes: { field: 'messages'; value: Record<string, unknown> }[] }[];
}

export interface InstagramPayload {
  object: 'instagram';
  entry: { id: string; time: number; messaging: Record<string, unknown>[] }[];
}

/** The business account's id in WhatsApp payloads: the tests filter by phone number id, not by this. */
const WABA_ID = '102290129340398';
const DISPLAY_PHONE_NUMBER = '15550783881';

const nowSeconds = () => Math.floor(Date.now() / 1000);

function whatsAppEnvelope(phoneNumberId: string, value: Record<string, unknown>): WhatsAppPayload {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: WABA_ID,
        changes: [
          {
            field: 'messages',
            value: { messaging_product: 'whatsapp', metadata: { display_phone_number: DISPLAY_PHONE_NUMBER, phone_number_id: phoneNumberId }, ...value },
          },
        ],
      },
    ],
  };
}

export interface WhatsAppMessageSpec {
  /** The customer's wa_id (their phone number). */
  from: string;
  /** The wamid. */
  id: string;
  /** A text's body (default type "text"). */
  text?: string;
  /** text (default), or interactive when `interactiveTitle` is given; image, location, reaction… get a minimal documented body. */
  type?: string;
  /** Unix seconds (Meta's unit); default now. */
  timestamp?: number;
  /** The customer's profile name in `contacts`; default `Customer <from>`. */
  name?: string;
  /** The title of the button the customer tapped (an interactive button_reply). */
  interactiveTitle?: string;
}

function whatsAppMessageBody(type: string, m: WhatsAppMessageSpec): Record<string, unknown> {
  switch (type) {
    case 'text':
      return { text: { body: m.text ?? '' } };
    case 'interactive':
      return {
        context: { from: DISPLAY_PHONE_NUMBER, id: `wamid.context-of-${m.id}` },
        interactive: { type: 'button_reply', button_reply: { id: `button-${m.interactiveTitle ?? ''}`, title: m.interactiveTitle ?? '' } },
      };
    case 'button':
      return { context: { from: DISPLAY_PHONE_NUMBER, id: `wamid.context-of-${m.id}` }, button: { text: m.text ?? '', payload: m.text ?? '' } };
    case 'image':
    case 'audio':
    case 'video':
    case 'document':
    case 'sticker':
      return { [type]: { id: `media-${m.id}`, mime_type: type === 'image' ? 'image/jpeg' : 'application/octet-stream', sha256: 'k7Tq3V2oHxw6p1q2GzF0kM9eY8Jr4sB5Lz1nQwXcVbA=' } };
    case 'location':
      return { location: { latitude: 38.7223, longitude: -9.1393, name: 'Lisbon', address: 'Praça do Comércio' } };
    case 'reaction':
      return { reaction: { message_id: `wamid.reacted-to-by-${m.id}`, emoji: '👍' } };
    case 'unsupported':
      return { errors: [{ code: 131051, title: 'Message type unknown', message: 'Message type unknown', error_data: { details: 'Message type is currently not supported.' } }] };
    default:
      return {};
  }
}

/** One entry, one `messages` change for `phoneNumberId`; the messages may come from several customers, each listed in `contacts`. */
export function whatsappMessagesPayload(phoneNumberId: string, messages: WhatsAppMessageSpec[]): WhatsAppPayload {
  const contacts = new Map<string, string>();
  for (const m of messages) if (!contacts.has(m.from)) contacts.set(m.from, m.name ?? `Customer ${m.from}`);
  return whatsAppEnvelope(phoneNumberId, {
    contacts: [...contacts].map(([waId, name]) => ({ profile: { name }, wa_id: waId })),
    messages: messages.map((m) => {
      const type = m.type ?? (m.interactiveTitle !== undefined ? 'interactive' : 'text');
      return { from: m.from, id: m.id, timestamp: String(m.timestamp ?? nowSeconds()), type, ...whatsAppMessageBody(type, m) };
    }),
  });
}

export interface WhatsAppStatusSpec {
  /** The wamid of the message we sent. */
  id: string;
  status: 'sent' | 'delivered' | 'read' | 'failed';
  /** The customer's wa_id. */
  recipient: string;
  /** Unix seconds; default now. */
  timestamp?: number;
  /** For `failed`: Meta's error (e.g. 131047, "Re-engagement message"). */
  error?: { code: number; title: string };
}

/** One entry, one `messages` change carrying statuses of messages we sent from `phoneNumberId`. */
export function whatsappStatusesPayload(phoneNumberId: string, statuses: WhatsAppStatusSpec[]): WhatsAppPayload {
  return whatsAppEnvelope(phoneNumberId, {
    statuses: statuses.map((s) => ({
      id: s.id,
      status: s.status,
      timestamp: String(s.timestamp ?? nowSeconds()),
      recipient_id: s.recipient,
      ...(s.status !== 'failed' && {
        conversation: { id: `conversation-${s.recipient}`, origin: { type: 'service' } },
        pricing: { billable: true, pricing_model: 'PMP', category: 'service' },
      }),
      ...(s.error && {
        errors: [
          {
            code: s.error.code,
            title: s.error.title,
            message: s.error.title,
            error_data: { details: s.error.title },
            href: 'https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/',
          },
        ],
      }),
    })),
  });
}

/** Several payloads as Meta batches them: one POST, their entries one after the other. */
export function whatsappBatch(...payloads: WhatsAppPayload[]): WhatsAppPayload {
  return { object: 'whatsapp_business_account', entry: payloads.flatMap((p) => p.entry) };
}

export interface InstagramMessageSpec {
  /** The customer's Instagram-scoped id. For an echo, the customer our account wrote to. */
  from: string;
  mid: string;
  text?: string;
  /** The account's own message, sent back by Meta with is_echo. */
  echo?: boolean;
  /** Milliseconds (Instagram's unit); default now. */
  timestamp?: number;
}

function instagramEnvelope(accountId: string, messaging: Record<string, unknown>[]): InstagramPayload {
  return { object: 'instagram', entry: [{ id: accountId, time: Date.now(), messaging }] };
}

/** One entry for `accountId` in the `messaging` shape: customers' messages, and echoes of the account's own. */
export function instagramMessagesPayload(accountId: string, messages: InstagramMessageSpec[]): InstagramPayload {
  return instagramEnvelope(
    accountId,
    messages.map((m) => ({
      sender: { id: m.echo ? accountId : m.from },
      recipient: { id: m.echo ? m.from : accountId },
      timestamp: m.timestamp ?? Date.now(),
      message: { mid: m.mid, ...(m.text !== undefined && { text: m.text }), ...(m.echo && { is_echo: true }) },
    })),
  );
}

/** The customer `from` saw our message `mid` (a messaging_seen event). */
export function instagramReadPayload(accountId: string, read: { from: string; mid: string }): InstagramPayload {
  return instagramEnvelope(accountId, [{ sender: { id: read.from }, recipient: { id: accountId }, timestamp: Date.now(), read: { mid: read.mid } }]);
}
