import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';

/**
 * The API explorer (Swagger UI at /docs) and browser applications on other origins, in a real
 * Chromium (Debian's package; `.ci/run` installs it): the explorer calls the origin it was loaded
 * from, whatever PUBLIC_BASE_URL says, and CORS_ORIGINS lets a page of a listed origin call the API.
 * The preflight's headers are checked at the HTTP level too.
 */

const CHROMIUM = '/usr/bin/chromium';

// A browser page load and a few clicks: seconds each on a loaded 2-core machine.
vi.setConfig({ testTimeout: 120_000 });

async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The app listening on 127.0.0.1 at a port known in advance. */
async function listen(overrides: Record<string, string> = {}): Promise<{ t: TestApp; port: number; base: string }> {
  const port = await freePort();
  const t = await startTestApp({ RATE_LIMITS_ENABLED: 'false', APP_ROLE: 'api', ...overrides });
  await t.app.listen(port, '127.0.0.1');
  return { t, port, base: `http://127.0.0.1:${port}` };
}

/** A page server on another loopback address: its origin is `http://<host>:<port>`. */
async function pageServer(host: string): Promise<{ server: Server; origin: string }> {
  const port = await freePort(host);
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>client</title><p>a browser application</p>');
  });
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  return { server, origin: `http://${host}:${port}` };
}

/** A page that reaches loopback addresses only: any other request (a badge, a font) is aborted, never sent. */
async function loopbackPage(browser: Browser): Promise<Page> {
  const page = await browser.newPage();
  await page.route('**/*', (route) => {
    const host = new URL(route.request().url()).hostname;
    return /^127\.\d+\.\d+\.\d+$/.test(host) || host === 'localhost' || host === '[::1]' ? route.continue() : route.abort();
  });
  return page;
}

const closeServer = (server?: Server) => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));

describe('API explorer and CORS in Chromium', () => {
  let browser: Browser;

  beforeAll(async () => {
    // Not a skip: without the browser these checks would silently not run.
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}: install Debian's chromium package (apt-get install -y chromium), as .ci/run does`);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  describe('Swagger UI loaded from 127.0.0.1 while PUBLIC_BASE_URL names localhost', () => {
    let app: Awaited<ReturnType<typeof listen>>;
    let org: TestOrganization;
    beforeAll(async () => {
      const port = await freePort();
      const t = await startTestApp({ RATE_LIMITS_ENABLED: 'false', APP_ROLE: 'api', PUBLIC_BASE_URL: `http://localhost:${port}` });
      await t.app.listen(port, '127.0.0.1');
      app = { t, port, base: `http://127.0.0.1:${port}` };
      org = await createOrganization(app.t);
    });
    afterAll(() => app?.t.close());

    it('"Try it out" on GET /v1/me with an API key shows 200', async () => {
      const page = await loopbackPage(browser);
      try {
        await page.goto(`${app.base}/docs`);
        await page.locator('.swagger-ui .btn.authorize').first().click();
        await page.locator('.modal-ux input').first().fill(org.keys.read_only);
        await page.locator('.modal-ux .auth-btn-wrapper .btn.authorize').click();
        await page.locator('.modal-ux .btn-done').click();
        const operation = page.locator('.opblock-get', { has: page.locator('.opblock-summary-path[data-path="/v1/me"]') });
        await operation.locator('.opblock-summary').first().click();
        await operation.locator('.try-out__btn').click();
        await operation.locator('.btn.execute').click();
        const status = operation.locator('.live-responses-table .response .response-col_status');
        await status.first().waitFor({ timeout: 15_000 });
        expect((await status.first().innerText()).trim()).toBe('200');
        // The body shown is /v1/me's: the organization of the key.
        expect(await operation.locator('.responses-inner').first().innerText()).toContain(org.id);
      } finally {
        await page.close();
      }
    });
  });

  describe('a browser application on another origin', () => {
    let app: Awaited<ReturnType<typeof listen>>;
    let org: TestOrganization;
    let allowed: Awaited<ReturnType<typeof pageServer>>;
    let unlisted: Awaited<ReturnType<typeof pageServer>>;
    beforeAll(async () => {
      allowed = await pageServer('127.0.0.2');
      unlisted = await pageServer('127.0.0.3');
      app = await listen({ CORS_ORIGINS: `https://app.example.com, ${allowed.origin}` });
      org = await createOrganization(app.t);
    });
    afterAll(async () => {
      await app?.t.close();
      await closeServer(allowed?.server);
      await closeServer(unlisted?.server);
    });

    /** Runs fetch in a page of `origin`: the status and an exposed header, or the error. */
    async function call(origin: string, init: { method: string; headers: Record<string, string>; body?: string }) {
      const page = await loopbackPage(browser);
      try {
        await page.goto(`${origin}/`);
        return await page.evaluate(
          async ({ url, init }) => {
            try {
              const res = await fetch(url, init);
              return { status: res.status, requestId: res.headers.get('x-request-id'), body: await res.text() };
            } catch (error) {
              return { error: String(error) };
            }
          },
          { url: `${app.base}/v1/workflows`, init },
        );
      } finally {
        await page.close();
      }
    }

    it('allowed when its origin is in CORS_ORIGINS (with a preflight for Authorization and a JSON body), blocked when not', async () => {
      const get = { method: 'GET', headers: { Authorization: `Bearer ${org.keys.read_only}` } };
      const ok = await call(allowed.origin, get);
      expect(ok).toMatchObject({ status: 200 });
      expect((ok as { requestId: string }).requestId).toBeTruthy();
      const post = await call(allowed.origin, {
        method: 'POST',
        headers: { Authorization: `Bearer ${org.keys.read_write}`, 'Content-Type': 'application/json', 'Idempotency-Key': `cors-${Date.now()}` },
        body: JSON.stringify({ name: 'Made in a browser' }),
      });
      expect(post, JSON.stringify(post)).toMatchObject({ status: 201 });
      const blocked = await call(unlisted.origin, get);
      expect(blocked).toEqual({ error: expect.stringContaining('Failed to fetch') });
    });
  });

  describe('preflight and response headers (HTTP)', () => {
    const ORIGIN = 'http://127.0.0.2:8080';
    let listed: TestApp;
    let any: TestApp;
    let none: TestApp;
    let org: TestOrganization;
    beforeAll(async () => {
      listed = await startTestApp({ APP_ROLE: 'api', CORS_ORIGINS: `${ORIGIN},https://app.example.com` });
      any = await startTestApp({ APP_ROLE: 'api', CORS_ORIGINS: '*' });
      none = await startTestApp({ APP_ROLE: 'api' });
      org = await createOrganization(listed);
    });
    afterAll(async () => {
      await listed?.close();
      await any?.close();
      await none?.close();
    });

    const preflight = (t: TestApp, origin: string, path = '/v1/workflows') =>
      t.http.options(path).set({ Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,content-type,idempotency-key' });

    it('answers a listed origin\'s preflight 204 with the methods and headers, never with credentials', async () => {
      const res = await preflight(listed, ORIGIN);
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe(ORIGIN);
      expect(res.headers.vary).toMatch(/\bOrigin\b/);
      expect(res.headers['access-control-allow-methods'].split(/,\s*/)).toEqual(expect.arrayContaining(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']));
      expect(res.headers['access-control-allow-headers'].toLowerCase().split(/,\s*/)).toEqual(expect.arrayContaining(['authorization', 'content-type', 'idempotency-key']));
      expect(Number(res.headers['access-control-max-age'])).toBeGreaterThan(0);
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect(res.text ?? '').toBe('');
      // Paths outside /v1 too (a public OAuth client's token request).
      expect((await preflight(listed, ORIGIN, '/oauth/token')).status).toBe(204);
    });

    it('exposes the useful response headers to a listed origin, errors included', async () => {
      const ok = await listed.http.get('/v1/workflows').set({ Origin: ORIGIN, ...org.auth('read_only') });
      expect(ok.status).toBe(200);
      expect(ok.headers['access-control-allow-origin']).toBe(ORIGIN);
      const exposed = ok.headers['access-control-expose-headers'].toLowerCase().split(/,\s*/);
      expect(exposed).toEqual(expect.arrayContaining(['x-request-id', 'retry-after', 'idempotent-replayed', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit', 'ratelimit-policy']));
      const unauthorized = await listed.http.get('/v1/workflows').set({ Origin: ORIGIN });
      expect(unauthorized.status).toBe(401);
      expect(unauthorized.headers['access-control-allow-origin']).toBe(ORIGIN);
    });

    it('gives no CORS header to an origin not listed, nor to any origin without CORS_ORIGINS', async () => {
      for (const [t, origin] of [[listed, 'http://127.0.0.3:8080'], [listed, 'https://app.example.com.evil.test'], [none, ORIGIN]] as const) {
        const pre = await preflight(t, origin);
        expect(pre.headers['access-control-allow-origin'], origin).toBeUndefined();
        expect(pre.status, origin).not.toBe(204);
        const res = await t.http.get('/health/live').set({ Origin: origin });
        expect(res.headers['access-control-allow-origin'], origin).toBeUndefined();
        expect(res.headers['access-control-expose-headers'], origin).toBeUndefined();
      }
    });

    it('answers `*` to any origin with `*`, and never allows credentials', async () => {
      const res = await preflight(any, 'https://anywhere.example');
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      const get = await any.http.get('/health/live').set({ Origin: 'https://anywhere.example', Cookie: 'a=b' });
      expect(get.headers['access-control-allow-origin']).toBe('*');
      expect(get.headers['access-control-allow-credentials']).toBeUndefined();
    });

    it('serves the OpenAPI document with a relative server, so the explorer calls the origin it was loaded from', async () => {
      const doc = (await none.http.get('/openapi.json').expect(200)).body;
      expect(doc.servers).toEqual([{ url: '/', description: expect.any(String) }]);
    });
  });
});
