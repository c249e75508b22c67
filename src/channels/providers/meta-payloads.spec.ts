import { test } from '@fast-check/vitest';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseInstagramPayload, parseWhatsAppPayload } from './meta-payloads.js';
import type { InboundEvent } from './provider-connector.js';

// Fixtures follow the payloads in Meta's webhook references (WhatsApp "messages" webhook: text,
// interactive, button, media, location, reaction, unsupported, status; Instagram Messaging webhooks),
// with their documented example values where Meta gives some.

const PHONE_NUMBER_ID = '106540352242922';
const OTHER_PHONE_NUMBER_ID = '106540352242999';
const metadata = { display_phone_number: '15550783881', phone_number_id: PHONE_NUMBER_ID };
const at = (seconds: number) => new Date(seconds * 1000);

/** One `messages` change for our number around the given value's arrays. */
const whatsApp = (value: Record<string, unknown>) => ({
  object: 'whatsapp_business_account',
  entry: [{ id: '102290129340398', changes: [{ value: { messaging_product: 'whatsapp', metadata, ...value }, field: 'messages' }] }],
});

describe('parseWhatsAppPayload', () => {
  it('reads a text message with the profile name of its contact', () => {
    const body = {
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '102290129340398',
          changes: [
            {
              value: {
                messaging_product: 'whatsapp',
                metadata: { display_phone_number: '15550783881', phone_number_id: '106540352242922' },
                contacts: [{ profile: { name: 'Sheena Nelson' }, wa_id: '16505551234' }],
                messages: [
                  {
                    from: '16505551234',
                    id: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=',
                    timestamp: '1749416383',
                    type: 'text',
                    text: { body: 'Does it come in another color?' },
                  },
                ],
              },
              field: 'messages',
            },
          ],
        },
      ],
    };
    expect(parseWhatsAppPayload(body, PHONE_NUMBER_ID)).toEqual([
      {
        kind: 'message',
        providerMessageId: 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=',
        from: '16505551234',
        timestamp: at(1749416383),
        type: 'text',
        text: 'Does it come in another color?',
        profileName: 'Sheena Nelson',
      },
    ]);
  });

  it('reads every entry, change, message and status of a batch in payload order, for this number only', () => {
    const body = {
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '102290129340398',
          changes: [
            {
              value: {
                messaging_product: 'whatsapp',
                metadata: { display_phone_number: '15550783881', phone_number_id: '106540352242922' },
                statuses: [
                  {
                    id: 'wamid.OUT-1',
                    status: 'delivered',
                    timestamp: '1749416390',
                    recipient_id: '16315551181',
                    conversation: { id: '6ceb9d929c1a9a2b3c2b1d5c0e6f7a8b', origin: { type: 'service' } },
                    pricing: { billable: true, pricing_model: 'PMP', category: 'service' },
                  },
                ],
                contacts: [{ profile: { name: 'Sheena Nelson' }, wa_id: '16505551234' }],
                messages: [{ from: '16505551234', id: 'wamid.IN-1', timestamp: '1749416383', type: 'text', text: { body: 'Does it come in another color?' } }],
              },
              field: 'messages',
            },
            {
              value: {
                messaging_product: 'whatsapp',
                metadata: { display_phone_number: '15550783999', phone_number_id: '106540352242999' },
                contacts: [{ profile: { name: 'Sheena Nelson' }, wa_id: '16505551234' }],
                messages: [{ from: '16505551234', id: 'wamid.OTHER-NUMBER', timestamp: '1749416384', type: 'text', text: { body: 'Hello other shop' } }],
              },
              field: 'messages',
            },
          ],
        },
        {
          id: '102290129340398',
          changes: [
            {
              value: {
                messaging_product: 'whatsapp',
                metadata: { display_phone_number: '15550783881', phone_number_id: '106540352242922' },
                contacts: [{ profile: { name: 'Pablo Morales' }, wa_id: '16315551181' }],
                messages: [
                  {
                    context: { from: '15550783881', id: 'wamid.OUT-LIST' },
                    from: '16315551181',
                    id: 'wamid.IN-2',
                    timestamp: '1749416400',
                    type: 'interactive',
                    interactive: { type: 'list_reply', list_reply: { id: 'shipping-express', title: 'Express', description: 'Next business day' } },
                  },
                ],
              },
              field: 'messages',
            },
            {
              value: {
                messaging_product: 'whatsapp',
                metadata: { display_phone_number: '15550783881', phone_number_id: '106540352242922' },
                statuses: [
                  {
                    id: 'wamid.OUT-2',
                    status: 'failed',
                    timestamp: '1749416410',
                    recipient_id: '16505551234',
                    errors: [
                      {
                        code: 131047,
                        title: 'Re-engagement message',
                        message: 'Re-engagement message',
                        error_data: { details: 'Message failed to send because more than 24 hours have passed since the customer last replied to this number.' },
                        href: 'https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/',
                      },
                    ],
                  },
                ],
              },
              field: 'messages',
            },
            { value: { event: 'VERIFIED_ACCOUNT', waba_info: { waba_id: '102290129340398' } }, field: 'account_update' },
          ],
        },
      ],
    };
    expect(parseWhatsAppPayload(body, PHONE_NUMBER_ID)).toEqual([
      { kind: 'status', providerMessageId: 'wamid.OUT-1', status: 'delivered', recipient: '16315551181', timestamp: at(1749416390) },
      {
        kind: 'message',
        providerMessageId: 'wamid.IN-1',
        from: '16505551234',
        timestamp: at(1749416383),
        type: 'text',
        text: 'Does it come in another color?',
        profileName: 'Sheena Nelson',
      },
      {
        kind: 'message',
        providerMessageId: 'wamid.IN-2',
        from: '16315551181',
        timestamp: at(1749416400),
        type: 'interactive',
        text: 'Express',
        profileName: 'Pablo Morales',
        details: { interactive_type: 'list_reply', reply_id: 'shipping-express', description: 'Next business day' },
      },
      {
        kind: 'status',
        providerMessageId: 'wamid.OUT-2',
        status: 'failed',
        recipient: '16505551234',
        timestamp: at(1749416410),
        error: { code: '131047', title: 'Re-engagement message' },
      },
    ]);
    expect(parseWhatsAppPayload(body, OTHER_PHONE_NUMBER_ID).map((e) => e.providerMessageId)).toEqual(['wamid.OTHER-NUMBER']);
    expect(parseWhatsAppPayload(body, '106540352240000')).toEqual([]);
  });

  it('gives a reply button its title and a template quick reply its text', () => {
    const body = whatsApp({
      contacts: [{ profile: { name: 'Sheena Nelson' }, wa_id: '16505551234' }],
      messages: [
        {
          context: { from: '15550783881', id: 'wamid.OUT-BUTTONS' },
          from: '16505551234',
          id: 'wamid.BUTTON-REPLY',
          timestamp: '1749416500',
          type: 'interactive',
          interactive: { type: 'button_reply', button_reply: { id: 'change-button', title: 'Change' } },
        },
        {
          context: { from: '15550783881', id: 'wamid.OUT-TEMPLATE' },
          from: '16505551234',
          id: 'wamid.TEMPLATE-BUTTON',
          timestamp: '1749416501',
          type: 'button',
          button: { payload: 'UNSUBSCRIBE', text: 'Stop promotions' },
        },
      ],
    });
    const events = parseWhatsAppPayload(body, PHONE_NUMBER_ID);
    expect(events.map((e) => e.kind === 'message' && [e.type, e.text, e.details])).toEqual([
      ['interactive', 'Change', { interactive_type: 'button_reply', reply_id: 'change-button' }],
      ['button', 'Stop promotions', { payload: 'UNSUBSCRIBE' }],
    ]);
  });

  it('keeps the type and a few facts of other messages, with no text and never the raw object', () => {
    const from = '16505551234';
    const body = whatsApp({
      contacts: [{ profile: { name: 'Sheena Nelson' }, wa_id: from }],
      messages: [
        {
          from,
          id: 'wamid.IMAGE',
          timestamp: '1749416600',
          type: 'image',
          image: { caption: 'The blue one', mime_type: 'image/jpeg', sha256: 'Ilm2Ei0Mx5yHM3PxaYd6Zo4a6Ic1m6GN1t8Ca4Pjq6Q=', id: '1003383421387256' },
        },
        {
          from,
          id: 'wamid.LOCATION',
          timestamp: '1749416601',
          type: 'location',
          location: { address: '1 Hacker Way, Menlo Park, CA 94025', latitude: 37.483307, longitude: -122.148981, name: 'Main Street Beans' },
        },
        { from, id: 'wamid.REACTION', timestamp: '1749416602', type: 'reaction', reaction: { message_id: 'wamid.OUT-3', emoji: '\u{1F600}' } },
        { from, id: 'wamid.UNREACTION', timestamp: '1749416603', type: 'reaction', reaction: { message_id: 'wamid.OUT-3' } },
        {
          from,
          id: 'wamid.UNSUPPORTED',
          timestamp: '1749416604',
          type: 'unsupported',
          errors: [{ code: 131051, title: 'Message type unknown', message: 'Message type unknown', error_data: { details: 'Message type is currently not supported.' } }],
        },
        {
          from,
          id: 'wamid.CONTACTS',
          timestamp: '1749416605',
          type: 'contacts',
          contacts: [{ name: { formatted_name: 'Barbara J. Johnson', first_name: 'Barbara' }, phones: [{ phone: '+1 (940) 555-1234', type: 'HOME' }] }],
        },
      ],
    });
    const events = parseWhatsAppPayload(body, PHONE_NUMBER_ID);
    expect(events.map((e) => e.kind === 'message' && [e.providerMessageId, e.type, e.text, e.details])).toEqual([
      ['wamid.IMAGE', 'image', null, { media_id: '1003383421387256', mime_type: 'image/jpeg', caption: 'The blue one' }],
      [
        'wamid.LOCATION',
        'location',
        null,
        { latitude: 37.483307, longitude: -122.148981, name: 'Main Street Beans', address: '1 Hacker Way, Menlo Park, CA 94025' },
      ],
      ['wamid.REACTION', 'reaction', null, { emoji: '\u{1F600}', reacted_to: 'wamid.OUT-3' }],
      ['wamid.UNREACTION', 'reaction', null, { reacted_to: 'wamid.OUT-3' }],
      ['wamid.UNSUPPORTED', 'unsupported', null, { error_code: '131051', error_title: 'Message type unknown' }],
      ['wamid.CONTACTS', 'contacts', null, { count: 1 }],
    ]);
    expect(events.every((e) => e.kind === 'message' && e.profileName === 'Sheena Nelson')).toBe(true);
  });

  it('reads sent, delivered, read and failed statuses, and skips those the contract has no word for', () => {
    const status = (id: string, status: string, extra: Record<string, unknown> = {}) => ({
      id,
      status,
      timestamp: '1749416700',
      recipient_id: '16505551234',
      ...extra,
    });
    const body = whatsApp({
      statuses: [
        status('wamid.S1', 'sent'),
        status('wamid.S2', 'deleted'),
        status('wamid.S3', 'read'),
        status('wamid.S4', 'warning'),
        status('wamid.S5', 'failed', { errors: [{ code: 131026, title: 'Message undeliverable' }] }),
        status('wamid.S6', 'failed'),
        // An error on a status that did not fail is no failure of ours to record.
        status('wamid.S7', 'delivered', { errors: [{ code: 1, title: 'x' }] }),
      ],
    });
    expect(parseWhatsAppPayload(body, PHONE_NUMBER_ID)).toEqual([
      { kind: 'status', providerMessageId: 'wamid.S1', status: 'sent', recipient: '16505551234', timestamp: at(1749416700) },
      { kind: 'status', providerMessageId: 'wamid.S3', status: 'read', recipient: '16505551234', timestamp: at(1749416700) },
      {
        kind: 'status',
        providerMessageId: 'wamid.S5',
        status: 'failed',
        recipient: '16505551234',
        timestamp: at(1749416700),
        error: { code: '131026', title: 'Message undeliverable' },
      },
      { kind: 'status', providerMessageId: 'wamid.S6', status: 'failed', recipient: '16505551234', timestamp: at(1749416700) },
      { kind: 'status', providerMessageId: 'wamid.S7', status: 'delivered', recipient: '16505551234', timestamp: at(1749416700) },
    ]);
  });

  it('skips a malformed item alone and keeps the rest of the batch', () => {
    const good = (id: string) => ({ from: '16505551234', id, timestamp: '1749416800', type: 'text', text: { body: id } });
    const body = whatsApp({
      contacts: [{ profile: { name: 42 }, wa_id: '16505551234' }, null, 'x'],
      messages: [
        good('wamid.A'),
        { ...good('wamid.NO-ID'), id: undefined },
        { ...good('wamid.NUMBER-FROM'), from: 16505551234 },
        { ...good('wamid.NO-TYPE'), type: 7 },
        { ...good('wamid.BAD-TIME'), timestamp: 'yesterday' },
        { ...good('wamid.EMPTY-ID'), id: '' },
        null,
        [good('wamid.NESTED')],
        good('wamid.B'),
      ],
      statuses: [{ id: 'wamid.S', status: 'read', timestamp: '1749416800' }, 'delivered', { id: 'wamid.T', status: 'read', timestamp: '1749416800', recipient_id: '1' }],
    });
    expect(parseWhatsAppPayload(body, PHONE_NUMBER_ID).map((e) => e.providerMessageId)).toEqual(['wamid.A', 'wamid.B', 'wamid.T']);
  });

  it('reads nothing for a phone number id that is not the account’s string', () => {
    const message = { from: '16505551234', id: 'wamid.N', timestamp: '1749416800', type: 'text', text: { body: 'hi' } };
    const numeric = {
      object: 'whatsapp_business_account',
      entry: [{ id: '102290129340398', changes: [{ value: { metadata: { phone_number_id: 106540352242922 }, messages: [message] }, field: 'messages' }] }],
    };
    expect(parseWhatsAppPayload(numeric, PHONE_NUMBER_ID)).toEqual([]);
    expect(parseWhatsAppPayload(whatsApp({ messages: [message] }), '')).toEqual([]);
  });
});

const IG_ACCOUNT = '17841405822304914';
const CUSTOMER = '1254459154682919';

/** One entry for our account in the `messaging` shape. */
const instagram = (...messaging: Record<string, unknown>[]) => ({ object: 'instagram', entry: [{ id: IG_ACCOUNT, time: 1569262486134, messaging }] });
const fromCustomer = (timestamp: number, event: Record<string, unknown>) => ({ sender: { id: CUSTOMER }, recipient: { id: IG_ACCOUNT }, timestamp, ...event });

describe('parseInstagramPayload', () => {
  it('reads customers’ messages in the messaging shape and ignores the account’s echoes', () => {
    const body = {
      object: 'instagram',
      entry: [
        {
          id: '17841405822304914',
          time: 1569262486134,
          messaging: [
            {
              sender: { id: '1254459154682919' },
              recipient: { id: '17841405822304914' },
              timestamp: 1569262485349,
              message: { mid: 'aWdfZAG1faXRlbToxOklHTWVzc2FnZAUlEOjE3ODQxNDA1ODIyMzA0OTE0', text: 'Is the blue one in stock?' },
            },
            {
              sender: { id: '17841405822304914' },
              recipient: { id: '1254459154682919' },
              timestamp: 1569262485500,
              message: { mid: 'aWdfZAG1faXRlbToxOklHTWVzc2FnZAUlEOjE3ODQxNDA1ODIyMzA0OTE1', text: 'Yes, it is!', is_echo: true },
            },
            {
              sender: { id: '1254459154682919' },
              recipient: { id: '17841405822304914' },
              timestamp: 1569262485600,
              // An echo flag alone is enough, whoever the sender says it is.
              message: { mid: 'aWdfZAG1faXRlbToxOklHTWVzc2FnZAUlEOjE3ODQxNDA1ODIyMzA0OTE2', text: 'Echoed', is_echo: true },
            },
          ],
        },
      ],
    };
    expect(parseInstagramPayload(body, IG_ACCOUNT)).toEqual([
      {
        kind: 'message',
        providerMessageId: 'aWdfZAG1faXRlbToxOklHTWVzc2FnZAUlEOjE3ODQxNDA1ODIyMzA0OTE0',
        from: '1254459154682919',
        timestamp: new Date(1569262485349),
        type: 'text',
        text: 'Is the blue one in stock?',
      },
    ]);
  });

  it('reads the changes shape Meta’s test tool sends (entry id "0", timestamp in seconds as a string)', () => {
    const body = {
      object: 'instagram',
      entry: [
        {
          id: '0',
          time: 1527459824,
          changes: [
            {
              field: 'messages',
              value: { sender: { id: '12334' }, recipient: { id: '23245' }, timestamp: '1527459824', message: { mid: 'random_mid', text: 'random_text' } },
            },
            { field: 'comments', value: { id: '17865799348089039', from: { id: '12334', username: 'someone' }, text: 'This is an example.' } },
          ],
        },
      ],
    };
    expect(parseInstagramPayload(body, '23245')).toEqual([
      { kind: 'message', providerMessageId: 'random_mid', from: '12334', timestamp: new Date(1527459824000), type: 'text', text: 'random_text' },
    ]);
    expect(parseInstagramPayload(body, '99999')).toEqual([]);
  });

  it('reads entries of this account only', () => {
    const otherAccount = '17841400000000000';
    const other = {
      id: otherAccount,
      time: 1569262486134,
      messaging: [{ sender: { id: CUSTOMER }, recipient: { id: otherAccount }, timestamp: 1569262485349, message: { mid: 'm-other', text: 'hi' } }],
    };
    const ours = instagram(fromCustomer(1569262485350, { message: { mid: 'm-ours', text: 'hi' } })).entry[0];
    expect(parseInstagramPayload({ object: 'instagram', entry: [other, ours] }, IG_ACCOUNT).map((e) => e.providerMessageId)).toEqual(['m-ours']);
  });

  it('reads quick replies, postbacks, attachments, deletions and unsupported messages', () => {
    const body = instagram(
      fromCustomer(1700000000001, { message: { mid: 'm-quick', text: 'Red', quick_reply: { payload: 'COLOR_RED' } } }),
      fromCustomer(1700000000002, { postback: { mid: 'm-postback', title: 'Talk to a human', payload: 'HUMAN' } }),
      fromCustomer(1700000000003, {
        message: { mid: 'm-image', attachments: [{ type: 'image', payload: { url: 'https://lookaside.fbsbx.com/ig_messaging_cdn/?asset_id=1' } }] },
      }),
      fromCustomer(1700000000004, {
        message: {
          mid: 'm-story-reply',
          text: 'Love this',
          reply_to: { story: { url: 'https://lookaside.fbsbx.com/story', id: '1786' } },
          attachments: [
            { type: 'share', payload: { url: 'https://www.instagram.com/p/1' } },
            { type: 'image', payload: { url: 'https://lookaside.fbsbx.com/2' } },
          ],
        },
      }),
      fromCustomer(1700000000005, { message: { mid: 'm-answer', text: 'Same here', reply_to: { mid: 'm-earlier' } } }),
      fromCustomer(1700000000006, { message: { mid: 'm-deleted', is_deleted: true } }),
      fromCustomer(1700000000007, { message: { mid: 'm-gif', is_unsupported: true } }),
    );
    expect(parseInstagramPayload(body, IG_ACCOUNT).map((e) => e.kind === 'message' && [e.providerMessageId, e.type, e.text, e.details])).toEqual([
      ['m-quick', 'quick_reply', 'Red', { payload: 'COLOR_RED' }],
      ['m-postback', 'postback', 'Talk to a human', { payload: 'HUMAN' }],
      ['m-image', 'image', null, { url: 'https://lookaside.fbsbx.com/ig_messaging_cdn/?asset_id=1' }],
      ['m-story-reply', 'share', 'Love this', { url: 'https://www.instagram.com/p/1', attachments: 2 }],
      ['m-answer', 'text', 'Same here', { reply_to: 'm-earlier' }],
      ['m-deleted:deleted', 'deleted', null, { deleted: 'm-deleted' }],
      ['m-gif', 'unsupported', null, undefined],
    ]);
  });

  it('reads a seen message as a read status for its sender', () => {
    const body = instagram(fromCustomer(1700000000100, { read: { mid: 'm-ours-sent' } }));
    expect(parseInstagramPayload(body, IG_ACCOUNT)).toEqual([
      { kind: 'status', providerMessageId: 'm-ours-sent', status: 'read', recipient: CUSTOMER, timestamp: new Date(1700000000100) },
    ]);
    // The account reading the customer's message is nothing the customer did.
    const ownRead = instagram({ sender: { id: IG_ACCOUNT }, recipient: { id: CUSTOMER }, timestamp: 1700000000101, read: { mid: 'm-customer' } });
    expect(parseInstagramPayload(ownRead, IG_ACCOUNT)).toEqual([]);
  });

  it('gives a reaction an id of its own that a redelivery repeats', () => {
    const reaction = fromCustomer(1700000000200, { reaction: { mid: 'm-ours-sent', action: 'react', reaction: 'love', emoji: '\u2764\uFE0F' } });
    const event = {
      kind: 'message',
      providerMessageId: `m-ours-sent:reaction:${CUSTOMER}:1700000000200`,
      from: CUSTOMER,
      timestamp: new Date(1700000000200),
      type: 'reaction',
      text: null,
      details: { emoji: '\u2764\uFE0F', reacted_to: 'm-ours-sent', action: 'react' },
    };
    expect(parseInstagramPayload(instagram(reaction), IG_ACCOUNT)).toEqual([event]);
    expect(parseInstagramPayload(instagram(reaction, reaction), IG_ACCOUNT)).toEqual([event, event]);
    const unreact = fromCustomer(1700000000300, { reaction: { mid: 'm-ours-sent', action: 'unreact' } });
    expect(parseInstagramPayload(instagram(unreact), IG_ACCOUNT)).toEqual([
      {
        ...event,
        providerMessageId: `m-ours-sent:reaction:${CUSTOMER}:1700000000300`,
        timestamp: new Date(1700000000300),
        details: { reacted_to: 'm-ours-sent', action: 'unreact' },
      },
    ]);
  });

  it('skips a malformed item alone', () => {
    const body = instagram(
      fromCustomer(1700000000400, { message: { mid: 'm-1', text: 'one' } }),
      fromCustomer(1700000000401, { message: { text: 'no mid' } }),
      { sender: { id: 7 }, recipient: { id: IG_ACCOUNT }, timestamp: 1700000000402, message: { mid: 'm-numeric-sender', text: 'x' } },
      fromCustomer(Number.NaN, { message: { mid: 'm-nan-time', text: 'x' } }),
      fromCustomer(1700000000403, { read: { watermark: 1700000000000 } }),
      fromCustomer(1700000000404, { reaction: { emoji: 'x' } }),
      fromCustomer(1700000000405, { referral: { ref: 'ad' } }),
      fromCustomer(1700000000406, { message: { mid: 'm-2', text: 'two' } }),
    );
    expect(parseInstagramPayload(body, IG_ACCOUNT).map((e) => e.providerMessageId)).toEqual(['m-1', 'm-2']);
  });
});

/** What every event must be, whatever the payload: the ingestion stores these fields as they are. */
function expectWellFormed(events: InboundEvent[]) {
  expect(Array.isArray(events)).toBe(true);
  for (const e of events) {
    expect(typeof e.providerMessageId === 'string' && e.providerMessageId !== '').toBe(true);
    expect(e.timestamp instanceof Date && !Number.isNaN(e.timestamp.getTime())).toBe(true);
    if (e.kind === 'message') {
      expect(typeof e.from === 'string' && e.from !== '' && typeof e.type === 'string' && e.type !== '').toBe(true);
      expect(e.text === null || typeof e.text === 'string').toBe(true);
    } else {
      expect(['sent', 'delivered', 'read', 'failed']).toContain(e.status);
      expect(typeof e.recipient === 'string' && e.recipient !== '').toBe(true);
      if (e.error) expect(typeof e.error.code === 'string' && typeof e.error.title === 'string').toBe(true);
    }
  }
}

describe('garbage never throws', () => {
  // Any value at all, including null-prototype and boxed objects (String() throws on the former).
  const junk = fc.oneof(
    fc.anything({ maxDepth: 2, maxKeys: 4, withNullPrototype: true, withBoxedValues: true, withSparseArray: true }),
    fc.constant(Object.create(null) as unknown),
  );
  const array = <T>(arbitrary: fc.Arbitrary<T>) => fc.array(arbitrary, { maxLength: 3 });
  // Mostly the expected shape, so that a payload often survives down to an event.
  const or = <T>(arbitrary: fc.Arbitrary<T>) => fc.oneof({ arbitrary, weight: 5 }, { arbitrary: junk, weight: 1 });
  const maybe = <T>(arbitrary: fc.Arbitrary<T>) => fc.oneof(fc.constant(undefined), or(arbitrary));
  const seconds = or(fc.oneof(fc.constant('1749416383'), fc.nat().map(String), fc.double(), fc.constant('9'.repeat(16))));
  const id = or(fc.constantFrom('wamid.X', '16505551234', PHONE_NUMBER_ID, IG_ACCOUNT, ''));
  // Every key present: a value of junk (undefined included) stands for a missing or mistyped field.
  const partial = <T extends Record<string, fc.Arbitrary<unknown>>>(fields: T) => fc.record(fields);

  // Payloads close to Meta's shapes with garbage at every level, so that the deep paths are reached too.
  const whatsAppLike = partial({
    object: or(fc.constant('whatsapp_business_account')),
    entry: or(
      array(
        partial({
          id,
          changes: or(
            array(
              partial({
                field: or(fc.constant('messages')),
                value: or(
                  partial({
                    metadata: or(partial({ phone_number_id: or(fc.constant(PHONE_NUMBER_ID)) })),
                    contacts: or(array(partial({ wa_id: id, profile: or(partial({ name: junk })) }))),
                    messages: or(
                      array(
                        partial({
                          id,
                          from: id,
                          timestamp: seconds,
                          type: or(fc.constantFrom('text', 'interactive', 'button', 'image', 'location', 'reaction', 'contacts', 'unsupported', 'system')),
                          text: or(partial({ body: junk })),
                          interactive: or(partial({ type: or(fc.constantFrom('button_reply', 'list_reply')), button_reply: junk, list_reply: junk })),
                          button: junk,
                          image: junk,
                          location: junk,
                          reaction: junk,
                          contacts: junk,
                          errors: maybe(array(partial({ code: or(fc.constantFrom(131051, '131051')), title: or(fc.string()) }))),
                        }),
                      ),
                    ),
                    statuses: or(
                      array(
                        partial({
                          id,
                          recipient_id: id,
                          timestamp: seconds,
                          status: or(fc.constantFrom('sent', 'delivered', 'read', 'failed', 'deleted')),
                          errors: maybe(array(partial({ code: or(fc.constantFrom(131026, '131026')), title: maybe(fc.string()), message: maybe(fc.string()) }))),
                        }),
                      ),
                    ),
                  }),
                ),
              }),
            ),
          ),
        }),
      ),
    ),
  });

  const igEvent = partial({
    sender: or(partial({ id })),
    recipient: or(partial({ id })),
    timestamp: seconds,
    message: maybe(
      partial({
        mid: id,
        text: maybe(fc.string()),
        is_echo: maybe(fc.boolean()),
        is_deleted: maybe(fc.boolean()),
        is_unsupported: maybe(fc.boolean()),
        quick_reply: maybe(partial({ payload: junk })),
        attachments: maybe(array(partial({ type: or(fc.constantFrom('image', 'share')), payload: or(partial({ url: junk })) }))),
        reply_to: maybe(partial({ mid: id })),
      }),
    ),
    read: maybe(partial({ mid: id })),
    reaction: maybe(partial({ mid: id, emoji: junk, action: junk })),
    postback: maybe(partial({ mid: id, title: junk, payload: junk })),
  });
  const instagramLike = partial({
    object: or(fc.constant('instagram')),
    entry: or(
      array(
        partial({
          id,
          messaging: or(array(igEvent)),
          changes: or(array(partial({ field: or(fc.constantFrom('messages', 'messaging_seen', 'message_reactions', 'messaging_postbacks')), value: or(igEvent) }))),
        }),
      ),
    ),
  });

  const params = { numRuns: 300, seed: 20240601 };
  test.prop([fc.oneof(junk, whatsAppLike, fc.jsonValue())], params)('parseWhatsAppPayload returns well-formed events for any body', (body) => {
    expectWellFormed(parseWhatsAppPayload(body, PHONE_NUMBER_ID));
  });
  test.prop([fc.oneof(junk, instagramLike, fc.jsonValue())], params)('parseInstagramPayload returns well-formed events for any body', (body) => {
    expectWellFormed(parseInstagramPayload(body, IG_ACCOUNT));
  });

  it('takes values that cannot become strings as absent', () => {
    const hostile = Object.create(null) as unknown;
    const body = whatsApp({
      statuses: [
        { id: 'wamid.F', status: 'failed', timestamp: '1749416900', recipient_id: '16505551234', errors: [{ code: hostile, title: hostile, message: 'Message undeliverable' }] },
        { id: hostile, status: 'read', timestamp: hostile, recipient_id: hostile },
      ],
      messages: [{ from: '16505551234', id: 'wamid.U', timestamp: '1749416900', type: 'unsupported', errors: [{ code: hostile, title: hostile }] }],
    });
    expect(parseWhatsAppPayload(body, PHONE_NUMBER_ID)).toEqual([
      {
        kind: 'status',
        providerMessageId: 'wamid.F',
        status: 'failed',
        recipient: '16505551234',
        timestamp: at(1749416900),
        error: { code: '', title: 'Message undeliverable' },
      },
      { kind: 'message', providerMessageId: 'wamid.U', from: '16505551234', timestamp: at(1749416900), type: 'unsupported', text: null },
    ]);
  });

  it('reaches events from generated payloads, so the property is not vacuous', () => {
    const wa = fc.sample(whatsAppLike, { numRuns: 300, seed: 1 }).flatMap((b) => parseWhatsAppPayload(b, PHONE_NUMBER_ID));
    const ig = fc.sample(instagramLike, { numRuns: 300, seed: 1 }).flatMap((b) => parseInstagramPayload(b, IG_ACCOUNT));
    expect(new Set(wa.map((e) => e.kind))).toEqual(new Set(['message', 'status']));
    expect(new Set(ig.map((e) => e.kind))).toEqual(new Set(['message', 'status']));
  });
});
