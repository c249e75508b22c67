import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NextFunction, Request, Response } from 'express';
import { ServiceUnavailableError } from '../errors/common.errors.js';

/**
 * Graceful stop of the HTTP server (SIGTERM): no new connection is accepted, a request arriving
 * on a kept-alive connection is answered 503 SERVICE_UNAVAILABLE (Retry-After: 1, Connection:
 * close) so that its client retries on another instance, and the requests in flight finish —
 * for up to `timeoutMs`, after which their connections are cut.
 */
export class HttpDrain {
  private draining = false;

  /** Early in the middleware chain (after the request id, which the 503 carries): once draining, nothing is started. */
  readonly middleware = (_req: Request, res: Response, next: NextFunction): void => {
    if (!this.draining) return next();
    res.setHeader('Connection', 'close');
    next(new ServiceUnavailableError('The service is shutting down; retry the request', 1));
  };

  /** Resolves true once every request has finished, false if some had to be cut off at the deadline. */
  async drain(server: Server, timeoutMs: number): Promise<boolean> {
    this.draining = true;
    const closed = new Promise<true>((resolve) => server.close(() => resolve(true)));
    // A kept-alive connection whose request has finished is idle: closed as soon as it is.
    server.closeIdleConnections();
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    try {
      const inTime = await Promise.race([closed, sleep(timeoutMs, false as const, { ref: false })]);
      if (!inTime) server.closeAllConnections();
      return inTime;
    } finally {
      clearInterval(idle);
    }
  }
}
