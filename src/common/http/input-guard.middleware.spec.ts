import type { NextFunction, Request, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors/domain-error.js';
import { acceptsMediaType, bodyMediaTypeMiddleware, hasBody, JSON_MEDIA_TYPES, mediaTypeOf, storableInputMiddleware, type BodyMediaRule } from './input-guard.middleware.js';

const RULES: BodyMediaRule[] = [
  { path: /^\/pet\/?$/, methods: ['POST'], accepts: ['application/x-www-form-urlencoded', ...JSON_MEDIA_TYPES] },
  { path: /^\/v1\/hooks\/[^/]+\/?$/, accepts: [...JSON_MEDIA_TYPES, 'text/*'] },
];

/** Runs a middleware on a fake request; resolves with what it passed to next(). */
function run(middleware: (req: Request, res: Response, next: NextFunction) => void, req: Partial<Request>): unknown {
  let passed: unknown = 'not called';
  middleware({ url: '/', ...req } as Request, {} as Response, (error?: unknown) => {
    passed = error;
  });
  return passed;
}

const withBody = (method: string, path: string, contentType?: string): Partial<Request> => ({
  method,
  path,
  headers: { 'content-length': '12', ...(contentType ? { 'content-type': contentType } : {}) },
});

describe('media types', () => {
  it('reads the bare media type and matches exact, text/* and +json patterns', () => {
    expect(mediaTypeOf('Application/JSON; charset=utf-8')).toBe('application/json');
    expect(mediaTypeOf(undefined)).toBe('');
    expect(acceptsMediaType('application/json', JSON_MEDIA_TYPES)).toBe(true);
    expect(acceptsMediaType('application/merge-patch+json', JSON_MEDIA_TYPES)).toBe(true);
    expect(acceptsMediaType('text/json', JSON_MEDIA_TYPES)).toBe(false);
    expect(acceptsMediaType('text/csv', ['text/*'])).toBe(true);
    expect(acceptsMediaType('textual/x', ['text/*'])).toBe(false);
  });

  it('tells a body from none: Content-Length 0 or absent is none, chunked is one', () => {
    expect(hasBody({ headers: {} } as Request)).toBe(false);
    expect(hasBody({ headers: { 'content-length': '0' } } as Request)).toBe(false);
    expect(hasBody({ headers: { 'content-length': '2' } } as Request)).toBe(true);
    expect(hasBody({ headers: { 'transfer-encoding': 'chunked' } } as Request)).toBe(true);
  });
});

describe('bodyMediaTypeMiddleware', () => {
  const middleware = bodyMediaTypeMiddleware(RULES);
  const refusal = (req: Partial<Request>) => {
    const error = run(middleware, req);
    expect(error).toBeInstanceOf(DomainError);
    return error as DomainError;
  };

  it('refuses a non-JSON body on a JSON route with 415 UNSUPPORTED_MEDIA_TYPE', () => {
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x', undefined]) {
      const error = refusal(withBody('POST', '/v1/workflows', type));
      expect(error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
      expect(error.status).toBe(415);
    }
    expect(refusal(withBody('PUT', '/pet', 'application/x-www-form-urlencoded')).status).toBe(415);
    expect(refusal(withBody('POST', '/v1/hooks/abc', 'application/x-www-form-urlencoded')).status).toBe(415);
  });

  it('passes JSON anywhere, a form on POST /pet, text on hooks, and any request without a body', () => {
    expect(run(middleware, withBody('POST', '/v1/workflows', 'application/json; charset=utf-8'))).toBeUndefined();
    expect(run(middleware, withBody('POST', '/pet', 'application/x-www-form-urlencoded'))).toBeUndefined();
    expect(run(middleware, withBody('POST', '/v1/hooks/abc', 'text/plain'))).toBeUndefined();
    expect(run(middleware, { method: 'POST', path: '/v1/workflows/x/activate', headers: {} })).toBeUndefined();
    expect(run(middleware, { method: 'POST', path: '/v1/workflows/x/activate', headers: { 'content-length': '0', 'content-type': 'text/plain' } })).toBeUndefined();
  });
});

describe('storableInputMiddleware', () => {
  const refusal = (req: Partial<Request>) => {
    const error = run(storableInputMiddleware, req);
    expect(error).toBeInstanceOf(DomainError);
    return { code: (error as DomainError).code, status: (error as DomainError).status, field: (error as DomainError).extra.field };
  };

  it('refuses NUL or a lone surrogate in a body value or key, with its path', () => {
    expect(refusal({ body: { configuration: { nodes: [{ content: 'a\ud83d' }] } } })).toEqual({ code: 'INVALID_REQUEST', status: 400, field: 'configuration.nodes[0].content' });
    expect(refusal({ body: { 'a\u0000': 1 } })).toEqual({ code: 'INVALID_REQUEST', status: 400, field: 'a\u0000' });
    expect(refusal({ body: 'text\u0000' })).toEqual({ code: 'INVALID_REQUEST', status: 400, field: 'body' });
  });

  it('refuses over-deep bodies', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 2400; i++) deep = { a: deep };
    expect(refusal({ body: deep }).code).toBe('INVALID_REQUEST');
  });

  it('refuses NUL in a query value or name, naming the parameter', () => {
    expect(refusal({ url: '/v1/workflows?search=%00', query: { search: '\u0000' } })).toMatchObject({ field: 'search' });
    expect(refusal({ url: '/x?a=1&a=%00', query: { a: ['1', '\u0000'] } })).toMatchObject({ field: 'a' });
    expect(refusal({ url: '/x?%00=1', query: { '\u0000': '1' } })).toMatchObject({ field: '\u0000' });
  });

  it('passes clean requests', () => {
    expect(run(storableInputMiddleware, { body: { name: '😀 ok', n: [1, null] }, url: '/x?page=1', query: { page: '1' } })).toBeUndefined();
    expect(run(storableInputMiddleware, { body: undefined })).toBeUndefined();
  });
});
