import type { FormField, FormFieldType } from '../../workflows/node-types/form.node-type.js';

export type ParsedAnswer = { ok: true; value: unknown } | { ok: false };

const SKIP_WORDS = new Set(['skip', '-', 'none', 'n/a']);
const YES = new Set(['yes', 'y', 'true', '1', 'si', 'sí', 'oui', 'ja']);
const NO = new Set(['no', 'n', 'false', '0', 'non', 'nein']);
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]{2,}$/;

function integerIn(text: string, min: number, max: number): ParsedAnswer {
  if (!/^-?\d+$/.test(text)) return { ok: false };
  const n = Number(text);
  return n >= min && n <= max ? { ok: true, value: n } : { ok: false };
}

const PARSERS: Record<FormFieldType, (text: string) => ParsedAnswer> = {
  text: (t) => (t.length > 0 && t.length <= 2000 ? { ok: true, value: t } : { ok: false }),
  email: (t) => (EMAIL.test(t) && t.length <= 320 ? { ok: true, value: t.toLowerCase() } : { ok: false }),
  phone: (t) => {
    if (!/^\+?[\d\s().-]+$/.test(t)) return { ok: false };
    const digits = t.replace(/\D/g, '');
    return digits.length >= 6 && digits.length <= 15 ? { ok: true, value: `${t.trim().startsWith('+') ? '+' : ''}${digits}` } : { ok: false };
  },
  number: (t) => {
    if (!/^-?\d+(\.\d+)?$/.test(t.replace(',', '.'))) return { ok: false };
    return { ok: true, value: Number(t.replace(',', '.')) };
  },
  date: (t) => {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(t);
    if (!m) return { ok: false };
    const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
    return d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]) ? { ok: true, value: t } : { ok: false };
  },
  boolean: (t) => {
    const v = t.toLowerCase();
    if (YES.has(v)) return { ok: true, value: true };
    if (NO.has(v)) return { ok: true, value: false };
    return { ok: false };
  },
  rating: (t) => integerIn(t, 1, 5),
  nps: (t) => integerIn(t, 0, 10),
};

/** Checks a customer's reply against a form field; an optional field accepts "skip" as null. */
export function parseAnswer(field: FormField, reply: string): ParsedAnswer {
  const text = reply.trim();
  if (field.required === false && (text === '' || SKIP_WORDS.has(text.toLowerCase()))) return { ok: true, value: null };
  return PARSERS[field.type](text);
}

const EXPECTED: Record<FormFieldType, string> = {
  text: 'an answer',
  email: 'an email address such as name@example.com',
  phone: 'a phone number',
  number: 'a number',
  date: 'a date as YYYY-MM-DD',
  boolean: 'yes or no',
  rating: 'a whole number from 1 to 5',
  nps: 'a whole number from 0 to 10',
};

export function promptFor(field: FormField): string {
  const base = field.label ?? `Please enter your ${field.name.replace(/_/g, ' ')}`;
  return field.required === false ? `${base} (optional, reply "skip" to leave it out)` : base;
}

export function repromptFor(field: FormField): string {
  return `Sorry, that doesn't look right: please send ${EXPECTED[field.type]}. ${promptFor(field)}`;
}
