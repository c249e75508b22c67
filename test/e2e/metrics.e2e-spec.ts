import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTrigger } from '../factories/triggers.js';
import { freePort } from '../utils/private-services.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';
import { WorkerProcess } from '../utils/worker-process.js';

const TOKEN = `metrics-token-${'x'.repeat(20)}`;
const SIGNING_KEY = 'k'.repeat(40);
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/** The value of one series of an exposition (`name{labels}` exactly as written, labels in prom-client's order), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Every label value of an exposition. */
function labelValues(text: string): string[] {
  return [...text.matchAll(/[a-zA-Z_]\w*="((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!);
}

/**
 * /metrics on the API and on a worker process's health port: the token rule (401 / 200), the
 * loopback-only rule in production without a token (403, the client address from X-Forwarded-For
 * through TRUST_PROXY), the queue gauges, the executions counted by the worker that finished them,
 * the outbox lag, and no id among the label values.
 */
describe('metrics', { timeout: 180_000 }, () => {
  const prefix = `${inject('redisKeyPrefix')}:metrics`;
  let t: TestApp;
  let org: TestOrganization;
  let db: DataSource;

  beforeAll(async () => {
    // In-process API, no workers: nothing publishes the outbox or runs an execution until the worker starts.
    t = await startTestApp({ APP_ROLE: 'api', RATE_LIMITS_ENABLED: 'false', REDIS_KEY_PREFIX: prefix, METRICS_TOKEN: TOKEN });
    org = await createOrganization(t);
    db = t.app.get(DataSource);
  });
  afterAll(() => t?.close());

  describe('the API', () => {
    it('answers 401 in the error envelope without the bearer token or with another, 200 with it', async () => {
      const none = await t.http.get('/metrics');
      expect(none.status).toBe(401);
      expect(none.body).toEqual({ error: { code: 'MISSING_AUTHENTICATION', message: expect.any(String) } });
      expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
      const wrong = await t.http.get('/metrics').set('Authorization', `Bearer ${TOKEN}y`);
      expect(wrong.status).toBe(401);
      expect(wrong.body.error.code).toBe('INVALID_TOKEN');
      expect(wrong.text).not.toContain(TOKEN);
      // An API key is not the metrics token.
      expect((await t.http.get('/metrics').set(org.auth())).status).toBe(401);
      const ok = await t.http.get('/metrics').set('Authorization', `Bearer ${TOKEN}`);
      expect(ok.status).toBe(200);
      expect(ok.headers['content-type']).toMatch(/^text\/plain/);
      expect(ok.text).toContain('# TYPE http_request_duration_seconds histogram');
      expect(ok.text).toMatch(/^bull_queue_jobs\{queue="executions",state="waiting"\} \d+$/m);
    });

    it('reports the age of the oldest unpublished outbox event, read again after the cache period', async () => {
      const scrape = async () => (await t.http.get('/metrics').set('Authorization', `Bearer ${TOKEN}`)).text;
      const [event] = (await db.query(
        `INSERT INTO outbox_events (organization_id, type, data, occurred_at) VALUES ($1, 'workflow.completed', '{}', now() - interval '300 seconds') RETURNING id`,
        [org.id],
      )) as { id: string }[];
      try {
        const lag = await waitFor('the outbox lag to show the event', async () => {
          const value = sample(await scrape(), 'outbox_lag_seconds');
          return value !== undefined && value >= 300 ? value : undefined;
        }, 20_000, 500);
        expect(lag).toBeLessThan(330);
      } finally {
        await db.query(`UPDATE outbox_events SET published_at = now() WHERE id = $1`, [event!.id]);
      }
      const after = await waitFor('the outbox lag to drop once it is published', async () => {
        const value = sample(await scrape(), 'outbox_lag_seconds');
        return value !== undefined && value < 300 ? value : undefined;
      }, 20_000, 500);
      expect(after).toBeGreaterThanOrEqual(0);
      const text = await scrape();
      expect(sample(text, 'channel_send_backlog')).toBe(0);
      expect(text).toMatch(/^rollup_backlog_rows\{log="workflow_execution_changes"\} \d+$/m);
    });
  });

  describe('a worker process', () => {
    let worker: WorkerProcess;
    let port: number;
    const customers = [1, 2, 3].map((i) => `+1555${Date.now() % 100000}${i}`);
    let failing: string;

    beforeAll(async () => {
      const keyword = `mx${Date.now().toString(36)}`;
      const ok = await t.http.post('/v1/workflows').set(org.auth('read_write')).send({
        name: `metrics-${Date.now()}`,
        channel: 'whatsapp',
        configuration: { nodes: [{ id: 'hello', type: 'message', content: 'Hello' }] },
      });
      expect(ok.status).toBe(201);
      expect((await t.http.post(`/v1/workflows/${ok.body.data.id}/activate`).set(org.auth('read_write'))).status).toBe(200);
      await createTrigger(t, org, ok.body.data.id as string, 'message', { keywords: [keyword] });
      // Fails: its knowledge base does not exist (the AI answer is timed all the same).
      failing = `mf${Date.now().toString(36)}`;
      const bad = await t.http.post('/v1/workflows').set(org.auth('read_write')).send({
        name: `metrics-failing-${Date.now()}`,
        channel: 'whatsapp',
        configuration: { nodes: [{ id: 'ai', type: 'ai_response', knowledge_base: 'no-such-base' }] },
      });
      expect(bad.status).toBe(201);
      expect((await t.http.post(`/v1/workflows/${bad.body.data.id}/activate`).set(org.auth('read_write'))).status).toBe(200);
      await createTrigger(t, org, bad.body.data.id as string, 'message', { keywords: [failing] });

      port = await freePort();
      worker = new WorkerProcess(t.config, { REDIS_KEY_PREFIX: prefix, RATE_LIMITS_ENABLED: 'false', WORKER_HEALTH_PORT: String(port), METRICS_TOKEN: TOKEN });
      worker.start();
      await waitFor('the worker health port', async () => (await fetch(`http://127.0.0.1:${port}/health/ready`).catch(() => null))?.status === 200, 60_000, 200).catch((error: Error) => {
        throw new Error(`${error.message}\n${worker.output.slice(-2000)}`);
      });

      const sent = await Promise.all([
        ...customers.map((customer) => t.http.post('/v1/messages').set(org.auth('read_write')).send({ channel: 'whatsapp', customer_id: customer, message: `${keyword} hi` })),
        t.http.post('/v1/messages').set(org.auth('read_write')).send({ channel: 'whatsapp', customer_id: `+1666${Date.now() % 100000}`, message: `${failing} hi` }),
      ]);
      expect(sent.map((r) => r.status)).toEqual([202, 202, 202, 202]);
      const ids = sent.flatMap((r) => (r.body.data.executions as { workflow_execution_id: string }[]).map((e) => e.workflow_execution_id));
      expect(ids).toHaveLength(4);
      await waitFor('the executions to finish', async () => {
        const rows = (await db.query(`SELECT status FROM workflow_executions WHERE id = ANY($1)`, [ids])) as { status: string }[];
        return rows.length === 4 && rows.every((r) => r.status !== 'running');
      }, 60_000, 200);
    });
    afterAll(() => worker?.stop());

    const scrape = (authorization?: string) => fetch(`http://127.0.0.1:${port}/metrics`, { headers: authorization ? { Authorization: authorization } : {} });

    it('answers 401 in the error envelope without the token or with another, 200 with it', async () => {
      const none = await scrape();
      expect(none.status).toBe(401);
      expect(await none.json()).toEqual({ error: { code: 'MISSING_AUTHENTICATION', message: expect.any(String) } });
      const wrong = await scrape(`Bearer not-${TOKEN}`);
      expect(wrong.status).toBe(401);
      expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe('INVALID_TOKEN');
      expect((await scrape(`Bearer ${TOKEN}`)).status).toBe(200);
      // The probes stay open.
      expect((await fetch(`http://127.0.0.1:${port}/health/live`)).status).toBe(200);
    });

    it('serves the queue gauges, the executions it finished by status and channel with their durations, and the AI answer timings', async () => {
      const res = await scrape(`Bearer ${TOKEN}`);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      const text = await res.text();
      for (const queue of ['executions', 'channel-sends', 'webhooks']) {
        for (const state of ['waiting', 'active', 'delayed', 'failed']) expect(sample(text, `bull_queue_jobs{queue="${queue}",state="${state}"}`), `${queue} ${state}`).toBeGreaterThanOrEqual(0);
        expect(sample(text, `bull_queue_oldest_waiting_age_seconds{queue="${queue}"}`)).toBeGreaterThanOrEqual(0);
      }
      // Only this worker ran executions of this file: exactly what it finished.
      expect(sample(text, 'workflow_executions_finished_total{status="success",channel="whatsapp"}')).toBe(3);
      expect(sample(text, 'workflow_executions_finished_total{status="failed",channel="whatsapp"}')).toBe(1);
      expect(sample(text, 'workflow_execution_duration_seconds_count{status="success",channel="whatsapp"}')).toBe(3);
      expect(sample(text, 'workflow_execution_duration_seconds_bucket{le="+Inf",status="success",channel="whatsapp"}')).toBe(3);
      expect(sample(text, 'workflow_execution_duration_seconds_sum{status="success",channel="whatsapp"}')).toBeGreaterThan(0);
      expect(sample(text, 'ai_response_duration_seconds_count{provider="builtin",outcome="error"}')).toBe(1);
      expect(text).toMatch(/^process_cpu_user_seconds_total /m);
      expect(text).toMatch(/^outbox_lag_seconds \d/m);
    });

    it('puts no id in a label value, on the worker or on the API', async () => {
      const worker = await (await scrape(`Bearer ${TOKEN}`)).text();
      const api = (await t.http.get('/metrics').set('Authorization', `Bearer ${TOKEN}`)).text;
      for (const text of [worker, api]) {
        const values = labelValues(text);
        expect(values.length).toBeGreaterThan(50);
        expect(values.filter((v) => UUID.test(v))).toEqual([]);
        // The customers' numbers neither.
        for (const customer of customers) expect(text).not.toContain(customer);
      }
    });
  });

  describe('production without a token', () => {
    let api: TestApp;
    let worker: WorkerProcess;
    let port: number;
    const production = { NODE_ENV: 'production', TOKEN_SIGNING_KEY: SIGNING_KEY, TRUST_PROXY: 'loopback', RATE_LIMITS_ENABLED: 'false' };

    beforeAll(async () => {
      api = await startTestApp({ ...production, APP_ROLE: 'api', REDIS_KEY_PREFIX: `${prefix}:prod` });
      port = await freePort();
      // Queues of its own: it takes no job of the other worker.
      worker = new WorkerProcess(t.config, { ...production, REDIS_KEY_PREFIX: `${prefix}:prod`, WORKER_HEALTH_PORT: String(port) });
      worker.start();
      await waitFor('the production worker health port', async () => (await fetch(`http://127.0.0.1:${port}/health/live`).catch(() => null))?.status === 200, 60_000, 200).catch((error: Error) => {
        throw new Error(`${error.message}\n${worker.output.slice(-2000)}`);
      });
    });
    afterAll(async () => {
      await worker?.stop();
      await api?.close();
    });

    it('refuses a non-loopback client with 403 in the envelope, serves a loopback one (API)', async () => {
      // The connection is loopback, a trusted proxy (TRUST_PROXY=loopback): X-Forwarded-For names the client.
      const remote = await api.http.get('/metrics').set('X-Forwarded-For', '203.0.113.7');
      expect(remote.status).toBe(403);
      expect(remote.body).toEqual({ error: { code: 'METRICS_FORBIDDEN', message: expect.any(String) } });
      expect((await api.http.get('/metrics').set('X-Forwarded-For', '127.0.0.1')).status).toBe(200);
      const local = await api.http.get('/metrics');
      expect(local.status).toBe(200);
      expect(local.text).toContain('bull_queue_jobs');
    });

    it('refuses a non-loopback client with 403 in the envelope, serves a loopback one (worker)', async () => {
      const remote = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { 'X-Forwarded-For': '203.0.113.7' } });
      expect(remote.status).toBe(403);
      expect(await remote.json()).toEqual({ error: { code: 'METRICS_FORBIDDEN', message: expect.any(String) } });
      const local = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(local.status).toBe(200);
      expect(await local.text()).toContain('workflow_executions_finished_total');
    });
  });
});
