import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';

export const CONSOLE_PATH = '/console';

/**
 * The console's CSP: scripts and styles from this origin only (the build emits no inline script or
 * style; uPlot and Preact set styles through the CSSOM, which style-src does not govern), API calls
 * to this origin, no framing, no plugins, forms posting nowhere but here.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

/** The hashed files Vite emits (`assets/<name>-<hash>.<ext>`): their content never changes under a name. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** The package root (the folder of package.json), from src/console or dist/src/console alike. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('package.json not found above the console middleware');
    dir = up;
  }
  return dir;
}

/** Where `npm run build` writes the console (console/vite.config.ts). */
export function consoleDistDir(): string {
  return join(packageRoot(), 'dist', 'console');
}

/**
 * Serves the console's built files under /console: hashed assets cached for a year, index.html
 * revalidated on every load (`no-cache`) so that a deployment's new assets are picked up at once;
 * any other path under /console is the single-page application's, answered with index.html.
 * Read-only and public: the files hold no data, the API calls they make carry the user's token.
 */
export function consoleMiddleware(root = consoleDistDir()): RequestHandler {
  const indexFile = join(root, 'index.html');
  let index: Buffer | undefined;
  const serveStatic = express.static(root, {
    index: false,
    redirect: false,
    fallthrough: true,
    etag: true,
    setHeaders(res, path) {
      res.setHeader('Cache-Control', path.includes(`${join(root, 'assets')}`) ? IMMUTABLE : 'no-cache');
    },
  });
  const sendIndex = (res: Response) => {
    if (index === undefined) {
      if (!existsSync(indexFile)) {
        res.status(503).type('text/plain').send('The console is not built: run npm run build.');
        return;
      }
      index = readFileSync(indexFile);
    }
    res.status(200).type('html').setHeader('Cache-Control', 'no-cache');
    res.send(index);
  };
  return function consolePages(req: Request, res: Response, next: NextFunction): void {
    if (req.path !== CONSOLE_PATH && !req.path.startsWith(`${CONSOLE_PATH}/`)) return next();
    res.setHeader('Content-Security-Policy', CONSOLE_CSP);
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Referrer-Policy', 'no-referrer');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.status(405).setHeader('Allow', 'GET, HEAD');
      res.end();
      return;
    }
    if (req.path === CONSOLE_PATH) {
      // The redirect URI (and relative asset URLs) are under /console/.
      res.status(301).setHeader('Location', `${CONSOLE_PATH}/`);
      res.end();
      return;
    }
    const sub = req.path.slice(CONSOLE_PATH.length);
    if (sub.startsWith('/assets/')) {
      req.url = req.url.slice(CONSOLE_PATH.length);
      // A missing hashed asset is a 404, never the page (a script answered with HTML breaks silently).
      return void serveStatic(req, res, () => {
        res.status(404).type('text/plain').setHeader('Cache-Control', 'no-store');
        res.send('Not found');
      });
    }
    sendIndex(res);
  };
}
