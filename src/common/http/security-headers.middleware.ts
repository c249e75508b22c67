import type { NextFunction, Request, Response } from 'express';

/** One year, the value HSTS preload lists ask for. */
const HSTS = 'max-age=31536000; includeSubDomains';
/** The API explorer's pages: their scripts are Swagger UI's own; only framing is refused here. */
const DOCS_PATH = /^\/docs(\/|$)/;

/**
 * Headers of every answer, set before anything can answer (errors, 401, 404, 413, 415, 429 included):
 * `X-Content-Type-Options: nosniff`; `Strict-Transport-Security` when the service's public URL
 * (PUBLIC_BASE_URL) is https, never when it is http; and on the API explorer (/docs), frame denial
 * (`X-Frame-Options: DENY`, CSP `frame-ancestors 'none'`). The OAuth consent page sets its own
 * stricter CSP (src/auth/oauth/consent-page.ts), and the console (/console) its own (src/console/console.middleware.ts).
 */
export function securityHeadersMiddleware(publicBaseUrl: string) {
  const hsts = publicBaseUrl.startsWith('https://');
  return function securityHeaders(req: Request, res: Response, next: NextFunction): void {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (hsts) res.setHeader('Strict-Transport-Security', HSTS);
    if (DOCS_PATH.test(req.path)) {
      res.setHeader('X-Frame-Options', 'DENY');
      res.setHeader('Content-Security-Policy', "frame-ancestors 'none'");
    }
    next();
  };
}
