import 'reflect-metadata';
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../common/errors/domain-error.js';
import { parseWebhookFields } from './dto/webhook-body.js';
import { constantTimeEquals, signatureMatches } from './trigger-firing.service.js';

const fieldOf = (body: unknown) => {
  try {
    parseWebhookFields(body);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return { code: (error as DomainError).code, field: (error as DomainError).extra.field };
  }
  throw new Error('expected a refusal');
};

describe('webhook authentication', () => {
  it('compares required header values exactly, whatever their lengths', () => {
    expect(constantTimeEquals('crm', 'crm')).toBe(true);
    expect(constantTimeEquals('crm ', 'crm')).toBe(false);
    expect(constantTimeEquals('cr', 'crm')).toBe(false);
    expect(constantTimeEquals('x'.repeat(1000), 'crm')).toBe(false);
    expect(constantTimeEquals(null, '')).toBe(false);
    expect(constantTimeEquals('', '')).toBe(true);
  });

  it('checks the hex HMAC of the raw body', () => {
    const raw = Buffer.from('{"a":1}');
    const good = createHmac('sha256', 'secret').update(raw).digest('hex');
    expect(signatureMatches('secret', raw, good)).toBe(true);
    expect(signatureMatches('secret', raw, good.toUpperCase())).toBe(true);
    expect(signatureMatches('secret', raw, good.slice(0, 63))).toBe(false);
    expect(signatureMatches('other', raw, good)).toBe(false);
    expect(signatureMatches('secret', raw, undefined)).toBe(false);
  });
});

describe('parseWebhookFields', () => {
  it('reads customer_id, channel and message; absent or null is none; anything else in the body is free', () => {
    expect(parseWebhookFields({ customer_id: 'c', channel: 'voice', message: 'hi', other: { x: 1 } })).toEqual({ customerRef: 'c', channel: 'voice', message: 'hi' });
    expect(parseWebhookFields({ channel: null })).toEqual({ customerRef: null, channel: null, message: null });
    expect(parseWebhookFields('plain text')).toEqual({ customerRef: null, channel: null, message: null });
    expect(parseWebhookFields([1, 2])).toEqual({ customerRef: null, channel: null, message: null });
    expect(parseWebhookFields({ customer_id: '😀'.repeat(200) }).customerRef).toHaveLength(400);
  });

  it('refuses an unknown channel and out-of-bounds fields with 400 and the field', () => {
    expect(fieldOf({ channel: 'sms' })).toEqual({ code: 'INVALID_REQUEST', field: 'channel' });
    expect(fieldOf({ channel: 'x'.repeat(40) })).toEqual({ code: 'INVALID_REQUEST', field: 'channel' });
    expect(fieldOf({ channel: 7 })).toEqual({ code: 'INVALID_REQUEST', field: 'channel' });
    expect(fieldOf({ customer_id: 'c'.repeat(201) })).toEqual({ code: 'INVALID_REQUEST', field: 'customer_id' });
    expect(fieldOf({ customer_id: '❤️'.repeat(101) })).toEqual({ code: 'INVALID_REQUEST', field: 'customer_id' });
    expect(fieldOf({ customer_id: 42 })).toEqual({ code: 'INVALID_REQUEST', field: 'customer_id' });
    expect(fieldOf({ message: '' })).toEqual({ code: 'INVALID_REQUEST', field: 'message' });
    expect(fieldOf({ message: 'm'.repeat(4097) })).toEqual({ code: 'INVALID_REQUEST', field: 'message' });
  });
});
