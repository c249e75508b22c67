import 'reflect-metadata';
import { describe, expect, it } from 'vitest';
import { parseQueryInt } from './query-int.decorator.js';

describe('parseQueryInt', () => {
  it('reads decimal digits (optionally negative, leading zeros allowed) as a number', () => {
    expect(parseQueryInt('10')).toBe(10);
    expect(parseQueryInt('007')).toBe(7);
    expect(parseQueryInt('-1')).toBe(-1);
    expect(parseQueryInt('1000000')).toBe(1_000_000);
  });

  it.each(['0x10', '1e2', '1.5', '', ' 10', '10 ', '+1', '1_000', 'Infinity', 'NaN', '٣', '12345678901234567'])('leaves %j a string, for IsInt to refuse', (raw) => {
    expect(parseQueryInt(raw)).toBe(raw);
  });

  it('leaves arrays and absent values alone', () => {
    expect(parseQueryInt(['1', '2'])).toEqual(['1', '2']);
    expect(parseQueryInt(undefined)).toBeUndefined();
  });
});
