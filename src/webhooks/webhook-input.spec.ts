import { describe, expect, it } from 'vitest';
import { DomainError } from '../common/errors/domain-error.js';
import { eventMatches, generateSecret, parseEventTypes, parseRetryPolicy, parseSecret, parseWebhookUrl } from './webhook-input.js';

function codeOf(fn: () => unknown): [string, string | undefined] | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError) return [error.code, error.extra.field];
    throw error;
  }
  return undefined;
}

describe('parseWebhookUrl', () => {
  it('normalises loopback spellings the way the delivery client sees them', () => {
    for (const host of ['127.1', '0x7f.0.0.1', '2130706433', '0177.0.0.1']) expect(parseWebhookUrl(`https://${host}/x`).hostname).toBe('127.0.0.1');
    expect(parseWebhookUrl('https://[::ffff:127.0.0.1]/').hostname).toBe('[::ffff:7f00:1]');
  });
  it('refuses non-https, credentials, fragments and unreal hosts with INVALID_WEBHOOK_URL on url', () => {
    for (const url of ['http://a.example/', 'ftp://a.example/', 'https://u:p@a.example/', 'https://a.example/#x', 'https://a_b.example/', 'https://-a.example/', 'https://a.example/ x', '', 7, null]) {
      expect(codeOf(() => parseWebhookUrl(url)), String(url)).toEqual(['INVALID_WEBHOOK_URL', 'url']);
    }
  });
});

describe('parseEventTypes', () => {
  it('accepts known types, group wildcards and *, dropping duplicates', () => {
    expect(parseEventTypes(['workflow.*', '*', 'message.sent', 'message.sent'])).toEqual(['workflow.*', '*', 'message.sent']);
  });
  it('refuses empty, unknown and non-string entries with INVALID_EVENT_TYPES', () => {
    expect(codeOf(() => parseEventTypes([]))).toEqual(['INVALID_EVENT_TYPES', 'events']);
    expect(codeOf(() => parseEventTypes('workflow.started'))).toEqual(['INVALID_EVENT_TYPES', 'events']);
    expect(codeOf(() => parseEventTypes(['workflow.started', 'x.*']))).toEqual(['INVALID_EVENT_TYPES', 'events[1]']);
    expect(codeOf(() => parseEventTypes([{}]))).toEqual(['INVALID_EVENT_TYPES', 'events[0]']);
  });
  it('matches like the relay', () => {
    expect(eventMatches('workflow.*', 'workflow.failed')).toBe(true);
    expect(eventMatches('workflow.*', 'message.sent')).toBe(false);
    expect(eventMatches('*', 'customer.updated')).toBe(true);
  });
});

describe('parseRetryPolicy', () => {
  it('merges a partial policy over the base and enforces the retry-policy bounds (max_retries 0..10, retry_delay_ms 100..30000), integers only', () => {
    expect(parseRetryPolicy(undefined)).toEqual({ max_retries: 3, retry_delay_ms: 1000 });
    expect(parseRetryPolicy({ max_retries: 0 }, { max_retries: 5, retry_delay_ms: 200 })).toEqual({ max_retries: 0, retry_delay_ms: 200 });
    expect(codeOf(() => parseRetryPolicy({ max_retries: 10.5 }))).toEqual(['INVALID_RETRY_POLICY', 'retry_policy.max_retries']);
    expect(codeOf(() => parseRetryPolicy({ retry_delay_ms: 30001 }))).toEqual(['INVALID_RETRY_POLICY', 'retry_policy.retry_delay_ms']);
    expect(codeOf(() => parseRetryPolicy({ other: 1 }))).toEqual(['INVALID_RETRY_POLICY', 'retry_policy.other']);
    expect(codeOf(() => parseRetryPolicy(null))).toEqual(['INVALID_RETRY_POLICY', 'retry_policy']);
  });
});

describe('secrets', () => {
  it('generates whsec_ + base64 of 32 bytes, and checks chosen ones', () => {
    const secret = generateSecret();
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(parseSecret(secret)).toBe(secret);
    expect(parseSecret('plain-secret-1234567')).toBe('plain-secret-1234567');
    expect(codeOf(() => parseSecret('whsec_notbase64!!!!!!!!'))).toEqual(['INVALID_REQUEST', 'secret']);
    expect(codeOf(() => parseSecret('short'))).toEqual(['INVALID_REQUEST', 'secret']);
  });
});
