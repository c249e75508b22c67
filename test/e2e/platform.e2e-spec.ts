import net, { type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import type { Response } from 'supertest';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { ANALYTICS_FILES_QUEUE } from '../../src/analytics/files/analytics-files.queue.js';
import { ApiKeysService } from '../../src/auth/api-keys/api-keys.service.js';
import { CHANNEL_SENDS_QUEUE } from '../../src/executions/channels/channel-sends.queue.js';
import { EXECUTIONS_QUEUE } from '../../src/executions/executions.queue.js';
import { BURSTS_QUEUE, SCHEDULES_QUEUE } from '../../src/triggers/triggers.queue.js';
import { WEBHOOKS_QUEUE } from '../../src/webhooks/webhooks.queue.js';
import { startTcpProxy } from '../utils/tcp-proxy.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('common layer and operations', () => {
  let t: TestApp;
  let org: TestOrganization;

  beforeAll(async () => {
    t = await startTestApp();
    org = await createOrganization(t);
  });
  afterAll(() => t?.close());

  describe('error envelope', () => {
    it('answers an unknown route under /v1 with 404 NOT_FOUND, with or without a credential', async () => {
      for (const headers of [{}, org.auth()]) {
        const res = await t.http.get('/v1/no-such-resource/123').set(headers);
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('NOT_FOUND');
        expect(res.body.error.message).toEqual(expect.any(String));
      }
      // A known path with a method it does not have is 405 with Allow, not a 404.
      const patch = await t.http.patch('/v1/workflows').set(org.auth()).send({});
      expect(patch.status).toBe(405);
      expect(patch.body.error.code).toBe('METHOD_NOT_ALLOWED');
      expect(patch.headers.allow).toBe('GET, HEAD, POST');
    });

    it('answers an unknown route outside /v1 in the same envelope', async () => {
      const res = await t.http.get('/no-such-page');
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String) } });
    });

    it('answers malformed JSON on a /v1 POST with 400 INVALID_REQUEST, before authentication', async () => {
      for (const headers of [{}, org.auth()]) {
        const res = await t.http.post('/v1/workflows').set(headers).set('Content-Type', 'application/json').send('{"name": "x",');
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('INVALID_REQUEST');
        expect(JSON.stringify(res.body)).not.toMatch(/SyntaxError|at JSON\.parse|node_modules/);
      }
    });

    it('answers a body over 1 MB with 413 PAYLOAD_TOO_LARGE, and lets one under the limit through', async () => {
      const over = JSON.stringify({ name: 'x', description: 'a'.repeat(1024 * 1024 + 100) });
      const res = await t.http.post('/v1/workflows').set(org.auth()).set('Content-Type', 'application/json').send(over);
      expect(res.status).toBe(413);
      expect(res.body.error.code).toBe('PAYLOAD_TOO_LARGE');
      expect(res.headers['x-request-id']).toMatch(UUID);

      // Just under the limit the body is parsed, so the request reaches authentication.
      const under = JSON.stringify({ name: 'x', description: 'a'.repeat(1000 * 1000) });
      const parsed = await t.http.post('/v1/workflows').set('Content-Type', 'application/json').send(under);
      expect(parsed.status).toBe(401);
      expect(parsed.body.error.code).toBe('MISSING_AUTHENTICATION');

      // The pet store keeps its own envelope for the same failure.
      const pet = await t.http.post('/pet').type('form').send(`name=${'a'.repeat(1024 * 1024 + 100)}&status=sold`);
      expect(pet.status).toBe(413);
      expect(pet.body).toEqual({ code: 413, message: expect.any(String) });
    });

    it('answers an unexpected fault with 500 INTERNAL_ERROR carrying the request id and nothing internal', async () => {
      // No route fails on purpose; make a service throw the kind of error a broken query would.
      const apiKeys = t.app.get(ApiKeysService);
      const spy = vi
        .spyOn(apiKeys, 'list')
        .mockRejectedValueOnce(Object.assign(new Error('relation "secret_internal_table" does not exist'), { code: '42P01' }));
      try {
        const res = await t.http.get('/v1/api-keys').set(org.auth()).set('X-Request-Id', 'fault-req-1');
        expect(spy).toHaveBeenCalledTimes(1);
        expect(res.status).toBe(500);
        expect(res.body.error.code).toBe('INTERNAL_ERROR');
        expect(res.headers['x-request-id']).toBe('fault-req-1');
        expect(res.body.error.details).toContain('fault-req-1');
        expect(JSON.stringify(res.body)).not.toMatch(/secret_internal_table|42P01|\.ts:|\.js:|at /);
      } finally {
        spy.mockRestore();
      }
      // The app is unharmed.
      const after = await t.http.get('/v1/api-keys').set(org.auth());
      expect(after.status).toBe(200);
    });
  });

  describe('middleware', () => {
    it('runs every middleware of ours before the routes as ONE Express layer (the router pays per layer)', () => {
      const router = t.app.getHttpAdapter().getInstance().router as { stack: { route?: unknown; name: string }[] };
      const beforeRoutes = router.stack.slice(0, router.stack.findIndex((layer) => layer.route));
      expect(beforeRoutes.map((layer) => layer.name).filter((name) => name !== '<anonymous>')).toEqual(['middlewareChain']);
      // Nest's own request hook is the other one.
      expect(beforeRoutes).toHaveLength(2);
    });

    it('parses bodies of every media type a route takes, and refuses others, through the one layer', async () => {
      const bad = await t.http.post('/v1/workflows').set(org.auth()).set('Content-Type', 'application/json').send('{"name":');
      expect(bad.status).toBe(400);
      expect(bad.headers['x-request-id']).toMatch(UUID);
      const form = await t.http.post('/v1/workflows').set(org.auth()).type('form').send('name=x');
      expect(form.status).toBe(415);
      const text = await t.http.post('/v1/workflows').set(org.auth()).set('Content-Type', 'text/plain').send('hello');
      expect(text.status).toBe(415);
    });
  });

  describe('request ids', () => {
    it('echoes a given X-Request-Id and generates a uuid when none is given', async () => {
      const given = await t.http.get('/health/live').set('X-Request-Id', 'client-id_1.2:3');
      expect(given.headers['x-request-id']).toBe('client-id_1.2:3');

      const a = await t.http.get('/health/live');
      const b = await t.http.get('/health/live');
      expect(a.headers['x-request-id']).toMatch(UUID);
      expect(b.headers['x-request-id']).toMatch(UUID);
      expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    });

    it('carries the request id on malformed-JSON and not-found responses', async () => {
      const malformed = await t.http.post('/v1/workflows').set('X-Request-Id', 'bad-json-1').set('Content-Type', 'application/json').send('{');
      expect(malformed.status).toBe(400);
      expect(malformed.headers['x-request-id']).toBe('bad-json-1');
      const generated = await t.http.post('/v1/workflows').set('Content-Type', 'application/json').send('{');
      expect(generated.headers['x-request-id']).toMatch(UUID);

      const missing = await t.http.get('/v1/nothing-here').set('X-Request-Id', 'not-found-1');
      expect(missing.status).toBe(404);
      expect(missing.headers['x-request-id']).toBe('not-found-1');
      const missingGenerated = await t.http.get('/v1/nothing-here');
      expect(missingGenerated.headers['x-request-id']).toMatch(UUID);
    });

    it('replaces an unacceptable X-Request-Id with a generated uuid', async () => {
      for (const bad of ['x'.repeat(300), 'has spaces in it', '<script>', 'a;b=c', '']) {
        const res = await t.http.get('/health/live').set('X-Request-Id', bad);
        expect(res.status).toBe(200);
        expect(res.headers['x-request-id']).toMatch(UUID);
      }
    });
  });

  describe('health', () => {
    it('GET /health/live answers 200 without a credential', async () => {
      const res = await t.http.get('/health/live');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ok' });
    });

    it('GET /health/ready answers 200 with every check up', async () => {
      const res = await t.http.get('/health/ready');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ok', checks: { database: 'up', redis: 'up' } });
    });

    it('GET /health/ready turns 503 when PostgreSQL becomes unreachable, and 200 again when it is back', async () => {
      const proxy = await startTcpProxy(5432);
      const url = new URL(inject('databaseUrl'));
      url.hostname = '127.0.0.1';
      url.port = String(proxy.port);
      let app: TestApp | undefined;
      try {
        app = await startTestApp({ DATABASE_URL: url.toString() });
        const before = await app.http.get('/health/ready');
        expect(before.status).toBe(200);
        expect(before.body.checks).toEqual({ database: 'up', redis: 'up' });

        await proxy.cut();
        const down = await pollReady(app, (res) => res.status === 503);
        expect(down.status).toBe(503);
        expect(down.body).toEqual({ status: 'unavailable', checks: { database: 'down', redis: 'up' } });
        // Liveness does not depend on the database.
        expect((await app.http.get('/health/live')).status).toBe(200);

        await proxy.restore();
        const back = await pollReady(app, (res) => res.status === 200);
        expect(back.status).toBe(200);
        expect(back.body.checks).toEqual({ database: 'up', redis: 'up' });
        // Bull's own connections reconnect on their own schedule: closing the app while one of them is
        // still reconnecting makes Bull's close reconnect it on a promise it leaves unhandled.
        await waitFor('every queue connection back', async () => queuesConnected(app!), 10_000);
      } finally {
        await proxy.restore().catch(() => undefined);
        await app?.close();
        await proxy.close();
      }
    });

    it('GET /health/ready turns 503 when Redis becomes unreachable, and 200 again when it is back', async () => {
      const proxy = await startTcpProxy(6379);
      let app: TestApp | undefined;
      try {
        app = await startTestApp({ REDIS_URL: `redis://127.0.0.1:${proxy.port}` });
        const before = await app.http.get('/health/ready');
        expect(before.status).toBe(200);
        expect(before.body.checks).toEqual({ database: 'up', redis: 'up' });

        await proxy.cut();
        const down = await pollReady(app, (res) => res.status === 503);
        expect(down.status).toBe(503);
        expect(down.body).toEqual({ status: 'unavailable', checks: { database: 'up', redis: 'down' } });
        expect((await app.http.get('/health/live')).status).toBe(200);

        await proxy.restore();
        const back = await pollReady(app, (res) => res.status === 200);
        expect(back.status).toBe(200);
        expect(back.body.checks).toEqual({ database: 'up', redis: 'up' });
      } finally {
        await proxy.restore().catch(() => undefined);
        await app?.close();
        await proxy.close();
      }
    });
  });

  describe('metrics', () => {
    it('GET /metrics serves Prometheus text with HTTP timings labelled by route template', async () => {
      await t.http.get('/health/live');
      await t.http.get('/pet/987654321');
      const res = await t.http.get('/metrics');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.text).toContain('# TYPE http_request_duration_seconds histogram');
      expect(res.text).toMatch(/^http_request_duration_seconds_count\{method="GET",route="\/health\/live",status="200"\} \d+$/m);
      expect(res.text).toMatch(/^http_request_duration_seconds_bucket\{le="[^"]+",method="GET",route="\/health\/live",status="200"\} \d+$/m);
      // Route templates, never raw paths, so that ids do not multiply the series.
      expect(res.text).toMatch(/route="\/pet\/:petId",status="404"/);
      expect(res.text).not.toContain('/pet/987654321');
      // Default process metrics are collected too.
      expect(res.text).toMatch(/^process_cpu_user_seconds_total /m);
    });
  });

  describe('API documentation', () => {
    interface Operation {
      operationId?: string;
      summary?: string;
      security?: Record<string, string[]>[];
      responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
    }
    type OpenApi = {
      openapi: string;
      paths: Record<string, Record<string, Operation>>;
      components: { schemas: Record<string, unknown>; securitySchemes?: Record<string, { type: string; scheme?: string }> };
    };
    const METHODS = ['get', 'post', 'put', 'delete', 'patch'];
    // Routes under /v1 that take no bearer credential by design (inbound webhooks are signed instead; docs/API.md, "Inbound endpoints").
    const BEARERLESS_V1 = /^\/v1\/(hooks\/|channel-accounts\/\{account_id\}\/(webhook|voice)$)/;
    let doc: OpenApi;

    beforeAll(async () => {
      const res = await t.http.get('/openapi.json');
      expect(res.status).toBe(200);
      doc = res.body as OpenApi;
    });

    function operations(): { path: string; method: string; op: Operation }[] {
      return Object.entries(doc.paths).flatMap(([path, item]) =>
        Object.entries(item)
          .filter(([method]) => METHODS.includes(method))
          .map(([method, op]) => ({ path, method, op })),
      );
    }

    it('is an OpenAPI 3 document with a bearer scheme and the error envelope schema', () => {
      expect(doc.openapi).toMatch(/^3\./);
      expect(doc.components.securitySchemes?.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
      expect(doc.components.schemas).toHaveProperty('ErrorEnvelopeDto');
      expect(Object.keys(doc.paths).some((p) => p.startsWith('/v1/'))).toBe(true);
    });

    it('gives every operation a unique operationId and a summary', () => {
      const problems: string[] = [];
      const ids = new Set<string>();
      for (const { path, method, op } of operations()) {
        const where = `${method.toUpperCase()} ${path}`;
        if (!op.operationId) problems.push(`${where}: no operationId`);
        else if (ids.has(op.operationId)) problems.push(`${where}: duplicate operationId ${op.operationId}`);
        else ids.add(op.operationId);
        if (!op.summary?.trim()) problems.push(`${where}: no summary`);
      }
      expect(operations().length).toBeGreaterThan(5);
      expect(problems).toEqual([]);
    });

    it('documents, for every /v1 operation, a 2xx response with a schema, a 401 response and bearer security', () => {
      const problems: string[] = [];
      const v1 = operations().filter(({ path }) => path.startsWith('/v1/') || path === '/v1');
      for (const { path, method, op } of v1) {
        const where = `${method.toUpperCase()} ${path}`;
        const responses = op.responses ?? {};
        const success = Object.entries(responses).filter(([status]) => /^2\d\d$/.test(status));
        if (success.length === 0) problems.push(`${where}: no 2xx response`);
        for (const [status, response] of success) {
          const contents = Object.values(response.content ?? {});
          if (contents.length === 0 || !contents.every((c) => c.schema)) problems.push(`${where}: ${status} response without a schema`);
        }
        if (BEARERLESS_V1.test(path)) continue;
        if (!responses['401']) problems.push(`${where}: no 401 response`);
        if (!(op.security ?? []).some((requirement) => 'bearer' in requirement)) problems.push(`${where}: no bearer security`);
      }
      expect(v1.length).toBeGreaterThan(3);
      expect(problems).toEqual([]);
    });

    it('documents the sample pet endpoints without a credential', () => {
      for (const path of ['/pet', '/pet/{petId}', '/pet/findByStatus']) expect(doc.paths).toHaveProperty([path]);
      expect(Object.keys(doc.paths['/pet']).sort()).toEqual(expect.arrayContaining(['post', 'put']));
      expect(Object.keys(doc.paths['/pet/{petId}']).sort()).toEqual(expect.arrayContaining(['delete', 'get']));
      for (const { path, op } of operations().filter(({ path }) => path.startsWith('/pet'))) {
        expect(op.security ?? [], path).toEqual([]);
      }
    });

    it('serves Swagger UI at /docs', async () => {
      const res = await t.http.get('/docs');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toMatch(/swagger-ui/i);
    });

    it('points GET / to /docs: a 302 with the links in its body, public and limited per source IP, documented', async () => {
      const res = await t.http.get('/');
      expect(res.status).toBe(302);
      expect(res.headers.location).toBe('/docs');
      expect(res.body).toEqual({ name: 'Workflow Automation Service', docs: '/docs', openapi: '/openapi.json', health: '/health/ready' });
      expect(res.headers['x-ratelimit-limit']).toBe('1000');
      expect((await t.http.get(res.headers.location)).status).toBe(200);
      const root = doc.paths['/']?.get;
      // 302 and the per-IP 429; what the input guard answers for any route (400, 413, 415) besides.
      expect(Object.keys(root?.responses ?? {}).sort()).toEqual(['302', '400', '413', '415', '429']);
      expect(root?.security ?? []).toEqual([]);

      const limited = await startTestApp({ RATE_LIMIT_PUBLIC_PER_IP: '2', REDIS_KEY_PREFIX: `${inject('redisKeyPrefix')}:root-limit` });
      try {
        expect([(await limited.http.get('/')).status, (await limited.http.get('/')).status]).toEqual([302, 302]);
        const refused = await limited.http.get('/');
        expect(refused.status).toBe(429);
        expect(refused.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
      } finally {
        await limited.close();
      }
    });
  });
});

/** Polls readiness until `done` holds or about 10 s have passed; returns the last answer. */
async function pollReady(app: TestApp, done: (res: Response) => boolean): Promise<Response> {
  const deadline = Date.now() + 10_000;
  let res = await app.http.get('/health/ready');
  while (!done(res) && Date.now() < deadline) {
    await sleep(200);
    res = await app.http.get('/health/ready');
  }
  return res;
}

/** Whether every Redis connection each Bull queue of the app has opened is ready. */
function queuesConnected(app: TestApp): boolean {
  return [EXECUTIONS_QUEUE, CHANNEL_SENDS_QUEUE, WEBHOOKS_QUEUE, SCHEDULES_QUEUE, BURSTS_QUEUE, ANALYTICS_FILES_QUEUE].every((name) => {
    const queue = app.app.get<Queue & Record<string, unknown>>(getQueueToken(name), { strict: false });
    return (['client', 'eclient', 'bclient'] as const).every((client) => !queue[`${client}Initialized`] || (queue[client] as Queue['client']).status === 'ready');
  });
}

describe('keep-alive connections (HTTP_KEEP_ALIVE_TIMEOUT)', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await startTestApp({ HTTP_KEEP_ALIVE_TIMEOUT: '1500ms' });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
  });
  afterAll(() => t?.close());

  it('keeps an idle connection open for HTTP_KEEP_ALIVE_TIMEOUT, then closes it', async () => {
    // A raw connection: an HTTP client would close it by itself on the answer's Keep-Alive hint.
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let closedAt: number | null = null;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('close', () => (closedAt = Date.now()));
    const answers = () => received.split('HTTP/1.1 200 OK').length - 1;
    const ask = async (n: number) => {
      socket.write('GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      await waitFor(`answer ${n}`, async () => answers() === n && received.endsWith('}'));
    };
    try {
      await new Promise((resolve) => socket.once('connect', resolve));
      await ask(1);
      // Idle for less than the timeout: the same connection serves the next request.
      await sleep(800);
      await ask(2);
      expect(closedAt).toBeNull();
      // Idle past it (Node's own default would keep it for 5 s): the server closes it.
      const idleSince = Date.now();
      await waitFor('the server closed the idle connection', async () => closedAt !== null, 4_000);
      expect(closedAt! - idleSince).toBeGreaterThanOrEqual(1400);
    } finally {
      socket.destroy();
    }
  });
});
