import { validateSync } from 'class-validator';
import { describe, expect, it } from 'vitest';
import { codePointLength, TEXT_LENGTH, TextLength } from './text-length.decorator.js';

class Named {
  @TextLength(1, 5)
  name: string;
}

class Tagged {
  @TextLength(0, 3, { each: true })
  tags: string[];
}

const errors = (value: unknown) => validateSync(Object.assign(new Named(), { name: value }));

describe('codePointLength', () => {
  it('counts code points as PostgreSQL does, not UTF-16 units nor graphemes', () => {
    expect(codePointLength('')).toBe(0);
    expect(codePointLength('abc')).toBe(3);
    expect(codePointLength('😀')).toBe(1); // a surrogate pair
    expect('😀'.length).toBe(2);
    expect(codePointLength('❤️')).toBe(2); // U+2764 U+FE0F
    expect(codePointLength('❤️'.repeat(200))).toBe(400);
    expect(codePointLength('e\u0301')).toBe(2); // combining accent
    expect(codePointLength('\ud83d')).toBe(1); // a lone surrogate is still one unit
    expect(codePointLength('\ud83dx')).toBe(2);
    expect(codePointLength('\ude00\ud83d')).toBe(2); // low then high is not a pair
  });
});

describe('TextLength', () => {
  it('accepts min..max code points and refuses outside, with its message', () => {
    expect(errors('a')).toHaveLength(0);
    expect(errors('😀😀😀😀😀')).toHaveLength(0); // 10 UTF-16 units, 5 code points
    expect(errors('')[0].constraints).toEqual({ [TEXT_LENGTH]: 'name must be 1 to 5 characters long' });
    expect(errors('❤️❤️❤️')[0].constraints?.[TEXT_LENGTH]).toBeDefined(); // 6 code points, 3 to validator.js
    expect(errors('abcdef')).toHaveLength(1);
    expect(errors(42)).toHaveLength(1);
  });

  it('keeps its name and [min, max] constraints for the OpenAPI enricher, and works with each', () => {
    const [error] = errors('abcdef');
    expect(Object.keys(error.constraints ?? {})).toEqual([TEXT_LENGTH]);
    expect(validateSync(Object.assign(new Tagged(), { tags: ['abc', '😀😀'] }))).toHaveLength(0);
    const [tagError] = validateSync(Object.assign(new Tagged(), { tags: ['abc', 'abcd'] }));
    expect(tagError.constraints?.[TEXT_LENGTH]).toBe('tags must be at most 3 characters long');
  });
});
