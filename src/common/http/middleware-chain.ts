import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Middlewares run in order as ONE Express layer, with the router's semantics for what they pass
 * on: `next()` (or `next('route')`) goes on to the following one, `next(error)` skips the rest and
 * hands the error to the router, and so does a middleware that throws.
 *
 * Why: every request passes the middlewares mounted before the routes, and the router pays per
 * layer, not per middleware's work: it parses the URL again, builds a match (three objects) and a
 * parameter-processing closure, and calls the layer through its promise check. For the eight
 * middlewares of createHttpApp, most of which do next to nothing on a GET, that was more
 * allocation and CPU than the middlewares themselves (docs/DECISIONS.md, "Platform and HTTP", "Per-request layers"). Here a
 * request costs one closure.
 */
export function middlewareChain(middlewares: readonly RequestHandler[]): RequestHandler {
  const steps = [...middlewares];
  return function middlewareChain(req: Request, res: Response, done: NextFunction): void {
    let index = 0;
    const next = (error?: unknown): void => {
      if (error && error !== 'route') return done(error);
      if (index === steps.length) return done();
      const step = steps[index++];
      try {
        // As the router does: a returned promise is only watched for a rejection.
        const returned: unknown = step(req, res, next);
        if (returned instanceof Promise) returned.catch((rejection: unknown) => done(rejection || new Error('Rejected promise')));
      } catch (thrown) {
        done(thrown);
      }
    };
    next();
  };
}
