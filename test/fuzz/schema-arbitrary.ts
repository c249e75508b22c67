import fc from 'fast-check';
import { resolveRef, type JsonSchema, type OpenApiDocument } from './openapi.js';

/**
 * JSON Schema (the OpenAPI 3.0 dialect) → fast-check arbitrary of values the schema accepts.
 * Small on purpose: the keywords @nestjs/swagger emits, nothing more. A schema keyword it does not
 * know is ignored, so the values may then be refused by the server: that is a 4xx, which the
 * fuzzer checks like any other answer.
 */
export interface SchemaArbitraryOptions {
  /**
   * A value to use for a property by name (e.g. `workflow_id` → real ids), tried before the schema.
   * Returning undefined falls back to the schema.
   */
  hint?: (propertyName: string, schema: JsonSchema) => fc.Arbitrary<unknown> | undefined;
  /** Depth after which optional properties are left out and recursion stops (default 6). */
  maxDepth?: number;
  /** Largest array generated when maxItems allows more (default 4). */
  maxArrayItems?: number;
}

/** A printable code point: mostly ASCII, sometimes any plane (no controls, no surrogates). */
const printableUnit = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
  { weight: 1, arbitrary: fc.integer({ min: 0xa0, max: 0xd7ff }) },
  { weight: 1, arbitrary: fc.integer({ min: 0xe000, max: 0xfffd }) },
  { weight: 1, arbitrary: fc.integer({ min: 0x10000, max: 0x10ffff }) },
).map((codePoint) => String.fromCodePoint(codePoint));

const DATE_MIN = new Date('1970-01-01T00:00:00.000Z');
const DATE_MAX = new Date('2100-01-01T00:00:00.000Z');

export function schemaArbitrary(document: OpenApiDocument, schema: JsonSchema, options: SchemaArbitraryOptions = {}): fc.Arbitrary<unknown> {
  const maxDepth = options.maxDepth ?? 6;
  const maxArrayItems = options.maxArrayItems ?? 4;

  const build = (raw: JsonSchema, depth: number): fc.Arbitrary<unknown> => {
    const schema = resolveRef(document, raw);
    // `nullable` may sit beside a $ref's target or on the referring schema (OpenAPI 3.0 allows neither
    // officially, @nestjs/swagger emits both).
    const nullable = raw.nullable === true || schema.nullable === true;
    const value = buildNonNull(schema, depth);
    return nullable ? fc.option(value, { nil: null, freq: 4 }) : value;
  };

  const buildNonNull = (schema: JsonSchema, depth: number): fc.Arbitrary<unknown> => {
    if (schema.enum !== undefined) return fc.constantFrom(...schema.enum.filter((v) => v !== null));
    if (schema.allOf !== undefined) return build(mergeAllOf(document, schema), depth);
    const branches = schema.oneOf ?? schema.anyOf;
    if (branches !== undefined) {
      // With a discriminator, each branch is made to carry its own value of the property, so that a
      // generated value is valid against exactly the branch it came from.
      const discriminator = schema.discriminator;
      return fc.oneof(
        ...branches.map((branch) => {
          const arbitrary = build(branch, depth);
          if (discriminator === undefined) return arbitrary;
          const tag = discriminatorValue(document, schema, branch);
          if (tag === undefined) return arbitrary;
          return arbitrary.map((v) => (isPlainObject(v) ? { ...v, [discriminator.propertyName]: tag } : v));
        }),
      );
    }
    const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
    switch (type ?? inferType(schema)) {
      case 'string':
        return stringArbitrary(schema);
      case 'integer':
        return integerArbitrary(schema);
      case 'number':
        return fc.oneof(integerArbitrary(schema), numberArbitrary(schema));
      case 'boolean':
        return fc.boolean();
      case 'array': {
        const items = schema.items ?? {};
        const minLength = schema.minItems ?? 0;
        const maxLength = Math.max(minLength, Math.min(schema.maxItems ?? maxArrayItems, maxArrayItems));
        if (depth >= maxDepth) return fc.array(build(items, depth + 1), { minLength, maxLength: minLength });
        return fc.array(build(items, depth + 1), { minLength, maxLength });
      }
      case 'object':
        return objectArbitrary(schema, depth);
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  };

  const objectArbitrary = (schema: JsonSchema, depth: number): fc.Arbitrary<unknown> => {
    const properties = schema.properties ?? {};
    const required = new Set(schema.required ?? []);
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [name, propertySchema] of Object.entries(properties)) {
      if (depth >= maxDepth && !required.has(name)) continue;
      model[name] = options.hint?.(name, propertySchema) ?? build(propertySchema, depth + 1);
    }
    const known = fc.record(model, { requiredKeys: [...required].filter((name) => name in model) });
    const additional = schema.additionalProperties;
    if (additional === undefined || additional === false || depth >= maxDepth) return known;
    // Explicitly open objects (`metadata`, hook bodies) get extra keys of their own.
    const extraValue = additional === true ? fc.jsonValue({ maxDepth: 2 }) : build(additional, depth + 1);
    const extraKey = fc.string({ minLength: 1, maxLength: 12, unit: printableUnit }).filter((key) => !(key in properties));
    return fc
      .tuple(known, fc.dictionary(extraKey, extraValue, { maxKeys: 3, noNullPrototype: true }))
      .map(([base, extra]) => ({ ...extra, ...(base as Record<string, unknown>) }));
  };

  return build(schema, 0);
}

function inferType(schema: JsonSchema): string | undefined {
  if (schema.properties !== undefined || schema.additionalProperties !== undefined) return 'object';
  if (schema.items !== undefined) return 'array';
  if (schema.minLength !== undefined || schema.maxLength !== undefined || schema.pattern !== undefined) return 'string';
  if (schema.minimum !== undefined || schema.maximum !== undefined) return 'number';
  return undefined;
}

function stringArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.max(minLength, schema.maxLength ?? Math.max(minLength, 40));
  // Lengths count code points, as the service and PostgreSQL do.
  const fits = (s: string) => {
    const length = [...s].length;
    return length >= minLength && length <= maxLength;
  };
  switch (schema.format) {
    case 'uuid':
      return fc.uuid();
    case 'date-time':
      return fc.date({ min: DATE_MIN, max: DATE_MAX, noInvalidDate: true }).map((d) => d.toISOString());
    case 'date':
      return fc.date({ min: DATE_MIN, max: DATE_MAX, noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
    case 'email':
      return fc.emailAddress().filter(fits);
    case 'uri':
    case 'url':
      return fc.webUrl().filter(fits);
    default:
      break;
  }
  if (schema.pattern !== undefined) {
    return fc.stringMatching(new RegExp(schema.pattern, 'u')).filter(fits);
  }
  // A generated string is at most 64 code points unless the schema asks for more: long strings
  // are the mutations' business, except the longest the schema allows, in one- and two-unit characters.
  const usual = fc.string({ minLength, maxLength: Math.min(maxLength, Math.max(minLength, 64)), unit: printableUnit });
  if (schema.maxLength === undefined || schema.maxLength > 10_000) return usual;
  return fc.oneof({ weight: 8, arbitrary: usual }, { weight: 1, arbitrary: fc.constantFrom('a'.repeat(maxLength), '😀'.repeat(maxLength)) });
}

function bounds(schema: JsonSchema): { min: number; max: number } {
  let min = schema.minimum ?? -1_000_000;
  let max = schema.maximum ?? 1_000_000;
  // OpenAPI 3.0: exclusiveMinimum is a boolean beside minimum; JSON Schema 2020: a number.
  if (schema.exclusiveMinimum === true) min = min + 1;
  else if (typeof schema.exclusiveMinimum === 'number') min = schema.exclusiveMinimum + 1;
  if (schema.exclusiveMaximum === true) max = max - 1;
  else if (typeof schema.exclusiveMaximum === 'number') max = schema.exclusiveMaximum - 1;
  return { min, max };
}

function integerArbitrary(schema: JsonSchema): fc.Arbitrary<number> {
  const { min, max } = bounds(schema);
  return fc.integer({ min: Math.ceil(Math.max(min, Number.MIN_SAFE_INTEGER)), max: Math.floor(Math.min(max, Number.MAX_SAFE_INTEGER)) });
}

function numberArbitrary(schema: JsonSchema): fc.Arbitrary<number> {
  const { min, max } = bounds(schema);
  return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

/** The value of the discriminator property that selects `branch` (mapping first, then the branch's own enum). */
function discriminatorValue(document: OpenApiDocument, schema: JsonSchema, branch: JsonSchema): unknown {
  const discriminator = schema.discriminator;
  if (discriminator === undefined) return undefined;
  if (discriminator.mapping !== undefined && branch.$ref !== undefined) {
    const entry = Object.entries(discriminator.mapping).find(([, ref]) => ref === branch.$ref);
    if (entry !== undefined) return entry[0];
  }
  const property = resolveRef(document, branch).properties?.[discriminator.propertyName];
  if (property === undefined) return undefined;
  const resolved = resolveRef(document, property);
  if (resolved.enum?.length === 1) return resolved.enum[0];
  if ('const' in resolved) return resolved.const;
  return undefined;
}

/** allOf of object schemas (what @nestjs/swagger emits for a nested DTO with a description) → one schema. */
export function mergeAllOf(document: OpenApiDocument, schema: JsonSchema): JsonSchema {
  const { allOf, ...rest } = schema;
  const merged: JsonSchema = { ...rest };
  for (const part of allOf ?? []) {
    const resolved = resolveRef(document, part.allOf !== undefined ? mergeAllOf(document, part) : part);
    for (const [key, value] of Object.entries(resolved)) {
      if (key === 'properties') merged.properties = { ...merged.properties, ...(value as Record<string, JsonSchema>) };
      else if (key === 'required') merged.required = [...new Set([...(merged.required ?? []), ...(value as string[])])];
      else if (!(key in merged)) merged[key] = value;
    }
  }
  return merged;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
