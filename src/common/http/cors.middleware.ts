import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** What a browser application may send: the bearer credential, JSON bodies, idempotency and request ids. */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id'] as const;
export const CORS_ALLOWED_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** The response headers worth reading from a script: request id, rate limits, retry and replay signals, file names. */
export const CORS_EXPOSED_HEADERS = [
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Idempotent-Replayed',
  'Content-Disposition',
] as const;
/** How long a browser may reuse a preflight's answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * CORS for browser applications on the listed origins (CORS_ORIGINS). A request from a listed origin
 * gets Access-Control-Allow-Origin and the exposed headers; its preflight (OPTIONS with
 * Access-Control-Request-Method) is answered here, 204, before routing. Any other request passes
 * untouched, so a browser blocks an unlisted origin. Access-Control-Allow-Credentials is never sent:
 * the API authenticates by the Authorization header, which needs no credentials mode, and cookies
 * of this host must not ride along cross-origin. Without origins, no middleware at all.
 */
export function corsMiddleware(origins: '*' | readonly string[]): RequestHandler | null {
  if (origins !== '*' && origins.length === 0) return null;
  const listed = origins === '*' ? null : new Set(origins);
  const exposed = CORS_EXPOSED_HEADERS.join(', ');
  return function cors(req: Request, res: Response, next: NextFunction): void {
    const origin = req.headers.origin;
    // The answer depends on the Origin header when the list is not `*`: caches must keep them apart.
    if (listed) res.vary('Origin');
    if (origin === undefined || (listed && !listed.has(origin))) {
      next();
      return;
    }
    res.setHeader('Access-Control-Allow-Origin', listed ? origin : '*');
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
      res.setHeader('Access-Control-Allow-Methods', CORS_ALLOWED_METHODS.join(', '));
      res.setHeader('Access-Control-Allow-Headers', CORS_ALLOWED_HEADERS.join(', '));
      res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
      res.setHeader('Content-Length', '0');
      res.statusCode = 204;
      res.end();
      return;
    }
    res.setHeader('Access-Control-Expose-Headers', exposed);
    next();
  };
}
