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

  it('logs a 500 with the request path, credential query parameters redacted', () => {
    const filter = new ErrorEnvelopeFilter();
    const error = vi.spyOn((filter as unknown as { logger: { error: (...args: unknown[]) => void } }).logger, 'error').mockImplementation(() => undefined);
    expect(call(filter, new Error('boom'), { originalUrl: '/v1/workflows?api_key=wk_live_secret&page=2' }).status).toBe(500);
    expect(error).toHaveBeenCalledWith(expect.objectContaining({ requestId: 'req-1', path: '/v1/workflows?api_key=[REDACTED]&page=2' }), 'Request failed');
    expect(JSON.stringify(error.mock.calls)).not.toContain('wk_live_secret');
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

describe('ErrorEnvelopeFilter: a dependency down', () => {
  const quiet = (filter: ErrorEnvelopeFilter) => {
    vi.spyOn((filter as unknown as { logger: { warn: () => void } }).logger, 'warn').mockImplementation(() => undefined);
    return vi.spyOn((filter as unknown as { logger: { error: () => void } }).logger, 'error').mockImplementation(() => undefined);
  };
  const driverError = (message: string, extra: Record<string, unknown>) => Object.assign(new Error(message), extra);

  it.each([
    ['refused connection', driverError('connect ECONNREFUSED 127.0.0.1:5432', { code: 'ECONNREFUSED' })],
    ['admin shutdown', new QueryFailedError('SELECT 1', [], driverError('terminating connection due to administrator command', { code: '57P01' }))],
    ['starting up', driverError('the database system is starting up', { code: '57P03' })],
    ['lost connection', new QueryFailedError('SELECT 1', [], new Error('Connection terminated unexpectedly'))],
    ['pool timeout', new Error('timeout exceeded when trying to connect')],
    ['statement timeout', new QueryFailedError('SELECT 1', [], driverError('canceling statement due to statement timeout', { code: '57014' }))],
    ['redis retries', Object.assign(new Error('Reached the max retries per request limit (which is 2). Refer to "maxRetriesPerRequest" option for details.'), { name: 'MaxRetriesPerRequestError' })],
    ['redis closed', new Error('Connection is closed.')],
  ])('answers %s with 503 SERVICE_UNAVAILABLE and Retry-After, no driver message', (_, exception) => {
    const filter = new ErrorEnvelopeFilter();
    const error = quiet(filter);
    const res = call(filter, exception, {});
    expect(res.status).toBe(503);
    expect(res.headers['Retry-After']).toBe('5');
    expect(res.body).toEqual({ error: { code: 'SERVICE_UNAVAILABLE', message: expect.any(String), retry_after: 5 } });
    expect(JSON.stringify(res.body)).not.toMatch(/ECONNREFUSED|terminat|SELECT|statement|maxRetries|Connection/);
    expect(error).not.toHaveBeenCalled();
  });

  it('answers 503 on /oauth/* as temporarily_unavailable', () => {
    const filter = new ErrorEnvelopeFilter();
    quiet(filter);
    const res = call(filter, driverError('connect ECONNREFUSED', { code: 'ECONNREFUSED' }), { path: '/oauth/token' });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ error: 'temporarily_unavailable' });
  });
});
