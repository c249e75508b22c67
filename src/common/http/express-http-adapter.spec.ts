import { IncomingMessage, ServerResponse, type Server } from 'node:http';
import { Socket, type AddressInfo } from 'node:net';
import type { Application, Request, Response } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { ExpressHttpAdapter, subclassInPlaceOf } from './express-http-adapter.js';

describe('ExpressHttpAdapter', () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  it("creates each request and response with Express's prototypes already in place, so Express changes none", async () => {
    const adapter = new ExpressHttpAdapter();
    const app = adapter.getInstance<Application & { request: object; response: object }>();
    app.get('/x', (req: Request, res: Response) => {
      res.setHeader('X-Seen', String(req.app === app && res.req === req));
      res.json({ path: req.path, query: req.query });
    });
    adapter.initHttpServer({});
    server = adapter.getHttpServer() as Server;
    const created: [object | null, object | null][] = [];
    // Before Express's own listener: what the server built, before Express sets any prototype.
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => created.push([Object.getPrototypeOf(req), Object.getPrototypeOf(res)]));
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x?a=1`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-seen')).toBe('true');
    expect(await answer.json()).toEqual({ path: '/x', query: { a: '1' } });
    expect(created).toEqual([[app.request, app.response]]);
  });
});

describe('subclassInPlaceOf', () => {
  it('builds what the base builds, with a prototype that has the same parent and own properties as the one it stands in for', () => {
    const parent = Object.create(IncomingMessage.prototype, { shared: { value: () => 'inherited' } }) as object;
    const current = Object.create(parent, { app: { value: 'the app', enumerable: true, writable: true, configurable: true } }) as object;
    const Request = subclassInPlaceOf(IncomingMessage, current);
    expect(Object.getPrototypeOf(Request.prototype)).toBe(parent);
    expect(Object.getOwnPropertyDescriptor(Request.prototype, 'app')).toEqual(Object.getOwnPropertyDescriptor(current, 'app'));
    const req = new Request(new Socket()) as IncomingMessage & { shared(): string };
    expect(req).toBeInstanceOf(IncomingMessage);
    expect(req.constructor).toBe(IncomingMessage);
    expect(req.shared()).toBe('inherited');
    expect(req.headers).toEqual({});
  });

  it('refuses an object that does not inherit from the base', () => {
    expect(() => subclassInPlaceOf(ServerResponse, Object.create(IncomingMessage.prototype) as object)).toThrow(/ServerResponse/);
  });
});
