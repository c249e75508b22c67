import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { Writable } from 'node:stream';
import { pinoHttp } from 'pino-http';
import { describe, expect, it } from 'vitest';
import { pinoHttpOptions } from './logger.options.js';

/** Runs one request through pino-http with our options and returns the lines it logged. */
function logRequest(status: number, level: 'info' | 'warn' = 'info'): Record<string, unknown>[] {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const middleware = pinoHttp(pinoHttpOptions({ logLevel: level }), sink);
  const req = new IncomingMessage(new Socket());
  Object.assign(req, {
    id: 'req-1',
    method: 'GET',
    url: '/v1/workflows?limit=20',
    headers: { authorization: 'Bearer wfk_secret', cookie: 'session=secret', 'x-service-signature': 'sha256=secret' },
  });
  const res = new ServerResponse(req);
  middleware(req, res, () => undefined);
  res.statusCode = status;
  res.emit('finish');
  return lines.flatMap((chunk) => chunk.split('\n').filter(Boolean)).map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('request log', () => {
  it('writes one line per request with the request id, method, URL and status, and no header', () => {
    const lines = logRequest(200);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, req: { id: 'req-1', method: 'GET', url: '/v1/workflows?limit=20' }, res: { statusCode: 200 } });
    expect(Object.keys(lines[0].req as object).sort()).toEqual(['id', 'method', 'url']);
    expect(JSON.stringify(lines)).not.toMatch(/secret|authorization|cookie|signature/i);
  });

  it('logs 4xx at warn and 5xx at error, so LOG_LEVEL=warn keeps only failures', () => {
    expect(logRequest(404)[0]).toMatchObject({ level: 40, res: { statusCode: 404 } });
    expect(logRequest(503)[0]).toMatchObject({ level: 50, res: { statusCode: 503 } });
    expect(logRequest(200, 'warn')).toEqual([]);
  });
});
