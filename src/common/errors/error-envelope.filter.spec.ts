import 'reflect-metadata';
import { NotFoundException, type ArgumentsHost } from '@nestjs/common';
import type { HttpAdapterHost } from '@nestjs/core';
import { QueryFailedError } from 'typeorm';
import { describe, expect, it, vi } from 'vitest';
import { ErrorEnvelopeFilter } from './error-envelope.filter.js';

interface Captured {
  status?: number;
  body?: unknown;
  headers: Record<string, string>;
}

function call(filter: ErrorEnvelopeFilter, exception: unknown, req: Record<string, unknown>): Captured {
  const captured: Captured = { headers: {} };
  const res = {
    headersSent: false,
    setHeader: (name: string, value: string) => void (captured.headers[name] = value),
    status(code: number) {
      captured.status = code;
      return this;
    },
    json: (body: unknown) => void (captured.body = body),
  };
  const host = {
    getType: () => 'http',
    switchToHttp: () => ({ getRequest: () => ({ method: 'POST', path: '/v1/workflows', originalUrl: '/v1/workflows', id: 'req-1', ...req }), getResponse: () => res }),
  } as unknown as ArgumentsHost;
  filter.catch(exception, host);
  return captured;
}

const dataError = (code: string) =>
  new QueryFailedError('INSERT INTO workflows (name) VALUES ($1)', ['secret'], Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code }));

describe('ErrorEnvelopeFilter', () => {
  it.each(['22001', '22021', '22P02', '22P05', '22003'])('answers PostgreSQL data error %s with 400 INVALID_REQUEST, no SQL, logged as a validation gap', (code) => {
    const filter = new ErrorEnvelopeFilter();
    const warn = vi.spyOn((filter as unknown as { logger: { warn: (...args: unknown[]) => void } }).logger, 'warn').mockImplementation(() => undefined);
    const res = call(filter, dataError(code), { route: { path: '/v1/workflows' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { code: 'INVALID_REQUEST', message: expect.any(String) } });
    expect(JSON.stringify(res.body)).not.toMatch(/INSERT|UTF8|secret|workflows/);
    expect(warn).toHaveBeenCalledWith(expect.objectContaining({ route: '/v1/workflows', method: 'POST', sqlState: code }), expect.stringContaining('validation gap'));
  });

  it('keeps other database failures a 500', () => {
    const filter = new ErrorEnvelopeFilter();
    vi.spyOn((filter as unknown as { logger: { error: () => void } }).logger, 'error').mockImplementation(() => undefined);
    expect(call(filter, dataError('23503'), {}).status).toBe(500);
  });

  it('answers a route-less method on a known path 405 with Allow, and an unknown path 404', () => {
    const router = { stack: [{ route: { methods: { get: true } }, match: (p: string) => p === '/v1/workflows' }] };
    const filter = new ErrorEnvelopeFilter({ httpAdapter: { getInstance: () => ({ router }) } } as unknown as HttpAdapterHost);
    const notAllowed = call(filter, new NotFoundException(), { method: 'TRACE', path: '/v1/workflows' });
    expect(notAllowed.status).toBe(405);
    expect(notAllowed.headers.Allow).toBe('GET, HEAD');
    expect(notAllowed.body).toMatchObject({ error: { code: 'METHOD_NOT_ALLOWED' } });
    // A handler's own 404 on a matched route is no 405.
    const handled = call(filter, new NotFoundException(), { method: 'GET', path: '/v1/workflows', route: { path: '/v1/workflows' } });
    expect(handled.status).toBe(404);
    const missing = call(filter, new NotFoundException(), { method: 'GET', path: '/nowhere' });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });

  it('renders the pet envelope on /pet paths', () => {
    const router = { stack: [{ route: { methods: { post: true } }, match: (p: string) => p === '/pet' }] };
    const filter = new ErrorEnvelopeFilter({ httpAdapter: { getInstance: () => ({ router }) } } as unknown as HttpAdapterHost);
    expect(call(filter, new NotFoundException(), { method: 'PATCH', path: '/pet' }).body).toEqual({ code: 405, message: expect.any(String) });
  });
});
