import fc from 'fast-check';
import { isPlainObject } from './schema-arbitrary.js';

/**
 * Invalid input: values no schema of the service accepts, or accepts only to trip something behind
 * it (PostgreSQL, class-transformer, a length counted in UTF-16 units). Each is a plain value so that
 * fast-check can print and shrink it.
 */

/**
 * Deeply nested JSON stands in the generated value as a marker `{$deep: levels, kind}` and becomes
 * text only when the body is written (see deepJson): a 3000-level value would overflow the stack of
 * structuredClone, fast-check's printer and any recursive walk before it ever reached the server.
 */
export interface DeepMarker {
  $deep: number;
  kind: 'object' | 'array';
}

export function isDeepMarker(value: unknown): value is DeepMarker {
  return isPlainObject(value) && typeof value.$deep === 'number' && (value.kind === 'object' || value.kind === 'array') && Object.keys(value).length === 2;
}

/** `{"a":{"a":…"x"…}}` (or `[[…]]`) `levels` deep, as JSON text. */
export function deepJson(levels: number, kind: 'object' | 'array'): string {
  return kind === 'object' ? `${'{"a":'.repeat(levels)}"x"${'}'.repeat(levels)}` : `${'['.repeat(levels)}"x"${']'.repeat(levels)}`;
}

/** Strings that are trouble somewhere between the socket and the database. */
export const badStrings: fc.Arbitrary<string> = fc.oneof(
  // What PostgreSQL refuses to store (NUL → 22021, lone surrogate → 22P05), alone or inside text.
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '\u0000',
      'abc\u0000def',
      '\ud83d', // lone high surrogate: JSON allows it, PostgreSQL refuses it
      'x\udc00y', // lone low surrogate
      '\udc00\ud83d', // reversed pair
      '😀\ud83d',
    ),
  },
  // Lengths: code points, UTF-16 units and graphemes disagree; the database counts code points.
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '❤️'.repeat(201), // 201 graphemes, 402 code points
      // validator.js's isLength does not count variation selectors: n × "❤️" is n long to it and 2n
      // code points to PostgreSQL, so n = 150 passes a 200 limit and overflows varchar(200).
      '❤️'.repeat(150),
      '❤️'.repeat(200),
      '❤️'.repeat(600),
      '❤️'.repeat(2000),
      '😀'.repeat(201), // 201 code points, 402 UTF-16 units
      'a'.repeat(201),
      'a'.repeat(4097),
      'a'.repeat(10_000),
      'é'.repeat(10_000),
      '😀'.repeat(10_000),
      'e\u0301'.repeat(120),
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '\u0001\u0002\u0007\u001b[31m\u007f',
      '\r\n\t\v\f',
      '😀𝔘𐍈', // astral plane: two UTF-16 units each
      'e\u0301\u0301\u0301\u0301', // combining marks
      'Z̴̡̢͚̬̪̑̈́ą̶̛̜̖l̵̨̛͍g̸o̶',
      '\u202eevil\u202c', // bidi override
      '\ufeff', // BOM
      '\uffff\ufffe', // noncharacters
      '',
      '   ',
      "'; DROP TABLE workflows; --",
      '%00%zz%',
      '../../etc/passwd',
      '{{7*7}}${7*7}',
      '__proto__',
      '1e309',
      '-0',
    ),
  },
  // Random text mixing every plane, controls and lone surrogates.
  { weight: 1, arbitrary: fc.string({ maxLength: 30, unit: 'binary' }) },
  { weight: 1, arbitrary: fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 1, maxLength: 10 }).map((units) => String.fromCharCode(...units)) },
);

/** Values of the wrong JSON type for almost anything. */
export const wrongTypes: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    true,
    false,
    0,
    -1,
    1.5,
    -0.0,
    1e308,
    -1e308,
    2 ** 53 + 2,
    Number.MAX_SAFE_INTEGER,
    -2147483649,
    2147483648,
    '',
    '1',
    'true',
    'null',
    [],
    [null],
    ['a', 1],
    {},
    { $gt: '' },
    { length: 1 },
  ),
  fc.jsonValue({ maxDepth: 2 }),
);

/** Integers and numbers at and just past the edges, for a schema's bounds. */
export function outOfRange(schema: { minimum?: number; maximum?: number }): fc.Arbitrary<unknown> {
  const edges: unknown[] = [0, -1, 1.5, 2 ** 31, 2 ** 63, -(2 ** 63), 1e21, 0.1 + 0.2];
  if (schema.minimum !== undefined) edges.push(schema.minimum - 1, schema.minimum - 0.5);
  if (schema.maximum !== undefined) edges.push(schema.maximum + 1, schema.maximum + 0.5);
  return fc.constantFrom(...edges);
}

export const deepValues: fc.Arbitrary<DeepMarker> = fc.record({ $deep: fc.constantFrom(100, 3000), kind: fc.constantFrom('object' as const, 'array' as const) });

/** Keys a DTO does not declare: plain unknown ones and the ones that trip naive merging or PostgreSQL. */
export const unknownKeys: fc.Arbitrary<string> = fc.constantFrom(
  'unknown_property',
  '__proto__',
  'constructor',
  'prototype',
  'id',
  'organization_id',
  'created_at',
  'a\u0000b',
  '\ud83d',
  '',
  'k'.repeat(10_000),
);

/** A bad value of any kind. */
export const badValues: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: badStrings },
  { weight: 3, arbitrary: wrongTypes },
  { weight: 1, arbitrary: deepValues },
);

export type BodyMutation =
  | { kind: 'replace'; path: number[]; value: unknown }
  | { kind: 'delete'; path: number[] }
  | { kind: 'add'; path: number[]; key: string; value: unknown }
  | { kind: 'badKey'; path: number[]; key: string };

/**
 * A mutation of a valid body: a walk (each number picks a key or an element, modulo their count)
 * and what to do where it stops. Data, not a function, so that it prints and shrinks.
 */
export const bodyMutations: fc.Arbitrary<BodyMutation> = (() => {
  const path = fc.array(fc.nat({ max: 50 }), { maxLength: 4 });
  return fc.oneof(
    { weight: 5, arbitrary: fc.record({ kind: fc.constant('replace' as const), path, value: badValues }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), path }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('add' as const), path, key: unknownKeys, value: fc.oneof(badValues, fc.constant('x')) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('badKey' as const), path, key: badStrings }) },
  );
})();

/** Applies a mutation to a copy of `body` (a body that is not a container is replaced at the root). */
export function applyBodyMutation(body: unknown, mutation: BodyMutation): unknown {
  const root = structuredClone(body);
  // Walk down as far as the path goes through containers; remember the parent for delete/replace.
  let parent: Record<string, unknown> | unknown[] | undefined;
  let key: string | number | undefined;
  let current: unknown = root;
  for (const step of mutation.path) {
    const keys = childKeys(current);
    if (keys.length === 0) break;
    parent = current as Record<string, unknown> | unknown[];
    key = keys[step % keys.length];
    current = (parent as Record<string | number, unknown>)[key as string];
  }
  switch (mutation.kind) {
    case 'replace':
      if (parent === undefined) return mutation.value;
      (parent as Record<string | number, unknown>)[key as string] = mutation.value;
      return root;
    case 'delete':
      if (parent === undefined) return undefined;
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key as string];
      return root;
    case 'add':
    case 'badKey': {
      const target = isPlainObject(current) ? current : parent !== undefined && isPlainObject(parent) ? parent : undefined;
      const value = mutation.kind === 'add' ? mutation.value : 'x';
      if (target === undefined) return parent === undefined ? { [mutation.key]: value } : root;
      // defineProperty, so that "__proto__" becomes an own key that JSON.stringify writes out.
      Object.defineProperty(target, mutation.key, { value, enumerable: true, configurable: true, writable: true });
      return root;
    }
  }
}

function childKeys(value: unknown): (string | number)[] {
  if (Array.isArray(value)) return value.map((_, i) => i);
  if (isPlainObject(value)) return Object.keys(value);
  return [];
}

/** Query or path values as text: numbers in every notation a lax parser accepts, plus bad strings. */
export const badParamTexts: fc.Arbitrary<string> = fc.oneof(
  // Non-ASCII text is cut to 500 code points: percent-encoded it grows up to 12 bytes a character.
  { weight: 2, arbitrary: badStrings.map((s) => (/[^\x00-\x7f]/.test(s) ? [...s].slice(0, 500).join('') : s)) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '0x10', '1e2', '1.5', '-1', '0', '+1', ' 1', '1 ', '01', '1_000', 'Infinity', 'NaN', '99999999999999999999', '-9223372036854775809',
      'true', 'null', 'undefined', '[]', '{}', 'a,b', '%', '%zz', '%c0%af', '\u0000',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 20, unit: 'binary' }) },
);
