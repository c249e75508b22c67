import type { InboundEvent, InboundMessageEvent, InboundStatusEvent } from './provider-connector.js';

/**
 * Reads Meta's webhook payloads (WhatsApp Cloud API, Instagram Messaging) into inbound events.
 * The body passed the signature check, so it is Meta's; but its shape is only documented, never
 * promised: every level is checked, a malformed item is skipped alone, and nothing here throws.
 */

type Json = Record<string, unknown>;

function record(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A non-empty string: an empty id or address identifies nothing. */
function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function finite(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Meta sends error codes as numbers; String() is applied to numbers and strings only (it throws on some objects). */
function code(value: unknown): string | undefined {
  return finite(value) !== undefined ? String(value) : nonEmpty(value);
}

/** A timestamp as Meta writes it: a number, or a string of digits (WhatsApp always, Instagram's test tool). */
function epoch(value: unknown): number | undefined {
  if (typeof value === 'string' && /^\d{1,16}$/.test(value)) return Number(value);
  return finite(value);
}

function dateFrom(ms: number | undefined): Date | undefined {
  if (ms === undefined) return undefined;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** Only the facts that are there: an absent field leaves no `undefined` key behind. */
function compact(details: Json): Json | undefined {
  const kept = Object.entries(details).filter(([, v]) => v !== undefined);
  return kept.length > 0 ? Object.fromEntries(kept) : undefined;
}

function withDetails(details: Json | undefined): { details?: Json } {
  return details === undefined ? {} : { details };
}

/** The arrays under `keys`, in the order the payload lists them (a change may carry both messages and statuses). */
function arraysInPayloadOrder(object: Json, keys: readonly string[]): [string, unknown[]][] {
  return Object.keys(object)
    .filter((key) => keys.includes(key))
    .map((key): [string, unknown[]] => [key, list(object[key])]);
}

const STATUSES: ReadonlySet<string> = new Set(['sent', 'delivered', 'read', 'failed']);

/**
 * The events of one phone number in a WhatsApp Cloud API payload. Meta sends every number of a
 * business to the same webhook, batching entries, changes, messages and statuses of several
 * customers: only `messages` changes whose metadata names `phoneNumberId` belong to this account.
 */
export function parseWhatsAppPayload(body: unknown, phoneNumberId: string): InboundEvent[] {
  const events: InboundEvent[] = [];
  for (const entry of list(record(body)?.entry)) {
    for (const change of list(record(entry)?.changes)) {
      const c = record(change);
      const value = record(c?.value);
      if (c?.field !== 'messages' || value === undefined) continue;
      if (nonEmpty(record(value.metadata)?.phone_number_id) !== phoneNumberId) continue;
      const names = profileNames(value.contacts);
      for (const [key, items] of arraysInPayloadOrder(value, ['messages', 'statuses'])) {
        for (const item of items) {
          const event = key === 'messages' ? whatsAppMessage(item, names) : whatsAppStatus(item);
          if (event) events.push(event);
        }
      }
    }
  }
  return events;
}

function profileNames(contacts: unknown): Map<string, string> {
  const names = new Map<string, string>();
  for (const contact of list(contacts)) {
    const c = record(contact);
    const waId = nonEmpty(c?.wa_id);
    const name = nonEmpty(record(c?.profile)?.name);
    if (waId !== undefined && name !== undefined) names.set(waId, name);
  }
  return names;
}

function whatsAppMessage(item: unknown, names: Map<string, string>): InboundMessageEvent | undefined {
  const m = record(item);
  const providerMessageId = nonEmpty(m?.id);
  const from = nonEmpty(m?.from);
  const type = nonEmpty(m?.type);
  const seconds = epoch(m?.timestamp);
  const timestamp = dateFrom(seconds === undefined ? undefined : seconds * 1000);
  if (!m || providerMessageId === undefined || from === undefined || type === undefined || timestamp === undefined) return undefined;
  const { text: body, details } = whatsAppContent(type, m);
  const profileName = names.get(from);
  return {
    kind: 'message',
    providerMessageId,
    from,
    timestamp,
    type,
    text: body,
    ...(profileName !== undefined && { profileName }),
    ...withDetails(details),
  };
}

const WHATSAPP_MEDIA: ReadonlySet<string> = new Set(['image', 'audio', 'video', 'document', 'sticker']);

/** The text a workflow reads (a body, a reply's title, a template button's text) and a few facts of the other types. */
function whatsAppContent(type: string, m: Json): { text: string | null; details?: Json } {
  const part = record(m[type]);
  if (type === 'text') return { text: typeof part?.body === 'string' ? part.body : null };
  if (type === 'interactive') {
    const replyType = nonEmpty(part?.type);
    const reply = replyType === 'button_reply' || replyType === 'list_reply' ? record(part?.[replyType]) : undefined;
    const title = typeof reply?.title === 'string' ? reply.title : null;
    return { text: title, details: compact({ interactive_type: replyType, reply_id: nonEmpty(reply?.id), description: nonEmpty(reply?.description) }) };
  }
  if (type === 'button') {
    return { text: typeof part?.text === 'string' ? part.text : null, details: compact({ payload: nonEmpty(part?.payload) }) };
  }
  if (WHATSAPP_MEDIA.has(type)) {
    const details = compact({ media_id: nonEmpty(part?.id), mime_type: nonEmpty(part?.mime_type), caption: nonEmpty(part?.caption), filename: nonEmpty(part?.filename) });
    return { text: null, details };
  }
  if (type === 'location') {
    const details = compact({ latitude: finite(part?.latitude), longitude: finite(part?.longitude), name: nonEmpty(part?.name), address: nonEmpty(part?.address) });
    return { text: null, details };
  }
  // An emoji-less reaction is the customer removing theirs (Meta's documented behaviour).
  if (type === 'reaction') return { text: null, details: compact({ emoji: nonEmpty(part?.emoji), reacted_to: nonEmpty(part?.message_id) }) };
  if (type === 'contacts') return { text: null, details: { count: list(m.contacts).length } };
  const error = record(list(m.errors)[0]);
  return { text: null, details: compact({ error_code: code(error?.code), error_title: nonEmpty(error?.title) }) };
}

function whatsAppStatus(item: unknown): InboundStatusEvent | undefined {
  const s = record(item);
  const providerMessageId = nonEmpty(s?.id);
  const recipient = nonEmpty(s?.recipient_id);
  const status = nonEmpty(s?.status);
  const seconds = epoch(s?.timestamp);
  const timestamp = dateFrom(seconds === undefined ? undefined : seconds * 1000);
  // Statuses this contract has no word for ("deleted", "warning", "played"…) are not ours to report.
  if (!s || providerMessageId === undefined || recipient === undefined || timestamp === undefined) return undefined;
  if (status === undefined || !STATUSES.has(status)) return undefined;
  const event: InboundStatusEvent = { kind: 'status', providerMessageId, status: status as InboundStatusEvent['status'], recipient, timestamp };
  const error = record(list(s.errors)[0]);
  if (status === 'failed' && error) {
    const errorCode = code(error.code);
    const title = nonEmpty(error.title) ?? nonEmpty(error.message);
    if (errorCode !== undefined || title !== undefined) event.error = { code: errorCode ?? '', title: title ?? '' };
  }
  return event;
}

/** The `changes` fields that carry a messaging event in their value (the shape of Instagram Login apps and Meta's test tool). */
const INSTAGRAM_MESSAGING_FIELDS: ReadonlySet<string> = new Set(['messages', 'messaging_seen', 'message_reactions', 'messaging_postbacks']);

/**
 * The events of one Instagram professional account. Meta documents two shapes, `entry[].messaging[]`
 * and `entry[].changes[]` with `{field, value}`, and sends the account's own messages back as echoes:
 * only what customers did to this account becomes an event.
 */
export function parseInstagramPayload(body: unknown, accountId: string): InboundEvent[] {
  const events: InboundEvent[] = [];
  for (const entry of list(record(body)?.entry)) {
    const e = record(entry);
    if (!e) continue;
    const entryId = nonEmpty(e.id);
    for (const [key, items] of arraysInPayloadOrder(e, ['messaging', 'changes'])) {
      for (const item of items) {
        const event = instagramEvent(key === 'messaging' ? item : changeValue(item), entryId, accountId);
        if (event) events.push(event);
      }
    }
  }
  return events;
}

function changeValue(change: unknown): unknown {
  const c = record(change);
  return typeof c?.field === 'string' && INSTAGRAM_MESSAGING_FIELDS.has(c.field) ? c.value : undefined;
}

/**
 * Instagram documents timestamps in milliseconds, but Meta's test tool sends seconds (as a string):
 * below 1e11 (1973 in ms, year 5138 in s) a value can only be seconds.
 */
function instagramDate(value: unknown): Date | undefined {
  const n = epoch(value);
  return dateFrom(n !== undefined && n < 1e11 ? n * 1000 : n);
}

function instagramEvent(item: unknown, entryId: string | undefined, accountId: string): InboundEvent | undefined {
  const ev = record(item);
  const sender = nonEmpty(record(ev?.sender)?.id);
  const recipient = nonEmpty(record(ev?.recipient)?.id);
  const timestamp = instagramDate(ev?.timestamp);
  if (!ev || sender === undefined || timestamp === undefined) return undefined;
  // Meta's test tool sends entry id "0": the recipient names the account then.
  if (entryId !== accountId && recipient !== accountId) return undefined;
  // What the account itself sent or did (echoes, its own reads) is no customer's doing.
  if (sender === accountId) return undefined;

  const message = record(ev.message);
  if (message) return message.is_echo === true ? undefined : instagramMessage(message, sender, timestamp);

  const read = record(ev.read);
  if (read) {
    const mid = nonEmpty(read.mid);
    return mid === undefined ? undefined : { kind: 'status', providerMessageId: mid, status: 'read', recipient: sender, timestamp };
  }

  const reaction = record(ev.reaction);
  if (reaction) {
    const mid = nonEmpty(reaction.mid);
    if (mid === undefined) return undefined;
    // A reaction has no id of its own: this one is the same on every redelivery, distinct per reaction.
    return {
      kind: 'message',
      providerMessageId: `${mid}:reaction:${sender}:${timestamp.getTime()}`,
      from: sender,
      timestamp,
      type: 'reaction',
      text: null,
      details: compact({ emoji: nonEmpty(reaction.emoji), reacted_to: mid, action: nonEmpty(reaction.action) }),
    };
  }

  const postback = record(ev.postback);
  if (postback) {
    const mid = nonEmpty(postback.mid);
    if (mid === undefined) return undefined;
    return {
      kind: 'message',
      providerMessageId: mid,
      from: sender,
      timestamp,
      type: 'postback',
      text: typeof postback.title === 'string' ? postback.title : null,
      ...withDetails(compact({ payload: nonEmpty(postback.payload) })),
    };
  }
  return undefined;
}

function instagramMessage(message: Json, from: string, timestamp: Date): InboundMessageEvent | undefined {
  const mid = nonEmpty(message.mid);
  if (mid === undefined) return undefined;
  const base = { kind: 'message' as const, from, timestamp };
  const replyTo = nonEmpty(record(message.reply_to)?.mid);

  // The deletion carries the deleted message's mid: its own id keeps it from reading as a redelivery of that message.
  if (message.is_deleted === true) {
    return { ...base, providerMessageId: `${mid}:deleted`, type: 'deleted', text: null, details: { deleted: mid } };
  }
  if (message.is_unsupported === true) return { ...base, providerMessageId: mid, type: 'unsupported', text: null };

  const body = typeof message.text === 'string' ? message.text : null;
  const quickReply = record(message.quick_reply);
  if (quickReply) {
    const details = compact({ payload: nonEmpty(quickReply.payload), reply_to: replyTo });
    return { ...base, providerMessageId: mid, type: 'quick_reply', text: body, ...withDetails(details) };
  }
  const attachments = list(message.attachments);
  const first = record(attachments[0]);
  const attachmentType = nonEmpty(first?.type);
  if (attachmentType !== undefined) {
    const count = attachments.length > 1 ? attachments.length : undefined;
    const details = compact({ url: nonEmpty(record(first?.payload)?.url), attachments: count, reply_to: replyTo });
    return { ...base, providerMessageId: mid, type: attachmentType, text: body, ...withDetails(details) };
  }
  return { ...base, providerMessageId: mid, type: body === null ? 'unsupported' : 'text', text: body, ...withDetails(compact({ reply_to: replyTo })) };
}
