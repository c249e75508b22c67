import { describe, expect, it } from 'vitest';
import type { FormField } from '../../workflows/node-types/form.node-type.js';
import { parseAnswer, promptFor, repromptFor } from './form-answers.js';

const field = (type: FormField['type'], required = true): FormField => ({ name: 'f', type, required });

describe('parseAnswer', () => {
  it.each([
    ['text', ' Ada Lovelace ', 'Ada Lovelace'],
    ['email', 'Ada@Example.com', 'ada@example.com'],
    ['phone', '+1 (555) 123-4567', '+15551234567'],
    ['number', '42.5', 42.5],
    ['number', '3,5', 3.5],
    ['date', '2026-02-28', '2026-02-28'],
    ['boolean', 'Yes', true],
    ['boolean', 'no', false],
    ['rating', '5', 5],
    ['nps', '0', 0],
  ] as const)('accepts a valid %s (%s)', (type, reply, value) => {
    expect(parseAnswer(field(type), reply)).toEqual({ ok: true, value });
  });

  it.each([
    ['text', '   '],
    ['email', 'not-an-email'],
    ['email', 'a@b'],
    ['phone', 'call me'],
    ['phone', '123'],
    ['number', 'forty'],
    ['date', '2026-02-30'],
    ['date', '28/02/2026'],
    ['boolean', 'perhaps'],
    ['rating', '0'],
    ['rating', '6'],
    ['rating', '4.5'],
    ['nps', '11'],
  ] as const)('refuses an invalid %s (%s)', (type, reply) => {
    expect(parseAnswer(field(type), reply)).toEqual({ ok: false });
  });

  it('lets an optional field be skipped, but not a required one', () => {
    expect(parseAnswer(field('email', false), 'skip')).toEqual({ ok: true, value: null });
    expect(parseAnswer(field('email', true), 'skip')).toEqual({ ok: false });
  });

  it('asks with the label, and says what is expected when asking again', () => {
    expect(promptFor({ name: 'email', type: 'email', label: 'Your email?' })).toBe('Your email?');
    expect(promptFor({ name: 'full_name', type: 'text' })).toBe('Please enter your full name');
    expect(repromptFor({ name: 'score', type: 'rating', label: 'Rate us' })).toContain('from 1 to 5');
  });
});
