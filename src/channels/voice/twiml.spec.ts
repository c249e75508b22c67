import { describe, expect, it } from 'vitest';
import { elements, parseXml, textOf } from '../../../test/utils/xml.js';
import { buildTwiml, EMPTY_TWIML, xmlEscape } from './twiml.js';

const HOSTILE = `Tom & Jerry's <b>"best"</b> ]]> </Say><Hangup/> &amp;`;

describe('TwiML', () => {
  it('escapes text and attributes so that any content leaves a well-formed document with the text intact', () => {
    const action = 'https://api.example.com/v1/channel-accounts/x/voice?turn=1&a="b"';
    const twiml = buildTwiml({ say: [HOSTILE], gather: { prompt: `${HOSTILE}?`, action } }, { voice: 'Polly.Joanna', language: 'en-US' });
    expect(twiml.startsWith('<?xml version="1.0" encoding="UTF-8"?><Response>')).toBe(true);
    const root = parseXml(twiml);
    expect(root.name).toBe('Response');
    const [sayNode, gather, redirect] = elements(root);
    expect(sayNode).toMatchObject({ name: 'Say', attributes: { voice: 'Polly.Joanna', language: 'en-US' } });
    expect(textOf(sayNode!)).toBe(HOSTILE);
    expect(gather).toMatchObject({ name: 'Gather', attributes: { input: 'speech dtmf', action, method: 'POST', language: 'en-US' } });
    expect(textOf(elements(gather!)[0]!)).toBe(`${HOSTILE}?`);
    expect(redirect).toMatchObject({ name: 'Redirect', attributes: { method: 'POST' } });
    expect(textOf(redirect!)).toBe(action);
    expect(elements(root)).toHaveLength(3);
  });

  it('leaves voice and language out when the account has none, and ends with Hangup after the Says', () => {
    const root = parseXml(buildTwiml({ say: ['Thanks.', 'Goodbye.'], hangup: true }, {}));
    expect(elements(root).map((e) => [e.name, e.attributes, textOf(e)])).toEqual([
      ['Say', {}, 'Thanks.'],
      ['Say', {}, 'Goodbye.'],
      ['Hangup', {}, ''],
    ]);
  });

  it('drops characters XML cannot carry, and says nothing for blank messages', () => {
    expect(xmlEscape('a\u0000b\u0007c\uFFFEd')).toBe('abcd');
    const root = parseXml(buildTwiml({ say: ['  ', 'hi'], redirect: 'https://h/v?turn=2' }, {}));
    expect(elements(root).map((e) => e.name)).toEqual(['Say', 'Redirect']);
  });

  it('answers a status callback with an empty Response', () => {
    expect(elements(parseXml(EMPTY_TWIML))).toEqual([]);
    expect(parseXml(EMPTY_TWIML).name).toBe('Response');
  });

  it('refuses what is not well formed (the reader the tests rely on)', () => {
    expect(() => parseXml('<Response><Say>a & b</Say></Response>')).toThrow();
    expect(() => parseXml('<Response><Say>a < b</Say></Response>')).toThrow();
    expect(() => parseXml('<Response><Say a="x"y="z">t</Say></Response>')).toThrow();
    expect(() => parseXml('<Response><Say>t</Gather></Response>')).toThrow();
    expect(() => parseXml('<Response/><Response/>')).toThrow();
  });
});
