import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Application } from 'express';

/** What Express puts on the application: the prototypes it gives every request and response. */
interface ExpressPrototypes {
  request: IncomingMessage;
  response: ServerResponse;
}

/**
 * Nest's Express adapter, whose HTTP server creates each request and response with Express's
 * prototypes (`app.request`, `app.response`) already in place.
 *
 * Why: Express gives every request and response its prototypes with `Object.setPrototypeOf`
 * (application.js, `handle`). After a prototype change V8 shares no property transitions: each
 * property added to that object afterwards creates a fresh hidden class (a map and a copy of its
 * descriptor array), for every request — Express's own `req.next`, `req.baseUrl`, `res.locals`,
 * passport's seven, our `req.id`, `req.principal`, ... about 40 per request (`node --log-maps`),
 * and every property access on them meets a map never seen before (megamorphic caches). When the
 * object already has that prototype, `setPrototypeOf` changes nothing and the maps are shared
 * from the first request on. docs/DECISIONS.md, "Platform and HTTP", "Per-request layers".
 */
export class ExpressHttpAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    // The options that need more than a plain server keep Nest's own path.
    if (options?.httpsOptions || options?.return503OnClosing || options?.forceCloseConnections) return super.initHttpServer(options);
    const app = this.getInstance<Application & ExpressPrototypes>();
    const AppRequest = subclassInPlaceOf(IncomingMessage, app.request);
    const AppResponse = subclassInPlaceOf(ServerResponse, app.response);
    app.request = AppRequest.prototype;
    app.response = AppResponse.prototype;
    this.httpServer = createServer({ IncomingMessage: AppRequest, ServerResponse: AppResponse }, app);
  }
}

/**
 * A subclass of `base` whose prototype can stand in for `current` (an object inheriting from
 * base's prototype, such as Express's `app.request`): the same parent and the same own properties.
 * A subclass rather than a function with that `prototype`: V8 gives instances of such a function
 * (called or constructed with `Reflect.construct`) maps that are not shared either, or too few
 * in-object fields, so that a keyed store (router's `req[matchedRoute]`) turns the request into
 * a dictionary.
 */
export function subclassInPlaceOf<T extends typeof IncomingMessage | typeof ServerResponse>(base: T, current: object): T {
  if (!(current instanceof base)) throw new Error(`expected an object inheriting from ${base.name}.prototype`);
  const Subclass = class extends base {};
  Object.setPrototypeOf(Subclass.prototype, Object.getPrototypeOf(current));
  // Instances still say `constructor === base`, as they did with `current` as their prototype.
  delete (Subclass.prototype as { constructor?: unknown }).constructor;
  Object.defineProperties(Subclass.prototype, Object.getOwnPropertyDescriptors(current));
  return Subclass as T;
}
