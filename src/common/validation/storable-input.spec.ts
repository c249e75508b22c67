import { describe, expect, it } from 'vitest';
import { findInputFault, inputFaultMessage, MAX_JSON_DEPTH, unstorableReason } from './storable-input.js';

const nest = (levels: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = i % 2 === 0 ? [value] : { a: value };
  return value;
};

describe('unstorableReason', () => {
  it('finds NUL and lone surrogates (high or low, anywhere), and passes paired ones', () => {
    expect(unstorableReason('a\u0000b')).toBe('nul');
    expect(unstorableReason('\ud83d')).toBe('surrogate');
    expect(unstorableReason('x\ude00y')).toBe('surrogate');
    expect(unstorableReason('\ude00\ud83d')).toBe('surrogate');
    expect(unstorableReason('end\ud83d')).toBe('surrogate');
    expect(unstorableReason('😀 ❤️ é \u0001 \uffff')).toBeUndefined();
    expect(unstorableReason('')).toBeUndefined();
  });
});

describe('findInputFault', () => {
  it('names the dot path of a value at any depth, arrays as [i]', () => {
    expect(findInputFault({ configuration: { nodes: [{ id: 'a' }, { content: 'x\u0000' }] } })).toEqual({ reason: 'nul', field: 'configuration.nodes[1].content' });
    expect(findInputFault({ tags: ['ok', '\ud83d'] })).toEqual({ reason: 'surrogate', field: 'tags[1]' });
    expect(findInputFault([[{ a: '\u0000' }]])).toEqual({ reason: 'nul', field: '[0][0].a' });
  });

  it('checks object keys, naming the key itself', () => {
    expect(findInputFault({ data: { 'k\u0000': 1 } })).toEqual({ reason: 'nul', field: 'data.k\u0000' });
    expect(findInputFault({ 'k\ud83d': 'v' })).toEqual({ reason: 'surrogate', field: 'k\ud83d' });
  });

  it('prefixes a root name (a query or path parameter) and checks a bare string', () => {
    expect(findInputFault('a\u0000', undefined, 'search')).toEqual({ reason: 'nul', field: 'search' });
    expect(findInputFault(['1', '\u0000'], undefined, 'limit')).toEqual({ reason: 'nul', field: 'limit[1]' });
    expect(findInputFault({ name: 'x\ud83d' }, undefined, 'params')).toEqual({ reason: 'surrogate', field: 'params.name' });
  });

  it('passes clean input of every JSON type', () => {
    expect(findInputFault({ a: [1, true, null, 'ok', { b: '😀' }], c: -1.5 })).toBeUndefined();
    expect(findInputFault(null)).toBeUndefined();
    expect(findInputFault(42)).toBeUndefined();
    expect(findInputFault(undefined)).toBeUndefined();
  });

  it(`allows ${MAX_JSON_DEPTH} levels of nesting and refuses ${MAX_JSON_DEPTH + 1}`, () => {
    expect(findInputFault(nest(MAX_JSON_DEPTH))).toBeUndefined();
    const fault = findInputFault(nest(MAX_JSON_DEPTH + 1));
    expect(fault?.reason).toBe('depth');
    expect(inputFaultMessage(fault!)).toBe(`The request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
    expect(findInputFault({ a: [[['x']]] }, 3)?.reason).toBe('depth');
    expect(findInputFault({ a: [['x']] }, 3)).toBeUndefined();
  });

  it('walks a hostile nesting without recursion (no stack overflow at 200,000 levels)', () => {
    const deep = JSON.parse(`${'['.repeat(200_000)}${']'.repeat(200_000)}`) as unknown;
    expect(findInputFault(deep)?.reason).toBe('depth');
    expect(findInputFault(deep, Number.POSITIVE_INFINITY)).toBeUndefined();
  });

  it('says what is wrong, and where', () => {
    expect(inputFaultMessage({ reason: 'nul', field: 'name' })).toBe('name must not contain NUL characters');
    expect(inputFaultMessage({ reason: 'surrogate', field: 'a.b' })).toBe('a.b must not contain unpaired UTF-16 surrogates');
  });
});
