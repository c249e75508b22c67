import { createServer, request, Agent, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { DomainError } from '../errors/domain-error.js';
import { HttpDrain } from './http-drain.js';

/** A server with the drain's middleware, a route that answers when told to, and the envelope for errors. */
function serve(drain: HttpDrain) {
  const app = express();
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  let started: () => void = () => undefined;
  const inFlight = new Promise<void>((resolve) => (started = resolve));
  app.use(drain.middleware);
  app.get('/slow', (_req, res) => {
    started();
    void held.then(() => res.json({ ok: true }));
  });
  app.get('/fast', (_req, res) => res.json({ ok: true }));
  app.use((error: DomainError, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    if (error.extra.retryAfter !== undefined) res.setHeader('Retry-After', String(error.extra.retryAfter));
    res.status(error.status).json({ error: error.toBody() });
  });
  const server = createServer(app);
  const listen = async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  };
  return { server, release, inFlight, listen };
}

function get(port: number, path: string, agent?: Agent): Promise<{ status: number; body: string; headers: IncomingMessage['headers'] }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('HttpDrain', () => {
  let server: Server | undefined;
  afterEach(() => {
    server?.closeAllConnections();
    server?.close();
  });

  it('finishes the request in flight and refuses new connections', async () => {
    const drain = new HttpDrain();
    const s = serve(drain);
    server = s.server;
    const port = await s.listen();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const other = new Agent({ keepAlive: true, maxSockets: 1 });
    expect((await get(port, '/fast', other)).status).toBe(200);

    const slow = get(port, '/slow', agent);
    await s.inFlight;
    const drained = drain.drain(s.server, 30_000);
    // The kept-alive idle connection is closed: the next request gets a new one, which is refused.
    await expect(get(port, '/fast', other)).rejects.toThrow();
    s.release();
    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ ok: true });
    expect(await drained).toBe(true);
  });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After and Connection: close once draining', async () => {
    const drain = new HttpDrain();
    const s = serve(drain);
    server = s.server;
    const port = await s.listen();
    const slow = get(port, '/slow', new Agent({ keepAlive: true, maxSockets: 1 }));
    await s.inFlight;
    // Draining with a connection still open (the slow request's): a request that reaches the app now is refused.
    void drain.drain(s.server, 30_000);
    const res = await new Promise<{ status: number; headers: IncomingMessage['headers']; body: string }>((resolve) => {
      const next: (error?: unknown) => void = (error) => {
        const e = error as DomainError;
        resolve({ status: e.status, headers: { 'retry-after': String(e.extra.retryAfter), connection: headers.Connection }, body: JSON.stringify(e.toBody()) });
      };
      const headers: Record<string, string> = {};
      drain.middleware({} as express.Request, { setHeader: (n: string, v: string) => void (headers[n] = v) } as unknown as express.Response, next);
    });
    expect(res.status).toBe(503);
    expect(res.headers).toEqual({ 'retry-after': '1', connection: 'close' });
    expect(JSON.parse(res.body)).toMatchObject({ code: 'SERVICE_UNAVAILABLE', retry_after: 1 });
    s.release();
    expect((await slow).status).toBe(200);
  });

  it('cuts the requests still running at the deadline and says so', async () => {
    const drain = new HttpDrain();
    const s = serve(drain);
    server = s.server;
    const port = await s.listen();
    const slow = get(port, '/slow').catch((error: Error) => error);
    await s.inFlight;
    expect(await drain.drain(s.server, 100)).toBe(false);
    expect(await slow).toBeInstanceOf(Error);
  });
});
