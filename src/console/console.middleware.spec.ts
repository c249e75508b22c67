import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP, consoleMiddleware } from './console.middleware.js';

describe('consoleMiddleware', () => {
  let dir: string;
  let app: express.Express;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'console-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>c</title><script type="module" src="/console/assets/index-abc123.js"></script>');
    writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
    app = express();
    app.use(consoleMiddleware(dir));
    app.get('/v1/me', (_req, res) => void res.json({ ok: true }));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers the page for every path under /console/, revalidated, with its CSP', async () => {
    for (const path of ['/console/', '/console/workflows', '/console/workflows/1/executions/2']) {
      const res = await request(app).get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.text).toContain('index-abc123.js');
    }
    expect(CONSOLE_CSP).not.toMatch(/unsafe-(inline|eval)/);
  });

  it('serves hashed assets immutable, and a missing one as 404 (never the page)', async () => {
    const asset = await request(app).get('/console/assets/index-abc123.js');
    expect(asset.status).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.headers['content-type']).toMatch(/javascript/);
    const missing = await request(app).get('/console/assets/index-zzz.js');
    expect(missing.status).toBe(404);
    expect(missing.headers['cache-control']).toBe('no-store');
    // No way out of the folder.
    expect((await request(app).get('/console/assets/..%2f..%2fpackage.json')).status).toBe(404);
  });

  it('redirects /console to /console/, refuses other methods, leaves other paths alone', async () => {
    const bare = await request(app).get('/console');
    expect(bare.status).toBe(301);
    expect(bare.headers.location).toBe('/console/');
    const post = await request(app).post('/console/workflows');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    const api = await request(app).get('/v1/me');
    expect(api.status).toBe(200);
    expect(api.headers['content-security-policy']).toBeUndefined();
    expect((await request(app).get('/consoles')).status).toBe(404);
  });

  it('says the console is not built when index.html is missing', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'console-empty-'));
    try {
      const bare = express().use(consoleMiddleware(empty));
      const res = await request(bare).get('/console/');
      expect(res.status).toBe(503);
      expect(res.text).toContain('npm run build');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
