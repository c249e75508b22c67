import type { Response } from 'supertest';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutionsService } from '../../src/executions/executions.service.js';
import { aiEnv, createFaultWorkflow, executionOutcomes, FAULT_SENDS, keepSending, startAiProvider, statusCounts, toAnswer, type Answer } from '../utils/faults.js';
import type { FakeAiProvider } from '../utils/fake-ai-provider.js';
import { PrivateRedis } from '../utils/private-services.js';
import { createOrganization, RATE_LIMITS_OUT_OF_REACH, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';
import { WorkerProcess } from '../utils/worker-process.js';
import { subscribeToEvents } from '../factories/webhooks.js';

/**
 * Faults survived: Redis stopped for 10 s while inbound messages keep arriving.
 * Redis here is the test's own (it comes back empty, as one without persistence does); the shared
 * one on 6379 is never touched. No 5xx but a documented 503 with Retry-After; every accepted
 * message's execution completes once Redis is back (queued again by the API, whose jobs could
 * not be added, and by the worker's sweep, for the jobs Redis lost); none runs twice.
 */
describe('Redis stopped for 10 s under inbound messages', { timeout: 240_000 }, () => {
  let redis: PrivateRedis;
  let t: TestApp;
  let org: TestOrganization;
  let ai: FakeAiProvider;
  let worker: WorkerProcess | undefined;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    ai = await startAiProvider(50);
    // Limits enabled (out of reach), so that their failing open while Redis is down shows.
    t = await startTestApp({ APP_ROLE: 'api', REDIS_URL: redis.url, ...RATE_LIMITS_OUT_OF_REACH });
    org = await createOrganization(t);
    await subscribeToEvents(t, org);
    worker = new WorkerProcess(t.config, { ...aiEnv(ai.url), EXECUTION_SWEEP_INTERVAL: '2s', EXECUTION_ORPHAN_AFTER: '5s', LOG_LEVEL: 'info' });
    worker.start();
  });

  afterAll(async () => {
    await worker?.stop();
    await t?.close();
    await ai?.close();
    await redis?.cleanup();
  });

  it('answers 202 or a documented 503, and runs every accepted message once after Redis returns', async () => {
    const db = t.app.get(DataSource);
    await createFaultWorkflow(t, org, 'outage');
    const executions = t.app.get(ExecutionsService);
    const send = async (i: number): Promise<Answer> => {
      const at = Date.now();
      const res: Response = await t.http.post('/v1/messages').set(org.auth('read_write')).send({ channel: 'whatsapp', customer_id: `outage-${i}`, message: 'outage: when do you open?' });
      return { ...toAnswer(res.status, { get: (name) => (res.headers[name] as string | undefined) ?? null }, res.text), at, ms: Date.now() - at };
    };

    // The worker is up (it boots in seconds on a busy machine) before Redis goes.
    const warmUp = await send(-1);
    expect(warmUp.status).toBe(202);
    await waitFor('the worker to run a first execution', async () => (await statusCounts(db, [warmUp.executionId!])).success === 1, 60_000, 200);

    const load = keepSending(send, 4);
    // Load established (runs queued and in flight) before Redis goes.
    await waitFor('answers before the outage', async () => load.answers.filter((a) => a.status === 202).length >= 10, 60_000, 50);
    const down = Date.now();
    await redis.stop();
    let unqueuedSeen = 0;
    while (Date.now() - down < 10_000) {
      unqueuedSeen = Math.max(unqueuedSeen, executions.unqueuedCount);
      await sleep(200);
    }
    await redis.start();
    const up = Date.now();
    // Messages keep being accepted once Redis is back.
    await waitFor('messages accepted after Redis returns', async () => load.answers.filter((a) => a.at! >= up && a.status === 202).length >= 20, 60_000, 50);
    const answers = await load.stop();

    const during = answers.filter((a) => a.at! >= down && a.at! < up);
    expect(during.length, 'requests sent while Redis was down').toBeGreaterThan(5);
    for (const a of answers) {
      expect([202, 503], a.body).toContain(a.status);
      if (a.status === 503) {
        expect(a.code).toBe('SERVICE_UNAVAILABLE');
        expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1);
      }
      // Nothing waits for Redis: the rate-limit check gives up after 250 ms, the enqueue after 1 s.
      expect(a.ms, a.body).toBeLessThan(5000);
    }
    // Accepted while Redis was down: persisted in PostgreSQL, queued later; limits failed open.
    const acceptedDuring = during.filter((a) => a.status === 202);
    expect(acceptedDuring.length).toBeGreaterThan(0);
    expect(acceptedDuring.some((a) => !a.rateLimited)).toBe(true);
    expect(unqueuedSeen, 'runs kept to be queued when Redis returns').toBeGreaterThan(0);

    const ids = answers.filter((a) => a.status === 202).map((a) => a.executionId!);
    expect(ids.every((id) => typeof id === 'string')).toBe(true);
    await waitFor('every accepted execution to finish', async () => {
      const counts = await statusCounts(db, ids);
      return (counts.running ?? 0) === 0 ? counts : undefined;
    }, 120_000, 500).catch(async (error: Error) => {
      throw new Error(`${error.message}; ${JSON.stringify(await statusCounts(db, ids))}; worker: ${worker?.output.slice(-3000)}`);
    });
    expect(executions.unqueuedCount).toBe(0);
    const outcomes = await executionOutcomes(db, ids);
    expect(outcomes.length).toBe(ids.length);
    for (const o of outcomes) {
      expect(o.status, o.id).toBe('success');
      expect(o.sent, o.id).toEqual(FAULT_SENDS.map(([node, content]) => [node, content]));
      expect(o.sent_events, o.id).toBe(FAULT_SENDS.length);
      expect(o.steps, o.id).toBe(FAULT_SENDS.length);
    }
  });
});
