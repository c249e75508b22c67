import { describe, expect, it } from 'vitest';
import { percentEncode } from './http-client.js';
import { applyBodyMutation } from './mutations.js';
import { listOperations, type OpenApiDocument } from './openapi.js';
import { render, serializeBody } from './requests.js';
import { requestTraits } from './runner.js';
import { ResponseChecker, type CheckContext } from './response-checker.js';

const envelope = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Envelope' } } } };
const document: OpenApiDocument = {
  openapi: '3.0.0',
  paths: {
    '/v1/things/{id}': {
      get: {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        security: [{ bearer: [] }],
        responses: {
          '200': { content: { 'application/json': { schema: { type: 'object', properties: { data: { type: 'string', nullable: true } }, required: ['data'] } } } },
          '401': envelope,
          '404': envelope,
        },
      },
      delete: { security: [{ bearer: [] }], responses: { '200': {}, '401': envelope, '403': envelope } },
    },
    '/health': { get: { security: [], responses: { '200': { description: 'no content documented' } } } },
  },
  components: {
    schemas: {
      Envelope: {
        type: 'object',
        properties: { error: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } }, required: ['code', 'message'] } },
        required: ['error'],
      },
    },
  },
};

const [getThing, deleteThing, health] = listOperations(document);
const checker = new ResponseChecker(document);
const json = (status: number, body: unknown) => ({ status, headers: { 'content-type': 'application/json; charset=utf-8' }, text: JSON.stringify(body) });
const context = (overrides: Partial<CheckContext> = {}): CheckContext => ({ operation: getThing!, method: 'GET', credential: 'full_access', requestText: '', ...overrides });

describe('ResponseChecker', () => {
  it('lists the operations with their security', () => {
    expect([getThing!.key, deleteThing!.key, health!.key]).toEqual(['GET /v1/things/{id}', 'DELETE /v1/things/{id}', 'GET /health']);
    expect([getThing!.secured, health!.secured]).toEqual([true, false]);
  });

  it('accepts a documented answer (nullable included)', () => {
    expect(checker.check(context(), json(200, { data: null }))).toEqual([]);
    expect(checker.check(context(), json(404, { error: { code: 'NOT_FOUND', message: 'x' } }))).toEqual([]);
  });

  it('fails on a 5xx, an undocumented status, a body off its schema and a body where none is documented', () => {
    expect(checker.check(context(), json(500, { error: { code: 'INTERNAL_ERROR', message: 'x' } }))[0]).toBe('server error 500');
    expect(checker.check(context(), json(400, { error: { code: 'INVALID_REQUEST', message: 'x' } }))).toEqual([
      'status 400 is not documented (documented: 200, 401, 404)',
    ]);
    expect(checker.check(context(), json(404, { error: { code: 'NOT_FOUND' } }))[0]).toMatch(/404 body does not match the documented schema: \/error must have required property 'message'/);
    expect(checker.check(context({ operation: health! }), json(200, { status: 'ok' }))[0]).toMatch(/status 200 documents no body/);
    expect(checker.check(context(), { status: 200, headers: { 'content-type': 'text/html' }, text: '<p>' })[0]).toMatch(/content-type text\/html is not documented/);
  });

  it('fails on a stack trace, SQL or a file path in a body, but not on the client echoed back', () => {
    const stack = { error: { code: 'X', message: 'TypeError: x is undefined\n    at WorkflowsService.get (/work/main/src/workflows/workflows.service.ts:42:13)' } };
    expect(checker.check(context(), json(404, stack))[0]).toMatch(/leaks/);
    const sql = { error: { code: 'X', message: 'QueryFailedError: invalid input syntax for type uuid' } };
    expect(checker.check(context(), json(404, sql))[0]).toMatch(/leaks SQL/);
    const echo = { error: { code: 'X', message: 'unknown property SELECT a FROM b' } };
    expect(checker.check(context({ requestText: '{"SELECT a FROM b":1}' }), json(404, echo))).toEqual([]);
  });

  it('fails when a secured operation succeeds without a valid credential or a read-only key deletes', () => {
    expect(checker.check(context({ credential: 'none' }), json(200, { data: 'x' }))).toEqual(['answered 200 to a request without a credential']);
    expect(checker.check(context({ operation: deleteThing!, method: 'DELETE', credential: 'read_only' }), { status: 200, headers: {}, text: '' })).toEqual([
      'a read-only key was allowed to DELETE (200)',
    ]);
    expect(checker.check(context({ operation: health!, credential: 'none' }), { status: 200, headers: {}, text: '' })).toEqual([]);
  });
});

describe('request building', () => {
  it('percent-encodes a lone surrogate as the WTF-8 bytes a naive client sends', () => {
    expect(percentEncode('a\ud83d')).toBe('a%ED%A0%BD');
    expect(percentEncode('😀 \u0000')).toBe('%F0%9F%98%80%20%00');
  });

  it('writes 3000-level nesting as text, and mutations as own keys (__proto__ included)', () => {
    const text = serializeBody({ a: { $deep: 3000, kind: 'array' } }, {});
    expect(text.length).toBeGreaterThan(6000);
    expect(text.startsWith('{"a":[[[')).toBe(true);
    const mutated = applyBodyMutation({ name: 'n', inner: { x: 1 } }, { kind: 'add', path: [1], key: '__proto__', value: 'x' });
    expect(JSON.stringify(mutated)).toBe('{"name":"n","inner":{"x":1,"__proto__":"x"}}');
    expect(applyBodyMutation({ name: 'n', kind: 'k' }, { kind: 'delete', path: [3] })).toEqual({ name: 'n' });
  });

  it('renders pool references as real ids, the credential as a bearer header', () => {
    const wire = render(getThing!, { credential: 'read_only', path: { id: { $pool: 'id', index: 3 } }, query: [['q', { raw: '%zz' }]], body: { kind: 'none' } }, { pools: { id: ['a', 'b'] }, keys: { full_access: 'F', read_only: 'R' } });
    expect(wire).toEqual({ method: 'GET', path: '/v1/things/b?q=%zz', headers: { accept: 'application/json', authorization: 'Bearer R' }, body: undefined });
  });
});

describe('requestTraits', () => {
  it('names what is unusual in a request', () => {
    const body = (text: string) => ({ method: 'POST', path: '/x', headers: { 'content-type': 'application/json' }, body: Buffer.from(text) });
    expect(requestTraits(body('{"a":"\\ud83d"}'))).toEqual(['lone surrogate']);
    expect(requestTraits(body('{"a":"\\ud83d\\ude00"}'))).toEqual([]);
    expect(requestTraits(body('{"a":"x\\u0000"}'))).toEqual(['NUL']);
    expect(requestTraits(body(`{"a":${'['.repeat(100)}1${']'.repeat(100)}}`))).toEqual(['deep nesting']);
    expect(requestTraits({ method: 'GET', path: '/v1/x/%F0%9F%98%80', headers: {} })).toEqual(['astral']);
    expect(requestTraits({ method: 'GET', path: '/v1/x/%ED%A0%BD?q=%', headers: {} })).toEqual(['lone surrogate', 'malformed escape or bytes that are not UTF-8']);
  });
});
