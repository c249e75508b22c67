import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { twilioSignature, twilioSignatureMatches } from './twilio-signature.js';

const TOKEN = '0123456789abcdef0123456789abcdef';
const URL = 'https://api.example.com/v1/channel-accounts/3f0c6d1e-0000-4000-8000-000000000001/voice?turn=2';

/** Twilio's parameters as its library takes them (a repeated name as an array). */
function asObject(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of params) {
    const seen = out[name];
    out[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  return out;
}

describe('X-Twilio-Signature', () => {
  const cases: [string, string][] = [
    ['a call coming in', 'CallSid=CA0123456789abcdef0123456789abcdef&From=%2B14155550100&To=%2B14155550199&CallStatus=ringing&Direction=inbound'],
    ['a spoken answer with spaces, accents and symbols', 'CallSid=CA01&SpeechResult=Ada+Lovelace+%C3%A9t%C3%A9+%26+%3C%22x%22%3E&Confidence=0.92'],
    ['digits', 'Digits=42%23&CallSid=CA01&AccountSid=AC0123'],
    ['a repeated name, and names that sort by code unit', 'b=2&B=1&a=z&a=y&a=y&_=0'],
    ['no parameters', ''],
  ];

  it.each(cases)('matches the twilio package for %s', (_name, body) => {
    const params = new URLSearchParams(body);
    const ours = twilioSignature(TOKEN, URL, params);
    expect(ours).toBe(twilio.getExpectedTwilioSignature(TOKEN, URL, asObject(params)));
    expect(twilio.validateRequest(TOKEN, ours, URL, asObject(params))).toBe(true);
    expect(twilioSignatureMatches(TOKEN, URL, params, ours)).toBe(true);
  });

  it('refuses a missing, malformed or tampered signature, another token, another URL or changed parameters', () => {
    const params = new URLSearchParams('CallSid=CA01&SpeechResult=yes');
    const good = twilio.getExpectedTwilioSignature(TOKEN, URL, asObject(params));
    expect(twilioSignatureMatches(TOKEN, URL, params, undefined)).toBe(false);
    expect(twilioSignatureMatches(TOKEN, URL, params, '')).toBe(false);
    expect(twilioSignatureMatches(TOKEN, URL, params, 'not base64!')).toBe(false);
    expect(twilioSignatureMatches(TOKEN, URL, params, `${good[0] === 'A' ? 'B' : 'A'}${good.slice(1)}`)).toBe(false);
    expect(twilioSignatureMatches('f'.repeat(32), URL, params, good)).toBe(false);
    expect(twilioSignatureMatches(TOKEN, URL.replace('turn=2', 'turn=3'), params, good)).toBe(false);
    expect(twilioSignatureMatches(TOKEN, URL, new URLSearchParams('CallSid=CA01&SpeechResult=no'), good)).toBe(false);
    expect(twilioSignatureMatches('', URL, params, good)).toBe(false);
  });
});
