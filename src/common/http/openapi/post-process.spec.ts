import { ArrayMaxSize, ArrayMinSize, IsIn, IsInt, IsOptional, IsString, Length, Matches, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { describe, expect, it } from 'vitest';
import { IsOmittable } from '../../validation/is-omittable.decorator.js';
import { TextLength } from '../../validation/text-length.decorator.js';
import { postProcessOpenApi, type PostProcessOptions } from './post-process.js';
import type { RouteFacts } from './routes.js';
import { ApiClosedSchema, ApiDiscriminated } from './schema-markers.js';
import { propertyRules, type SchemaObject } from './validator-schemas.js';

class SpecThingBody {
  @IsString() @TextLength(1, 200) @Matches(/\S/) name: string;
  @IsOptional() @IsString() @MaxLength(50) note?: string | null;
  @IsOmittable() @IsString() @Length(2, 10) code?: string;
  // What PartialType does to an IsOmittable property: null still is not meant to be sent.
  @IsOmittable() @IsOptional() @IsString() both?: string;
  @IsOmittable() @IsIn(['a', 'b']) kind?: string;
  @IsOmittable() @IsInt() @Min(1) @Max(9) count?: number;
  @IsOmittable() @ArrayMinSize(1) @ArrayMaxSize(3) @IsString({ each: true }) @MaxLength(5, { each: true }) tags?: string[];
  @ValidateIf(() => false) hidden?: unknown;
  // Documented by hand but without a validator: the ValidationPipe refuses it, so it must go.
  stray?: string;
}

class SpecThingQuery {
  @IsOptional() @IsInt() @Min(1) @Max(100) limit?: number;
}

@ApiClosedSchema()
class SpecConfigA {}
@ApiClosedSchema()
class SpecConfigB {}

@ApiDiscriminated({ property: 'type', branches: { a: { configuration: SpecConfigA }, b: { configuration: SpecConfigB } } })
class SpecUnionBody {
  @IsIn(['a', 'b']) type: string;
  @IsString() configuration: object;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function document(): Parameters<typeof postProcessOpenApi>[0] {
  const json = { 'application/json': { schema: ref('SpecThingBody') } };
  return {
    openapi: '3.0.0',
    info: { title: 't', version: '1' },
    paths: {
      '/v1/things/{id}': {
        put: { operationId: 'ThingsController_update', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], requestBody: { content: json }, responses: { '201': { description: 'OK' } } },
      },
      '/v1/things': {
        get: { operationId: 'ThingsController_list', parameters: [{ name: 'limit', in: 'query', required: false, schema: { type: 'number' } }], responses: { '200': { description: 'OK' } } },
        post: { operationId: 'ThingsController_union', requestBody: { content: { 'application/json': { schema: ref('SpecUnionBody') } } }, responses: { '202': { description: 'OK' } } },
      },
      '/hooks/{id}': Object.fromEntries(
        ['get', 'post', 'delete'].map((m) => [m, { operationId: `HooksController_hook_${m}`, parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], requestBody: { content: json }, responses: { '202': { description: 'OK' } } }]),
      ),
      '/health': { get: { operationId: 'HealthController_live', responses: { '200': { description: 'OK' } } } },
    },
    components: {
      schemas: {
        SpecThingBody: {
          type: 'object',
          properties: { both: { type: 'string' }, name: { type: 'string' }, note: { type: 'string' }, code: { type: 'string' }, kind: { type: 'string' }, count: { type: 'number' }, tags: { type: 'array', items: { type: 'string' } }, stray: { type: 'string' } },
          required: ['name', 'stray'],
        },
        SpecUnionBody: { type: 'object', properties: { type: { type: 'string' }, configuration: { type: 'object' } }, required: ['type', 'configuration'] },
        SpecConfigA: { type: 'object', properties: {} },
        SpecConfigB: { type: 'object', properties: {} },
      },
    },
  };
}

function options(): PostProcessOptions {
  const route = (facts: Partial<RouteFacts>): RouteFacts => ({ isPublic: false, successStatus: 200, ...facts });
  return {
    routes: new Map([
      ['ThingsController_update', route({ body: SpecThingBody })],
      ['ThingsController_list', route({ query: SpecThingQuery, rateLimited: true })],
      ['ThingsController_union', route({ successStatus: 201, body: SpecUnionBody })],
      ['HooksController_hook', route({ isPublic: true, successStatus: 202, methods: ['get', 'post'] })],
      ['HealthController_live', route({ isPublic: true })],
    ]),
    bearerScheme: 'bearer',
    errorSchema: () => ref('Envelope'),
  };
}

describe('propertyRules', () => {
  it('reads required, nullable and constraints from class-validator, including TextLength and each', () => {
    const rules = propertyRules(SpecThingBody);
    expect(rules.get('name')).toMatchObject({ required: true, nullable: false, value: { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' } });
    expect(rules.get('note')).toMatchObject({ required: false, nullable: true, value: { maxLength: 50 } });
    expect(rules.get('code')).toMatchObject({ required: false, nullable: false, value: { minLength: 2, maxLength: 10 } });
    expect(rules.get('both')).toMatchObject({ required: false, nullable: false });
    expect(rules.get('kind')?.value.enum).toEqual(['a', 'b']);
    expect(rules.get('count')?.value).toMatchObject({ type: 'integer', minimum: 1, maximum: 9 });
    expect(rules.get('tags')).toMatchObject({ value: { minItems: 1, maxItems: 3 }, items: { type: 'string', maxLength: 5 } });
    expect(rules.get('hidden')?.required).toBe(false);
    expect(rules.has('stray')).toBe(false);
  });
});

describe('postProcessOpenApi', () => {
  const doc = postProcessOpenApi(document(), options());
  const schemas = doc.components?.schemas as Record<string, SchemaObject>;
  const op = (path: string, method: string) => (doc.paths[path] as Record<string, { responses: Record<string, unknown>; security?: unknown; parameters?: { schema?: SchemaObject }[]; requestBody?: unknown }>)[method];

  it('closes request schemas and takes required, bounds and nullability from the validators', () => {
    const body = schemas.SpecThingBody;
    expect(body.additionalProperties).toBe(false);
    expect(body.required).toEqual(['name']);
    expect(body.properties).not.toHaveProperty('stray');
    expect(body.properties?.note).toMatchObject({ type: 'string', maxLength: 50, nullable: true });
    expect(body.properties?.count).toMatchObject({ type: 'integer', minimum: 1, maximum: 9 });
    expect(body.properties?.tags).toMatchObject({ minItems: 1, maxItems: 3, items: { type: 'string', maxLength: 5 } });
  });

  it('makes integer query parameters integers', () => {
    expect(op('/v1/things', 'get').parameters?.[0].schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
  });

  it('documents security and the 4xx of every mechanism with the error schema', () => {
    expect(op('/v1/things/{id}', 'put').security).toEqual([{ bearer: [] }]);
    expect(Object.keys(op('/v1/things/{id}', 'put').responses).sort()).toEqual(['200', '400', '401', '403', '404', '413', '415', '503']);
    expect(op('/v1/things/{id}', 'put').responses['404']).toMatchObject({ content: { 'application/json': { schema: ref('Envelope') } } });
    // The parsers and the input guard run before routing: any request can be refused as bad input (and a limited one with 429).
    expect(Object.keys(op('/v1/things', 'get').responses).sort()).toEqual(['200', '400', '401', '403', '413', '415', '429', '503']);
    expect(op('/health', 'get').security).toEqual([]);
    expect(Object.keys(op('/health', 'get').responses).sort()).toEqual(['200', '400', '413', '415', '503']);
  });

  it('documents 503 SERVICE_UNAVAILABLE with Retry-After on every route but the probes that need no dependency', () => {
    expect(op('/v1/things/{id}', 'put').responses['503']).toMatchObject({
      content: { 'application/json': { schema: ref('Envelope') } },
      headers: { 'Retry-After': { $ref: '#/components/headers/Retry-After' } },
    });
    expect(doc.components?.headers?.['Retry-After']).toBeDefined();
  });

  it('moves a success response to the real status', () => {
    expect(Object.keys(op('/v1/things/{id}', 'put').responses)).toContain('200');
    expect(Object.keys(op('/v1/things', 'post').responses)).toContain('201');
    expect(Object.keys(op('/v1/things', 'post').responses)).not.toContain('202');
  });

  it('keeps only the documented methods of an @All route, without a body on GET', () => {
    expect(Object.keys(doc.paths['/hooks/{id}']).sort()).toEqual(['get', 'post']);
    expect(op('/hooks/{id}', 'get').requestBody).toBeUndefined();
    expect(Object.keys(op('/hooks/{id}', 'post').responses).sort()).toEqual(['202', '400', '404', '413', '415', '503']);
  });

  it('turns a discriminated class into a oneOf of closed branches with a mapping', () => {
    expect(schemas.SpecUnionBody).toEqual({
      oneOf: [ref('SpecUnionBodyA'), ref('SpecUnionBodyB')],
      discriminator: { propertyName: 'type', mapping: { a: ref('SpecUnionBodyA').$ref, b: ref('SpecUnionBodyB').$ref } },
    });
    expect(schemas.SpecUnionBodyA).toMatchObject({
      additionalProperties: false,
      required: ['type', 'configuration'],
      properties: { type: { enum: ['a'] }, configuration: { allOf: [ref('SpecConfigA')] } },
    });
    expect(schemas.SpecConfigB.additionalProperties).toBe(false);
  });

  it('documents 429 with Retry-After and the rate-limit headers on every answer of a limited route only', () => {
    type Answer = { headers?: Record<string, { $ref: string }>; content?: unknown };
    const list = op('/v1/things', 'get').responses as Record<string, Answer>;
    expect(list['429']?.content).toBeDefined();
    expect(list['429']?.headers?.['Retry-After']).toEqual({ $ref: '#/components/headers/Retry-After' });
    for (const [status, answer] of Object.entries(list)) {
      expect(Object.keys(answer.headers ?? {}), status).toEqual(expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit']));
    }
    const update = op('/v1/things/{id}', 'put').responses as Record<string, Answer>;
    expect(update['429']).toBeUndefined();
    expect(update['200']?.headers).toBeUndefined();
    const headers = (doc.components as { headers?: Record<string, { schema: SchemaObject }> }).headers ?? {};
    expect(headers['X-RateLimit-Reset']?.schema).toMatchObject({ type: 'integer' });
    expect(headers['Retry-After']?.schema).toMatchObject({ type: 'integer', minimum: 1 });
  });

  it('lists null in a nullable enum, without touching the input document', () => {
    const input = document();
    const enumValues = ['x', 'y'];
    (input.components?.schemas as Record<string, SchemaObject>).SpecConfigA.properties = { v: { type: 'string', enum: enumValues, nullable: true } };
    const out = postProcessOpenApi(input, options());
    expect((out.components?.schemas as Record<string, SchemaObject>).SpecConfigA.properties?.v.enum).toEqual(['x', 'y', null]);
    expect(enumValues).toEqual(['x', 'y']);
  });

  it('inlines a nullable reference, which allOf cannot make nullable', () => {
    const input = document();
    const configs = input.components?.schemas as Record<string, SchemaObject>;
    configs.SpecConfigA.properties = { inner: { nullable: true, description: 'maybe', allOf: [ref('SpecInner')] } };
    configs.SpecInner = { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] };
    const out = postProcessOpenApi(input, options()).components?.schemas as Record<string, SchemaObject>;
    expect(out.SpecConfigA.properties?.inner).toEqual({ nullable: true, description: 'maybe', type: 'object', properties: { x: { type: 'string' } }, required: ['x'] });
    expect(out).not.toHaveProperty('SpecInner');
  });
});
