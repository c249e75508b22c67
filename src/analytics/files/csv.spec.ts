import { describe, expect, it } from 'vitest';
import { csvField, csvRecord } from './csv.js';

describe('csv', () => {
  it('quotes fields with separators, quotes and line breaks (RFC 4180)', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('cr\rhere')).toBe('"cr\rhere"');
    expect(csvRecord(['a', 1, null, true])).toBe('a,1,,true\r\n');
  });

  it('neutralises text that a spreadsheet would run as a formula', () => {
    for (const cell of ['=1+1', '+1', '-1', '@SUM(A1)', '\t=1', '\r=1']) expect(csvField(cell).replace(/^"/, '')).toMatch(/^'/);
    expect(csvField('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
    expect(csvField('a=1')).toBe('a=1');
  });

  it('writes numbers, booleans and dates as values, never prefixed', () => {
    expect(csvField(-5)).toBe('-5');
    expect(csvField(0.25)).toBe('0.25');
    expect(csvField(Number.NaN)).toBe('');
    expect(csvField(new Date('2025-03-01T00:00:00Z'))).toBe('2025-03-01T00:00:00.000Z');
    expect(csvField({ a: 1, b: 'x,y' })).toBe('"{""a"":1,""b"":""x,y""}"');
  });
});
