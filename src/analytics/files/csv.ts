import { isoTime } from '../../common/iso-time.js';

/**
 * CSV per RFC 4180: fields separated by commas, records by CRLF; a field holding a comma, a double
 * quote, CR or LF is quoted and its quotes doubled. A text cell that a spreadsheet would run as a
 * formula (starting with =, +, -, @, or a tab or CR that some spreadsheets skip before those) is
 * prefixed with a single quote (OWASP's advice on CSV injection). Numbers, booleans and dates are
 * written as values and never prefixed, so a negative number stays a number.
 */
export type CsvValue = string | number | boolean | Date | null | undefined | object;

const NEEDS_QUOTES = /[",\r\n]/;
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvField(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  let text: string;
  if (typeof value === 'number') text = Number.isFinite(value) ? String(value) : '';
  else if (typeof value === 'boolean') text = value ? 'true' : 'false';
  else if (value instanceof Date) text = isoTime(value);
  else if (typeof value === 'string') text = FORMULA_START.test(value) ? `'${value}` : value;
  else {
    const json = JSON.stringify(value);
    text = FORMULA_START.test(json) ? `'${json}` : json;
  }
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvRecord(values: readonly CsvValue[]): string {
  return values.map(csvField).join(',') + '\r\n';
}
