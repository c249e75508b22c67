import { describe, expect, it } from 'vitest';
import { parseInstagramPayload, parseWhatsAppPayload } from '../../src/channels/providers/meta-payloads.js';
import { instagramMessagesPayload, instagramReadPayload, whatsappBatch, whatsappMessagesPayload, whatsappStatusesPayload } from './meta-payloads.js';

// The builders and the parser were written apart: this checks they agree before an e2e test relies on both.
describe('Meta payload builders', () => {
  it('build WhatsApp messages, statuses and batches the parser reads back in order', () => {
    const body = JSON.parse(
      JSON.stringify(
        whatsappBatch(
          whatsappMessagesPayload('PN-1', [
            { from: '351910000001', id: 'wamid.1', text: 'hello', timestamp: 1749416383, name: 'Ana' },
            { from: '351910000002', id: 'wamid.2', interactiveTitle: 'Yes', timestamp: 1749416384 },
            { from: '351910000001', id: 'wamid.3', type: 'image', timestamp: 1749416385 },
          ]),
          whatsappStatusesPayload('PN-2', [{ id: 'wamid.other', status: 'read', recipient: '351910000001' }]),
          whatsappStatusesPayload('PN-1', [
            { id: 'wamid.out', status: 'failed', recipient: '351910000002', timestamp: 1749416390, error: { code: 131047, title: 'Re-engagement message' } },
          ]),
        ),
      ),
    ) as unknown;
    expect(parseWhatsAppPayload(body, 'PN-1')).toEqual([
      { kind: 'message', providerMessageId: 'wamid.1', from: '351910000001', timestamp: new Date(1749416383000), type: 'text', text: 'hello', profileName: 'Ana' },
      {
        kind: 'message',
        providerMessageId: 'wamid.2',
        from: '351910000002',
        timestamp: new Date(1749416384000),
        type: 'interactive',
        text: 'Yes',
        profileName: 'Customer 351910000002',
        details: { interactive_type: 'button_reply', reply_id: 'button-Yes' },
      },
      {
        kind: 'message',
        providerMessageId: 'wamid.3',
        from: '351910000001',
        timestamp: new Date(1749416385000),
        type: 'image',
        text: null,
        profileName: 'Ana',
        details: { media_id: 'media-wamid.3', mime_type: 'image/jpeg' },
      },
      {
        kind: 'status',
        providerMessageId: 'wamid.out',
        status: 'failed',
        recipient: '351910000002',
        timestamp: new Date(1749416390000),
        error: { code: '131047', title: 'Re-engagement message' },
      },
    ]);
  });

  it('build Instagram messages, echoes and reads the parser reads back', () => {
    const messages = instagramMessagesPayload('IG-1', [
      { from: 'igsid-1', mid: 'mid.1', text: 'hi', timestamp: 1700000000000 },
      { from: 'igsid-1', mid: 'mid.echo', text: 'hello back', echo: true },
    ]);
    expect(parseInstagramPayload(JSON.parse(JSON.stringify(messages)), 'IG-1')).toEqual([
      { kind: 'message', providerMessageId: 'mid.1', from: 'igsid-1', timestamp: new Date(1700000000000), type: 'text', text: 'hi' },
    ]);
    const read = parseInstagramPayload(JSON.parse(JSON.stringify(instagramReadPayload('IG-1', { from: 'igsid-1', mid: 'mid.sent' }))), 'IG-1');
    expect(read).toMatchObject([{ kind: 'status', providerMessageId: 'mid.sent', status: 'read', recipient: 'igsid-1' }]);
  });
});
