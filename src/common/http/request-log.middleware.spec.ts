import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import { pinoHttp } from 'pino-http';
import { describe, expect, it } from 'vitest';
import { pinoOptions } from './logger.options.js';
import { requestLogMiddleware } from './request-log.middleware.js';

type Line = Record<string, unknown> & { req?: Record<string, unknown> };

/**
 * Runs one request through the middleware, with the root logger LoggingModule builds from our
 * options, and returns what was logged, `req.log` included.
 */
function logRequest(
  url: string,
  end: (res: ServerResponse, req: IncomingMessage & { log?: { warn(msg: string): void } }) => void,
  level: 'info' | 'warn' = 'info',
  children: { made: number } = { made: 0 },
): Line[] {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const { logger } = pinoHttp(pinoOptions({ logLevel: level }), sink);
  const child = logger.child.bind(logger);
  logger.child = ((...args: Parameters<typeof logger.child>) => {
    children.made++;
    return child(...args);
  }) as typeof logger.child;
  const req = new IncomingMessage(new Socket());
  // As Express hands it to the middleware.
  Object.setPrototypeOf(req, (express() as unknown as { request: object }).request);
  Object.assign(req, {
    id: 'req-1',
    method: 'GET',
    url,
    headers: { authorization: 'Bearer wfk_secret', cookie: 'session=secret', 'x-service-signature': 'sha256=secret' },
  });
  const res = new ServerResponse(req);
  let nextCalled = false;
  requestLogMiddleware(logger)(req as never, res as never, () => {
    nextCalled = true;
  });
  expect(nextCalled).toBe(true);
  end(res, req);
  return chunks.flatMap((chunk) => chunk.split('\n').filter(Boolean)).map((line) => JSON.parse(line) as Line);
}

function respond(status: number) {
  return (res: ServerResponse) => {
    res.statusCode = status;
    Object.defineProperty(res, 'writableEnded', { value: true });
    res.emit('finish');
    res.emit('close');
  };
}

describe('request log', () => {
  it('writes one line per request with the request id, method, URL, status and time, and no header', () => {
    const lines = logRequest('/v1/workflows?limit=20', respond(200));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: { id: 'req-1', method: 'GET', url: '/v1/workflows?limit=20' },
      res: { statusCode: 200 },
      responseTime: expect.any(Number),
    });
    expect(Object.keys(lines[0].req ?? {}).sort()).toEqual(['id', 'method', 'url']);
    expect(JSON.stringify(lines)).not.toMatch(/secret|authorization|cookie|signature/i);
  });

  it('logs 4xx at warn and 5xx at error, so LOG_LEVEL=warn keeps only failures', () => {
    expect(logRequest('/v1/workflows', respond(404))).toMatchObject([{ level: 40, res: { statusCode: 404 } }]);
    expect(logRequest('/v1/workflows', respond(503))).toMatchObject([
      { level: 50, msg: 'request errored', res: { statusCode: 503 }, err: { message: 'failed with status code 503' } },
    ]);
    expect(logRequest('/v1/workflows', respond(200), 'warn')).toEqual([]);
    expect(logRequest('/v1/workflows', respond(404), 'warn')).toMatchObject([{ level: 40 }]);
  });

  it('logs an aborted request and a failed response once each', () => {
    expect(logRequest('/v1/workflows', (res) => res.emit('close'))).toMatchObject([{ level: 30, msg: 'request aborted' }]);
    const failed = logRequest('/v1/workflows', (res) => {
      res.emit('error', new Error('socket hang up'));
      res.emit('close');
    });
    expect(failed).toMatchObject([{ level: 50, msg: 'request errored', err: { message: 'socket hang up' } }]);
  });

  it('does not log probes and scrapes', () => {
    for (const url of ['/health/live', '/health/ready', '/metrics']) expect(logRequest(url, respond(200))).toEqual([]);
  });

  it('gives the request a logger that names it on every line', () => {
    const lines = logRequest('/v1/workflows', (res, req) => {
      req.log?.warn('slow downstream');
      respond(200)(res);
    });
    expect(lines[0]).toMatchObject({ level: 40, msg: 'slow downstream', req: { id: 'req-1', method: 'GET', url: '/v1/workflows' } });
  });

  it('makes the request\'s logger only when something logs (pino serializes the request when it does)', () => {
    const quiet = { made: 0 };
    expect(logRequest('/v1/workflows', respond(200), 'warn', quiet)).toEqual([]);
    expect(quiet.made).toBe(0);
    const failed = { made: 0 };
    expect(logRequest('/v1/workflows', respond(404), 'warn', failed)).toHaveLength(1);
    expect(failed.made).toBe(1);
    const used = { made: 0 };
    logRequest('/v1/workflows', (res, req) => {
      req.log?.warn('one');
      req.log?.warn('two');
      respond(200)(res);
    }, 'warn', used);
    expect(used.made).toBe(1);
  });

  it('gives a request that did not come through Express its logger at once', () => {
    const chunks: string[] = [];
    const { logger } = pinoHttp(pinoOptions({ logLevel: 'info' }), new Writable({ write: (c: Buffer, _e, done) => (chunks.push(c.toString()), done()) }));
    const req = Object.assign(new IncomingMessage(new Socket()), { id: 'req-2', method: 'GET', url: '/x' });
    requestLogMiddleware(logger)(req as never, new ServerResponse(req) as never, () => undefined);
    (req as unknown as { log: { info(msg: string): void } }).log.info('hello');
    expect(JSON.parse(chunks[0])).toMatchObject({ msg: 'hello', req: { id: 'req-2', method: 'GET', url: '/x' } });
  });
});
