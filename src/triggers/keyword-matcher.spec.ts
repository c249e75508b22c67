import { describe, expect, it } from 'vitest';
import { matchesKeywords } from './keyword-matcher.js';

const msg = (text: string, extra: { channel?: string; language?: string | null } = {}) => ({ text, channel: 'whatsapp', ...extra });

describe('matchesKeywords', () => {
  it('matches a keyword as a whole word, case-insensitively by default', () => {
    const rules = { keywords: ['help'] };
    expect(matchesKeywords(rules, msg('I need HELP!'))).toBe(true);
    expect(matchesKeywords(rules, msg('help'))).toBe(true);
    expect(matchesKeywords(rules, msg('this was helpful'))).toBe(false);
    expect(matchesKeywords(rules, msg('nothing here'))).toBe(false);
  });

  it('matches phrases and keywords with regex characters literally', () => {
    expect(matchesKeywords({ keywords: ['opening hours'] }, msg('What are your opening hours?'))).toBe(true);
    expect(matchesKeywords({ keywords: ['c++'] }, msg('do you teach c++ here'))).toBe(true);
    expect(matchesKeywords({ keywords: ['a.b'] }, msg('axb'))).toBe(false);
  });

  it('honours case_sensitive', () => {
    const rules = { keywords: ['Order'], case_sensitive: true };
    expect(matchesKeywords(rules, msg('Order status'))).toBe(true);
    expect(matchesKeywords(rules, msg('order status'))).toBe(false);
  });

  it('honours exact_match', () => {
    const rules = { keywords: ['start'], exact_match: true };
    expect(matchesKeywords(rules, msg('  START '))).toBe(true);
    expect(matchesKeywords(rules, msg('start now'))).toBe(false);
  });

  it('honours channel and language', () => {
    expect(matchesKeywords({ keywords: ['hi'], channel: 'instagram' }, msg('hi'))).toBe(false);
    expect(matchesKeywords({ keywords: ['hi'], channel: 'whatsapp' }, msg('hi'))).toBe(true);
    expect(matchesKeywords({ keywords: ['hola'], language: 'es' }, msg('hola', { language: 'es-MX' }))).toBe(true);
    expect(matchesKeywords({ keywords: ['hola'], language: 'es' }, msg('hola', { language: 'en' }))).toBe(false);
    expect(matchesKeywords({ keywords: ['hola'], language: 'es' }, msg('hola'))).toBe(false);
  });

  it('matches words in other scripts', () => {
    expect(matchesKeywords({ keywords: ['ayuda'] }, msg('¿ayuda?'))).toBe(true);
    expect(matchesKeywords({ keywords: ['café'] }, msg('un cafécito'))).toBe(false);
  });
});
