import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aiEnv, createFaultWorkflow, executionOutcomes, FAULT_SENDS, keepSending, startAiProvider, statusCounts, toAnswer, type Answer } from '../utils/faults.js';
import type { FakeAiProvider } from '../utils/fake-ai-provider.js';
import { freePort } from '../utils/private-services.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';
import { WorkerProcess } from '../utils/worker-process.js';
import { subscribeToEvents } from '../factories/webhooks.js';

/**
 * Faults survived: SIGTERM to an API process and a worker process under load. The API
 * stops accepting, finishes the requests in flight and exits 0 within 10 s; the worker, whose runs
 * wait on a slow AI provider longer than its SHUTDOWN_TIMEOUT, hands them back to the queue and
 * exits 0; another worker finishes them, each message sent once.
 */
describe('SIGTERM to the API and the worker under load', { timeout: 240_000 }, () => {
  let t: TestApp;
  let org: TestOrganization;
  let ai: FakeAiProvider;
  const processes: WorkerProcess[] = [];

  beforeAll(async () => {
    // Each AI answer takes 3 s: more than the first worker's 2 s to finish its jobs at shutdown.
    ai = await startAiProvider(3000);
    t = await startTestApp({ APP_ROLE: 'api', RATE_LIMITS_ENABLED: 'false' });
    org = await createOrganization(t);
    await subscribeToEvents(t, org);
  });

  afterAll(async () => {
    for (const p of processes) await p.stop();
    await ai?.close();
    await t?.close();
  });

  const spawnProcess = (env: Record<string, string>) => {
    const p = new WorkerProcess(t.config, { ...aiEnv(ai.url), LOG_LEVEL: 'info', ...env });
    processes.push(p);
    p.start();
    return p;
  };

  it('drains the API, hands the running jobs back, and exits 0 within 10 s; nothing is lost', async () => {
    const db = t.app.get(DataSource);
    await createFaultWorkflow(t, org, 'sigterm');
    const port = await freePort();
    const api = spawnProcess({ APP_ROLE: 'api', PORT: String(port), RATE_LIMITS_ENABLED: 'false' });
    const worker = spawnProcess({ APP_ROLE: 'worker', SHUTDOWN_TIMEOUT: '2s' });
    await waitFor('the API process', async () => (await fetch(`http://127.0.0.1:${port}/health/ready`).catch(() => null))?.status === 200, 60_000, 200);

    const send = async (i: number): Promise<Answer> => {
      const at = Date.now();
      const res = await fetch(`http://127.0.0.1:${port}/v1/messages`, {
        method: 'POST',
        headers: { ...org.auth('read_write'), 'Content-Type': 'application/json' },
        body: JSON.stringify({ channel: 'whatsapp', customer_id: `sigterm-${i}`, message: 'sigterm: when do you open?' }),
      });
      return { ...toAnswer(res.status, res.headers, await res.text()), at, ms: Date.now() - at };
    };
    // The worker is up and busy (its runs wait on the AI provider) before the signals.
    const load = keepSending(send, 4);
    await waitFor('the worker to be waiting on AI answers', async () => ai.requests.length >= 5, 60_000, 100);
    const signalled = Date.now();
    const [apiExit, workerExit] = await Promise.all([api.terminate(), worker.terminate()]);
    await sleep(500);
    const answers = await load.stop();

    expect(apiExit, api.output.slice(-2000)).toMatchObject({ code: 0, signal: null });
    expect(apiExit.ms).toBeLessThan(10_000);
    expect(workerExit, worker.output.slice(-2000)).toMatchObject({ code: 0, signal: null });
    expect(workerExit.ms).toBeLessThan(10_000);
    expect(worker.output).toMatch(/still running: handing them back/);

    // Before the signal, and in flight when it came: answered 202. After: 503 SERVICE_UNAVAILABLE
    // on a kept-alive connection, or no connection at all.
    for (const a of answers) {
      if (a.at! < signalled) expect(a.status, a.body).toBe(202);
      else expect([202, 503, 0], a.body).toContain(a.status);
      if (a.status === 503) expect(a.code).toBe('SERVICE_UNAVAILABLE');
    }
    const ids = answers.filter((a) => a.status === 202).map((a) => a.executionId!);
    expect(ids.length).toBeGreaterThan(5);

    // Another worker finishes what the first handed back; each message is sent once.
    spawnProcess({ APP_ROLE: 'worker' });
    await waitFor('every accepted execution to finish', async () => ((await statusCounts(db, ids)).running ?? 0) === 0, 120_000, 500);
    const outcomes = await executionOutcomes(db, ids);
    for (const o of outcomes) {
      expect(o.status, o.id).toBe('success');
      expect(o.sent, o.id).toEqual(FAULT_SENDS.map(([node, content]) => [node, content]));
      expect(o.sent_events, o.id).toBe(FAULT_SENDS.length);
    }
  });
});
