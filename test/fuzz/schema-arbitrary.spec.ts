import { test } from '@fast-check/vitest';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { OpenApiDocument } from './openapi.js';
import { ResponseChecker, toJsonSchema } from './response-checker.js';
import { schemaArbitrary } from './schema-arbitrary.js';

/** A document using every keyword the converter handles, in the shapes @nestjs/swagger emits. */
const document: OpenApiDocument = {
  openapi: '3.0.0',
  paths: {},
  components: {
    schemas: {
      Message: {
        type: 'object',
        properties: { type: { type: 'string', enum: ['message'] }, keywords: { type: 'array', minItems: 1, maxItems: 3, items: { type: 'string', minLength: 1, maxLength: 5 } } },
        required: ['type', 'keywords'],
        additionalProperties: false,
      },
      Api: {
        type: 'object',
        properties: { type: { type: 'string', enum: ['api'] }, rate_limit: { type: 'integer', minimum: 1, maximum: 100 } },
        required: ['type'],
        additionalProperties: false,
      },
      Thing: {
        type: 'object',
        properties: {
          id: { type: 'string', format: 'uuid' },
          name: { type: 'string', minLength: 1, maxLength: 10 },
          code: { type: 'string', pattern: '^[A-Z]{2}-\\d{3}$' },
          email: { type: 'string', format: 'email', maxLength: 80 },
          at: { type: 'string', format: 'date-time', nullable: true },
          count: { type: 'integer', minimum: -5, maximum: 5 },
          ratio: { type: 'number', minimum: 0, maximum: 1, exclusiveMaximum: true },
          flag: { type: 'boolean' },
          channel: { type: 'string', enum: ['whatsapp', 'voice'], nullable: true },
          configuration: {
            oneOf: [{ $ref: '#/components/schemas/Message' }, { $ref: '#/components/schemas/Api' }],
            discriminator: { propertyName: 'type' },
          },
          nested: { description: 'a nested DTO', allOf: [{ $ref: '#/components/schemas/Api' }] },
          metadata: { type: 'object', additionalProperties: true },
          headers: { type: 'object', additionalProperties: { type: 'string' } },
        },
        required: ['id', 'name', 'configuration', 'channel'],
        additionalProperties: false,
      },
    },
  },
};

describe('schemaArbitrary', () => {
  const checker = new ResponseChecker(document);
  const operation = {
    key: 'GET /thing',
    method: 'GET',
    path: '/thing',
    pathParams: [],
    queryParams: [],
    secured: false,
    operation: { responses: { '200': { content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } } } },
  };

  // The converter and the checker read the same schema: every generated value must pass the check.
  test.prop([schemaArbitrary(document, { $ref: '#/components/schemas/Thing' })], { numRuns: 300 })('generates only values its schema accepts', (value) => {
    const problems = checker.check({ operation, method: 'GET', credential: 'none', requestText: '' }, { status: 200, headers: { 'content-type': 'application/json' }, text: JSON.stringify(value) });
    expect(problems).toEqual([]);
  });

  it('reaches both oneOf branches, null for nullable fields, and real ids from a hint', () => {
    const values = fc.sample(
      schemaArbitrary(document, { $ref: '#/components/schemas/Thing' }, { hint: (name) => (name === 'id' ? fc.constant('REAL') : undefined) }),
      { numRuns: 300, seed: 42 },
    ) as Record<string, unknown>[];
    const types = new Set(values.map((v) => (v.configuration as { type: string }).type));
    expect([...types].sort()).toEqual(['api', 'message']);
    expect(values.some((v) => v.channel === null)).toBe(true);
    expect(values.every((v) => v.id === 'REAL')).toBe(true);
  });
});

describe('toJsonSchema', () => {
  it('turns OpenAPI 3.0 nullable and boolean exclusive bounds into JSON Schema', () => {
    expect(toJsonSchema({ type: 'string', enum: ['a'], nullable: true }, 'x')).toEqual({ type: ['string', 'null'], enum: ['a', null] });
    expect(toJsonSchema({ $ref: '#/components/schemas/A', nullable: true }, 'doc')).toEqual({ anyOf: [{ $ref: 'doc#/components/schemas/A' }, { type: 'null' }] });
    expect(toJsonSchema({ type: 'number', maximum: 1, exclusiveMaximum: true }, 'x')).toEqual({ type: 'number', exclusiveMaximum: 1 });
  });

  it('pins a discriminator mapping in the branches it names', () => {
    const schema = {
      oneOf: [{ $ref: '#/components/schemas/A' }, { $ref: '#/components/schemas/B' }],
      discriminator: { propertyName: 'type', mapping: { a: '#/components/schemas/A', b: '#/components/schemas/B' } },
    };
    expect(toJsonSchema(schema, 'doc')).toEqual({
      oneOf: [
        { allOf: [{ $ref: 'doc#/components/schemas/A' }, { properties: { type: { enum: ['a'] } }, required: ['type'] }] },
        { allOf: [{ $ref: 'doc#/components/schemas/B' }, { properties: { type: { enum: ['b'] } }, required: ['type'] }] },
      ],
    });
  });
});
