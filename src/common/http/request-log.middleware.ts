import express, { type NextFunction, type Request, type Response } from 'express';
import type { Level, Logger } from 'pino';

/** Probes and scrapes: frequent, and their outcome is visible elsewhere. */
const UNLOGGED_PATHS = new Set(['/health/live', '/health/ready', '/metrics']);

function levelFor(statusCode: number, err: unknown): Level {
  if (err || statusCode >= 500) return 'error';
  return statusCode >= 400 ? 'warn' : 'info';
}

/** The root logger of each Express application whose requests the middleware logs. */
const rootLoggers = new WeakMap<object, Logger>();

/**
 * `req.log` of an Express request, made on first use: pino serializes a child's bindings (the
 * request) when the child is made, and most requests never log a line (LOG_LEVEL=warn, a 2xx).
 * A getter on Express's request prototype, where Express keeps its own (`req.ip`, `req.path`);
 * the child, once made, is the request's own property. Assigning `req.log` replaces it, as before.
 */
Object.defineProperty(express.request, 'log', {
  configurable: true,
  enumerable: true,
  get(this: Request): Logger | undefined {
    const root = rootLoggers.get(this.app);
    if (!root) return undefined;
    const log = root.child({ req: this });
    Object.defineProperty(this, 'log', { value: log, writable: true, enumerable: true, configurable: true });
    return log;
  },
  set(this: Request, log: Logger) {
    Object.defineProperty(this, 'log', { value: log, writable: true, enumerable: true, configurable: true });
  },
});

/**
 * The request log: `req.log`, a child logger carrying the request (for code holding the request
 * whose lines should say which request they belong to), and one line when the response ends —
 * info for 2xx/3xx, warn for 4xx, error for 5xx or a failed response — with the status and the
 * time taken.
 *
 * This is what pino-http's middleware did, with the same lines, minus its per-request cost: it
 * attached six properties and three listeners to every request and response, 5% or more of the
 * CPU of a simple read even at LOG_LEVEL=warn, when no line is written. Here: a listener for the
 * end of the response ('close' follows 'finish', and comes alone on abort) and one for a failed
 * response; `req.log` is made only when something logs through it (above), the request's line
 * included.
 */
export function requestLogMiddleware(logger: Logger) {
  return function requestLog(req: Request, res: Response, next: NextFunction): void {
    const startedAt = Date.now();
    // An Express request finds its logger through its application; anything else gets it now.
    if (req.app !== undefined && 'log' in req) {
      if (rootLoggers.get(req.app) !== logger) rootLoggers.set(req.app, logger);
    } else req.log = logger.child({ req });
    const logged = !UNLOGGED_PATHS.has(req.url);
    let done = false;
    const end = (err?: Error) => {
      if (done) return;
      done = true;
      res.off('error', end);
      const level = levelFor(res.statusCode, err);
      if ((!logged && !err) || !logger.isLevelEnabled(level)) return;
      const log = req.log;
      const responseTime = Date.now() - startedAt;
      if (level === 'error') {
        log.error({ res, err: err ?? new Error(`failed with status code ${res.statusCode}`), responseTime }, 'request errored');
      } else {
        log[level]({ res, responseTime }, res.writableEnded ? 'request completed' : 'request aborted');
      }
    };
    res.once('close', () => end());
    // Also keeps a response stream error from being an unhandled 'error' event.
    res.on('error', end);
    next();
  };
}
