import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aiEnv, createFaultWorkflow, executionOutcomes, FAULT_SENDS, startAiProvider, statusCounts } from '../utils/faults.js';
import type { FakeAiProvider } from '../utils/fake-ai-provider.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';
import { WorkerProcess } from '../utils/worker-process.js';
import { subscribeToEvents } from '../factories/webhooks.js';

const EXECUTIONS = 200;

/**
 * Faults survived: a worker killed with SIGKILL while it runs a batch of 200
 * executions, some of them between their first message and their AI answer. A second worker
 * finishes every one, and each message is sent exactly once.
 */
describe('a worker killed (SIGKILL) during 200 executions', { timeout: 240_000 }, () => {
  let t: TestApp;
  let org: TestOrganization;
  let ai: FakeAiProvider;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    // Each AI answer takes 150 ms: with 10 jobs at once, runs are always in flight.
    ai = await startAiProvider(150);
    t = await startTestApp({ APP_ROLE: 'api', RATE_LIMITS_ENABLED: 'false' });
    org = await createOrganization(t);
    await subscribeToEvents(t, org);
  });

  afterAll(async () => {
    for (const w of workers) await w.stop();
    await ai?.close();
    await t?.close();
  });

  const startWorker = () => {
    const worker = new WorkerProcess(t.config, { ...aiEnv(ai.url), WORKER_CONCURRENCY: '10' });
    workers.push(worker);
    worker.start();
    return worker;
  };

  it('completes every execution with each message sent once', async () => {
    const db = t.app.get(DataSource);
    await createFaultWorkflow(t, org, 'kill');
    // The 200 executions are started (and queued) before any worker runs.
    const ids: string[] = [];
    for (let i = 0; i < EXECUTIONS; i += 20) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, j) => t.http.post('/v1/messages').set(org.auth('read_write')).send({ channel: 'whatsapp', customer_id: `kill-${i + j}`, message: 'kill: when do you open?' })),
      );
      for (const a of answers) {
        expect(a.status).toBe(202);
        ids.push(a.body.data.executions[0].workflow_execution_id);
      }
    }
    expect(new Set(ids).size).toBe(EXECUTIONS);

    const first = startWorker();
    // Killed once it has finished some and is busy with others (AI calls in flight).
    await waitFor('the first worker to finish 20 executions', async () => ((await statusCounts(db, ids)).success ?? 0) >= 20, 90_000, 100);
    await first.kill();
    const atKill = await statusCounts(db, ids);
    expect(atKill.running ?? 0, 'executions left for the second worker').toBeGreaterThan(0);

    startWorker();
    await waitFor('every execution to finish', async () => ((await statusCounts(db, ids)).running ?? 0) === 0, 150_000, 500);

    const outcomes = await executionOutcomes(db, ids);
    expect(outcomes.length).toBe(EXECUTIONS);
    for (const o of outcomes) {
      expect(o.status, o.id).toBe('success');
      expect(o.sent, o.id).toEqual(FAULT_SENDS.map(([node, content]) => [node, content]));
      expect(o.sent_events, o.id).toBe(FAULT_SENDS.length);
      expect(o.steps, o.id).toBe(FAULT_SENDS.length);
    }
  });
});
