import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTrigger } from '../factories/triggers.js';
import { createWorkflow, workflowBody } from '../factories/workflows.js';
import { RedisService } from '../../src/redis/redis.service.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';
import { WorkerProcess } from '../utils/worker-process.js';

let prefixes = 0;
/** Each app counts under its own key prefix, so that per-address limits of one test cannot reach another. */
function ownPrefix(): string {
  return `${inject('redisKeyPrefix')}:rl${++prefixes}`;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

type Res = request.Response;

/** The spec's and the IETF draft's headers, for the tightest limit. */
function expectLimitHeaders(res: Res, policy: string, limit: number, remaining: number) {
  expect(res.headers['x-ratelimit-limit'], `${policy}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`).toBe(String(limit));
  expect(res.headers['x-ratelimit-remaining']).toBe(String(remaining));
  const reset = Number(res.headers['x-ratelimit-reset']);
  const now = Date.now() / 1000;
  expect(reset).toBeGreaterThan(now - 1);
  expect(reset).toBeLessThanOrEqual(now + 3601);
  expect(res.headers['ratelimit-policy']).toContain(`"${policy}";q=${limit};w=`);
  expect(res.headers.ratelimit).toMatch(new RegExp(`^"${policy}";r=${remaining};t=\\d+$`));
}

/**
 * Counts the rate-limit scripts the app sends to Redis (EVALSHA/EVAL on its `rl` keys) while `work`
 * runs: one per round trip of the limiter. Wraps the app's command connection, which the limiter uses.
 */
async function limiterRoundTrips<T>(t: TestApp, work: () => Promise<T>): Promise<{ result: T; roundTrips: number }> {
  const client = t.app.get(RedisService).client;
  const original = client.sendCommand;
  let roundTrips = 0;
  client.sendCommand = function (this: typeof client, command: Parameters<typeof original>[0], stream?: Parameters<typeof original>[1]) {
    const name = (command as { name?: string }).name;
    const args = ((command as { args?: unknown[] }).args ?? []).map(String);
    if ((name === 'evalsha' || name === 'eval') && args.some((a) => a.startsWith(`${t.config.redisKeyPrefix}:rl:`))) roundTrips++;
    return original.call(this, command, stream);
  } as typeof original;
  try {
    return { result: await work(), roundTrips };
  } finally {
    client.sendCommand = original;
  }
}

function expectRefused(res: Res, policy: string, limit: number) {
  expect(res.status, JSON.stringify(res.body)).toBe(429);
  expect(res.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
  expect(res.body.error.retry_after).toBeGreaterThan(0);
  expect(Number(res.headers['retry-after'])).toBe(res.body.error.retry_after);
  expectLimitHeaders(res, policy, limit, 0);
}

describe('rate limits (docs/API.md)', () => {
  describe('route classes, per credential, lowered by configuration', () => {
    let t: TestApp;
    const FIGURES = { RATE_LIMIT_PER_CREDENTIAL: '12', RATE_LIMIT_READ: '3', RATE_LIMIT_WRITE: '2', RATE_LIMIT_DELETE: '2', RATE_LIMIT_EXECUTION: '2' };

    beforeAll(async () => {
      t = await startTestApp({ APP_ROLE: 'api', REDIS_KEY_PREFIX: ownPrefix(), ...FIGURES });
    });
    afterAll(() => t?.close());

    it('read (list/get): 3, then 429; each answer carries the tightest limit; triggers have an allowance of their own', async () => {
      const org = await createOrganization(t);
      for (let i = 0; i < 3; i++) {
        const res = await t.http.get('/v1/workflows').set(org.auth('read_only'));
        expect(res.status).toBe(200);
        // The route class (3) is tighter than the credential's 12.
        expectLimitHeaders(res, 'workflows-read', 3, 2 - i);
        expect(res.headers['ratelimit-policy']).toBe(`"credential";q=12;w=3600, "workflows-read";q=3;w=3600`);
      }
      expectRefused(await t.http.get('/v1/workflows/00000000-0000-4000-8000-000000000000').set(org.auth('read_only')), 'workflows-read', 3);
      const triggers = await t.http.get('/v1/triggers').set(org.auth('read_only'));
      expect(triggers.status).toBe(200);
      // The refused request counted against nothing: the credential has used 3 of 12, this is the 4th.
      expect(triggers.headers['ratelimit-policy']).toContain('"credential";q=12;w=3600');
      expectLimitHeaders(triggers, 'triggers-read', 3, 2);
    });

    it('write (create/update): 2, then 429', async () => {
      const org = await createOrganization(t);
      for (let i = 0; i < 2; i++) {
        const res = await t.http.post('/v1/workflows').set(org.auth('read_write')).send(workflowBody());
        expect(res.status).toBe(201);
        expectLimitHeaders(res, 'workflows-write', 2, 1 - i);
      }
      expectRefused(await t.http.post('/v1/workflows').set(org.auth('read_write')).send(workflowBody()), 'workflows-write', 2);
    });

    it('delete: 2, then 429', async () => {
      const org = await createOrganization(t);
      // Two credentials create (the write class allows 2 each), the Full Access key deletes.
      const ids = [
        (await createWorkflow(t, org)).id,
        (await createWorkflow(t, org)).id,
        (await t.http.post('/v1/workflows').set(org.auth('full_access')).send(workflowBody())).body.data.id as string,
      ];
      for (const [i, id] of ids.slice(0, 2).entries()) {
        const res = await t.http.delete(`/v1/workflows/${id}`).set(org.auth('full_access'));
        expect(res.status).toBe(200);
        expectLimitHeaders(res, 'workflows-delete', 2, 1 - i);
      }
      expectRefused(await t.http.delete(`/v1/workflows/${ids[2]}`).set(org.auth('full_access')), 'workflows-delete', 2);
      // The refused delete did not happen.
      expect((await t.http.get(`/v1/workflows/${ids[2]}`).set(org.auth('read_only'))).status).toBe(200);
    });

    it('execution operations (executions and metrics reads, activate, pause, fire...) share one class: 2, then 429', async () => {
      const org = await createOrganization(t);
      const workflow = await createWorkflow(t, org);
      expect((await t.http.get(`/v1/workflows/${workflow.id}/executions`).set(org.auth('read_only'))).status).toBe(200);
      const metrics = await t.http.get(`/v1/workflows/${workflow.id}/metrics`).set(org.auth('read_only'));
      expect(metrics.status).toBe(200);
      expectLimitHeaders(metrics, 'workflows-execution', 2, 0);
      expectRefused(await t.http.post(`/v1/workflows/${workflow.id}/activate`).set(org.auth('read_only')), 'workflows-execution', 2);
    });

    it('per credential: the limit of every /v1 route, on top of the classes; another key of the organization is not affected', async () => {
      const org = await createOrganization(t);
      for (let i = 0; i < 12; i++) {
        const res = await t.http.get('/v1/me').set(org.auth('read_only'));
        expect(res.status).toBe(200);
        expectLimitHeaders(res, 'credential', 12, 11 - i);
        expect(res.headers['ratelimit-policy']).toBe('"credential";q=12;w=3600');
      }
      expectRefused(await t.http.get('/v1/me').set(org.auth('read_only')), 'credential', 12);
      // Past the credential's limit, a route whose class has room is refused too (the credential is the tightest).
      expectRefused(await t.http.get('/v1/webhooks').set(org.auth('read_only')), 'credential', 12);
      expect((await t.http.get('/v1/me').set(org.auth('read_write'))).status).toBe(200);
    });

    it('errors carry the headers too: 404, 403 and 400 answers', async () => {
      const org = await createOrganization(t);
      const missing = await t.http.get('/v1/triggers/00000000-0000-4000-8000-000000000000').set(org.auth('read_only'));
      expect(missing.status).toBe(404);
      expectLimitHeaders(missing, 'triggers-read', 3, 2);
      const forbidden = await t.http.post('/v1/triggers').set(org.auth('read_only')).send({});
      expect(forbidden.status).toBe(403);
      expectLimitHeaders(forbidden, 'triggers-write', 2, 1);
      const invalid = await t.http.post('/v1/triggers').set(org.auth('read_write')).send({ name: 1 });
      expect(invalid.status).toBe(400);
      expectLimitHeaders(invalid, 'triggers-write', 2, 1);
    });

    it("an api trigger's own rate_limit is counted too, and the tightest of its limits is shown", async () => {
      const org = await createOrganization(t);
      const workflow = await createWorkflow(t, org);
      const trigger = await createTrigger(t, org, workflow.id, 'api', { rate_limit: 1 });
      const first = await t.http.post(`/v1/triggers/${trigger.id}/fire`).set(org.auth('read_write')).send({});
      expect(first.status).toBe(202);
      expectLimitHeaders(first, 'trigger-rate-limit', 1, 0);
      expect(first.headers['ratelimit-policy']).toContain('"triggers-execution";q=2;w=3600');
      expectRefused(await t.http.post(`/v1/triggers/${trigger.id}/fire`).set(org.auth('read_write')).send({}), 'trigger-rate-limit', 1);
    });

    it("the api trigger's rate_limit is checked and counted in the request's ONE Redis round trip, with the credential's and the class's", async () => {
      const org = await createOrganization(t);
      const workflow = await createWorkflow(t, org);
      const trigger = await createTrigger(t, org, workflow.id, 'api', { rate_limit: 5 });
      // Every script is loaded (EVALSHA, not a NOSCRIPT retry) before counting.
      expect((await t.http.get('/v1/me').set(org.auth('read_only'))).status).toBe(200);
      const fire = () => t.http.post(`/v1/triggers/${trigger.id}/fire`).set(org.auth('read_write')).send({});
      const { result: first, roundTrips } = await limiterRoundTrips(t, fire);
      expect(first.status).toBe(202);
      expect(roundTrips).toBe(1);
      // The tightest of the three: triggers-execution (2) has 1 left, the trigger's 5 has 4.
      expectLimitHeaders(first, 'triggers-execution', 2, 1);
      expect(first.headers['ratelimit-policy']).toBe('"credential";q=12;w=3600, "triggers-execution";q=2;w=3600, "trigger-rate-limit";q=5;w=3600');
      // A 429 of the trigger's limit is that same one round trip too.
      await t.http.put(`/v1/triggers/${trigger.id}`).set(org.auth('read_write')).send({ configuration: { rate_limit: 1 } }).expect(200);
      const other = await createOrganization(t);
      const refused = await limiterRoundTrips(t, () => t.http.post(`/v1/triggers/${trigger.id}/fire`).set(org.auth('full_access')).send({}));
      expect(refused.roundTrips).toBe(1);
      // The update reached the cache of trigger limits at once: the new rate_limit (1) is the one refusing.
      expectRefused(refused.result, 'trigger-rate-limit', 1);
      // Another organization's credential draws on no trigger limit (404, as if absent).
      const foreign = await t.http.post(`/v1/triggers/${trigger.id}/fire`).set(other.auth('read_write')).send({});
      expect(foreign.status).toBe(404);
      expect(foreign.headers['ratelimit-policy']).toBe('"credential";q=12;w=3600, "triggers-execution";q=2;w=3600');
    });

    it('an inbound webhook is one Redis round trip too: its trigger limit (it is exempt from the request throttler)', async () => {
      const org = await createOrganization(t);
      const workflow = await createWorkflow(t, org);
      const hook = await createTrigger(t, org, workflow.id, 'webhook', {});
      const { result, roundTrips } = await limiterRoundTrips(t, () => t.http.post(`/v1/hooks/${hook.id}`).send({}));
      expect(result.status).toBe(202);
      expect(roundTrips).toBe(1);
      expect(result.headers['ratelimit-policy']).toBe('"hook";q=100;w=60');
      expect(result.headers['x-ratelimit-remaining']).toBe('99');
    });

    it('a deleted api trigger is forgotten by the cache of trigger limits', async () => {
      const org = await createOrganization(t);
      const workflow = await createWorkflow(t, org);
      const trigger = await createTrigger(t, org, workflow.id, 'api', { rate_limit: 7 });
      const fired = await t.http.post(`/v1/triggers/${trigger.id}/fire`).set(org.auth('read_write')).send({});
      expect(fired.headers['ratelimit-policy']).toContain('"trigger-rate-limit";q=7;w=3600');
      expect((await t.http.delete(`/v1/triggers/${trigger.id}`).set(org.auth('full_access'))).status).toBe(200);
      const gone = await t.http.post(`/v1/triggers/${trigger.id}/fire`).set(org.auth('full_access')).send({});
      expect(gone.status).toBe(404);
      expect(gone.headers['ratelimit-policy']).not.toContain('trigger-rate-limit');
    });
  });

  describe('per source address: unauthenticated routes and failed authentication', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await startTestApp({ APP_ROLE: 'api', REDIS_KEY_PREFIX: ownPrefix(), RATE_LIMIT_PUBLIC_PER_IP: '3', RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '3' });
    });
    afterAll(() => t?.close());

    it('the pet sample: 3 per address, then 429 in its own envelope; probes are not limited', async () => {
      for (let i = 0; i < 3; i++) {
        const res = await t.http.get('/pet/findByStatus?status=available');
        expect(res.status).toBe(200);
        expectLimitHeaders(res, 'public', 3, 2 - i);
      }
      const refused = await t.http.get('/pet/findByStatus?status=available');
      expect(refused.status).toBe(429);
      expect(refused.body).toEqual({ code: 429, message: expect.any(String) });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      for (let i = 0; i < 5; i++) expect((await t.http.get('/health/live')).status).toBe(200);
    });

    it('401 answers count per address (with headers); past the limit even a valid key from that address is 429', async () => {
      const org = await createOrganization(t);
      const codes = ['MISSING_AUTHENTICATION', 'INVALID_API_KEY', 'INVALID_API_KEY'];
      for (const [i, code] of codes.entries()) {
        const res = await t.http.get('/v1/me').set(code === 'MISSING_AUTHENTICATION' ? {} : { Authorization: `Bearer wfk_guess_${i}` });
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe(code);
        expectLimitHeaders(res, 'auth-failures', 3, 2 - i);
      }
      expectRefused(await t.http.get('/v1/me').set({ Authorization: 'Bearer wfk_guess_4' }), 'auth-failures', 3);
      // A guess that happens to be right is refused as well: guessing gains nothing past the limit.
      const valid = await t.http.get('/v1/me').set(org.auth('read_only'));
      expectRefused(valid, 'auth-failures', 3);
      expect(valid.body.error.retry_after).toBeLessThanOrEqual(60);
    });
  });

  describe('answers given before the guards (body parsers, unknown routes) carry the headers and are counted', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await startTestApp({ APP_ROLE: 'api', REDIS_KEY_PREFIX: ownPrefix(), RATE_LIMIT_PER_CREDENTIAL: '12', RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '4' });
    });
    afterAll(() => t?.close());

    it('with a valid credential: 400 malformed JSON, 413, 415 and an unknown route count against the credential', async () => {
      const org = await createOrganization(t);
      const json = { ...org.auth('read_write'), 'Content-Type': 'application/json' };
      const malformed = await t.http.post('/v1/workflows').set(json).send('{"name": ');
      expect(malformed.status).toBe(400);
      expect(malformed.body.error.code).toBe('INVALID_REQUEST');
      expectLimitHeaders(malformed, 'credential', 12, 11);
      expect(malformed.headers['ratelimit-policy']).toBe('"credential";q=12;w=3600');
      const tooLarge = await t.http.post('/v1/workflows').set(json).send(JSON.stringify({ name: 'x'.repeat(1_100_000) }));
      expect(tooLarge.status).toBe(413);
      expectLimitHeaders(tooLarge, 'credential', 12, 10);
      const wrongType = await t.http.post('/v1/workflows').set({ ...org.auth('read_write'), 'Content-Type': 'text/plain' }).send('name=x');
      expect(wrongType.status).toBe(415);
      expectLimitHeaders(wrongType, 'credential', 12, 9);
      const unknown = await t.http.get('/v1/no-such-route').set(org.auth('read_only'));
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('NOT_FOUND');
      // Another key of the organization: its own allowance.
      expectLimitHeaders(unknown, 'credential', 12, 11);
      // Counted: the read_write key's next request is its 4th.
      const next = await t.http.get('/v1/me').set(org.auth('read_write'));
      expectLimitHeaders(next, 'credential', 12, 8);
      // The normal path is not counted twice: one request, one count.
      expectLimitHeaders(await t.http.get('/v1/me').set(org.auth('read_write')), 'credential', 12, 7);
    });

    it('with no credential or a bad one: a failed authentication of the source address, then 429', async () => {
      const none = await t.http.get('/v1/no-such-route');
      expect(none.status).toBe(404);
      expectLimitHeaders(none, 'auth-failures', 4, 3);
      const guessed = await t.http.post('/v1/workflows').set({ Authorization: 'Bearer wfk_guess', 'Content-Type': 'application/json' }).send('{');
      expect(guessed.status).toBe(400);
      expectLimitHeaders(guessed, 'auth-failures', 4, 2);
      expectLimitHeaders(await t.http.get('/v1/me'), 'auth-failures', 4, 1);
      expectLimitHeaders(await t.http.get('/v1/nothing-here').set({ Authorization: 'Bearer wfk_guess2' }), 'auth-failures', 4, 0);
      expectRefused(await t.http.get('/v1/no-such-route'), 'auth-failures', 4);
      // Outside /v1 nothing changes: the pet sample's unknown routes are its own.
      expect((await t.http.get('/no-such-route')).headers['x-ratelimit-limit']).toBeUndefined();
    });
  });

  describe('the real defaults', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await startTestApp({ APP_ROLE: 'api', REDIS_KEY_PREFIX: ownPrefix() });
    });
    afterAll(() => t?.close());

    it('delete class: 50 deletes per hour, the 51st is 429', async () => {
      const org = await createOrganization(t);
      const ids: string[] = [];
      for (let i = 0; i < 51; i++) ids.push((await createWorkflow(t, org)).id);
      for (let i = 0; i < 50; i++) {
        const res = await t.http.delete(`/v1/workflows/${ids[i]}`).set(org.auth('full_access'));
        expect(res.status).toBe(200);
        expect(res.headers['x-ratelimit-limit']).toBe('50');
        expect(res.headers['x-ratelimit-remaining']).toBe(String(49 - i));
      }
      const refused = await t.http.delete(`/v1/workflows/${ids[50]}`).set(org.auth('full_access'));
      expectRefused(refused, 'workflows-delete', 50);
      expect(refused.headers['ratelimit-policy']).toBe('"credential";q=1000;w=3600, "workflows-delete";q=50;w=3600');
    }, 60_000);

    it("RATE_LIMITS_ENABLED=false: no limit and no headers, an api trigger's rate_limit and the webhook limits included", async () => {
      const off = await startTestApp({
        APP_ROLE: 'api',
        REDIS_KEY_PREFIX: ownPrefix(),
        RATE_LIMITS_ENABLED: 'false',
        RATE_LIMIT_PER_CREDENTIAL: '1',
        RATE_LIMIT_HOOK_PER_MINUTE: '1',
        WEBHOOK_SIGNATURE_FAILURES_PER_MINUTE: '1',
      });
      try {
        const org = await createOrganization(off);
        for (let i = 0; i < 3; i++) {
          const res = await off.http.get('/v1/me').set(org.auth('read_only'));
          expect(res.status).toBe(200);
          expect(res.headers['x-ratelimit-limit']).toBeUndefined();
        }
        const workflow = await createWorkflow(off, org);
        const api = await createTrigger(off, org, workflow.id, 'api', { rate_limit: 1 });
        const hook = await createTrigger(off, org, workflow.id, 'webhook', {});
        const signed = await createTrigger(off, org, workflow.id, 'webhook', { secret: 'a-webhook-secret-of-some-length' });
        for (let i = 0; i < 3; i++) {
          const fired = await off.http.post(`/v1/triggers/${api.id}/fire`).set(org.auth('read_write')).send({});
          expect(fired.status).toBe(202);
          expect(fired.headers['x-ratelimit-limit']).toBeUndefined();
          const hooked = await off.http.post(`/v1/hooks/${hook.id}`).send({});
          expect(hooked.status).toBe(202);
          expect(hooked.headers['x-ratelimit-limit']).toBeUndefined();
          expect((await off.http.post(`/v1/hooks/${signed.id}`).send({})).status).toBe(401);
          expect((await off.http.get('/v1/no-such-route')).headers['x-ratelimit-limit']).toBeUndefined();
        }
      } finally {
        await off.close();
      }
    });
  });

  describe('two API processes sharing Redis', () => {
    let t: TestApp;
    const processes: WorkerProcess[] = [];

    beforeAll(async () => {
      t = await startTestApp({ APP_ROLE: 'api' });
    });
    afterAll(async () => {
      await Promise.all(processes.map((p) => p.stop()));
      await t?.close();
    });

    it('hold one limit exactly: 60 concurrent requests against an allowance of 25 → 25 served, 35 refused', async () => {
      const prefix = ownPrefix();
      const ports = [await freePort(), await freePort()];
      for (const port of ports) {
        // A check Redis does not answer within RATE_LIMIT_REDIS_TIMEOUT_MS is served (fail open): on a loaded
        // machine a burst of 58 fresh requests can wait that long, so this check of the shared count allows more.
        const p = new WorkerProcess(t.config, { APP_ROLE: 'api', PORT: String(port), REDIS_KEY_PREFIX: prefix, RATE_LIMIT_PER_CREDENTIAL: '25', RATE_LIMIT_REDIS_TIMEOUT_MS: '5000' });
        p.start();
        processes.push(p);
      }
      for (const port of ports) {
        await waitFor(`API process on ${port}`, async () => (await fetch(`http://127.0.0.1:${port}/health/live`).catch(() => null))?.status === 200, 30_000);
      }
      const org = await createOrganization(t);
      const ask = (port: number) =>
        fetch(`http://127.0.0.1:${port}/v1/me`, { headers: org.auth('read_only') }).then(async (res) => ({ status: res.status, port, remaining: res.headers.get('x-ratelimit-remaining') }));
      // One from each process first (each serves: the second sees the first's count), then 58 at once
      // (the limiter sends the scripts asked for in one event-loop turn together, so in a burst one
      // process's batch may reach Redis whole before the other's).
      const first = [await ask(ports[0]), await ask(ports[1])];
      expect(first.map((a) => [a.status, a.remaining])).toEqual([[200, '24'], [200, '23']]);
      const answers = [...first, ...(await Promise.all(Array.from({ length: 58 }, (_, i) => ask(ports[i % 2]))))];
      const served = answers.filter((a) => a.status === 200);
      // Not shared, each process would have served 25 of its 30.
      expect(served.length).toBe(25);
      expect(answers.filter((a) => a.status === 429).length).toBe(35);
      // Both processes served some, and each remaining count was given out once.
      expect(new Set(served.map((a) => a.port)).size).toBe(2);
      expect(served.map((a) => Number(a.remaining)).sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    }, 60_000);
  });

  describe('Redis unreachable', () => {
    let redis: ChildProcess | undefined;
    let t: TestApp | undefined;

    afterAll(async () => {
      await t?.close();
      if (redis && redis.exitCode === null) redis.kill('SIGKILL');
    });

    it('serves requests without limits (fail open), logs and counts the outage', async () => {
      const port = await freePort();
      redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      await waitFor('own redis-server', async () => {
        const probe = await new Promise<boolean>((resolve) => {
          const socket = createServer();
          socket.once('error', () => resolve(true));
          socket.listen(port, '127.0.0.1', () => socket.close(() => resolve(false)));
        });
        return probe;
      }, 10_000);
      t = await startTestApp({ APP_ROLE: 'api', REDIS_URL: `redis://127.0.0.1:${port}`, RATE_LIMIT_PER_CREDENTIAL: '5' });
      const org = await createOrganization(t);
      const workflow = await createWorkflow(t, org);
      const get = () => t!.http.get(`/v1/workflows/${workflow.id}`).set(org.auth('read_only'));
      const before = await get();
      expect(before.status).toBe(200);
      expect(before.headers['x-ratelimit-limit']).toBe('5');
      const failuresBefore = await storageFailures(t);

      await new Promise<void>((resolve) => {
        redis!.once('exit', () => resolve());
        redis!.kill('SIGTERM');
      });
      // Well past the credential's allowance of 5: every request is served.
      for (let i = 0; i < 8; i++) {
        const res = await get();
        expect(res.status).toBe(200);
        expect(res.body.data.id).toBe(workflow.id);
        expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      }
      expect(await storageFailures(t)).toBeGreaterThanOrEqual(failuresBefore + 8);
    }, 60_000);

    async function storageFailures(app: TestApp): Promise<number> {
      const text = (await app.http.get('/metrics')).text;
      const line = text.split('\n').find((l) => l.startsWith('rate_limit_storage_failures_total'));
      return Number(line?.split(' ')[1] ?? 0);
    }
  });
});
