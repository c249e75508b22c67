import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTrigger } from '../factories/triggers.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';
import { WorkerProcess } from '../utils/worker-process.js';
import { subscribeToEvents } from '../factories/webhooks.js';

/**
 * A worker is killed (SIGKILL) while an execution is half done — its first message sent, its
 * AI call in flight — and a new worker process finishes it: every message is sent exactly once.
 */
describe('a worker killed mid-execution', { timeout: 120_000 }, () => {
  let t: TestApp;
  let org: TestOrganization;
  let ai: Server;
  let aiPort: number;
  let hold = true;
  let aiRequests = 0;
  const held: ServerResponse[] = [];
  const workers: WorkerProcess[] = [];

  const answer = (res: ServerResponse) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'Our store opens at 9am.' }, finish_reason: 'stop' }] }));
  };

  beforeAll(async () => {
    // A fake OpenAI-compatible provider on loopback that holds requests while `hold` is set.
    ai = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on('end', () => {
        aiRequests += 1;
        if (hold) held.push(res);
        else answer(res);
      });
    });
    await new Promise<void>((resolve) => ai.listen(0, '127.0.0.1', resolve));
    aiPort = (ai.address() as AddressInfo).port;
    // This process serves HTTP only; executions run in the separate worker processes.
    t = await startTestApp({ APP_ROLE: 'api', RATE_LIMITS_ENABLED: 'false' });
    org = await createOrganization(t);
    await subscribeToEvents(t, org);
  });

  afterAll(async () => {
    for (const w of workers) await w.stop();
    for (const res of held) res.destroy();
    await new Promise((resolve) => ai?.close(resolve));
    await t?.close();
  });

  const startWorker = () => {
    const worker = new WorkerProcess(t.config, { AI_PROVIDER: 'openai', AI_BASE_URL: `http://127.0.0.1:${aiPort}/v1`, AI_API_KEY: 'test' });
    workers.push(worker);
    worker.start();
    return worker;
  };

  it('completes after a restart with each message sent exactly once', async () => {
    const db = t.app.get(DataSource);
    await t.http.put('/v1/knowledge-bases/store').set(org.auth('read_write')).send({ entries: [{ question: 'When do you open?', answer: 'At 9am.' }] });
    const created = await t.http.post('/v1/workflows').set(org.auth('read_write')).send({
      name: `restart-${Date.now()}`,
      channel: 'whatsapp',
      configuration: {
        nodes: [
          { id: 'hello', type: 'message', content: 'Hello, one moment please.', next: 'answer' },
          { id: 'answer', type: 'ai_response', knowledge_base: 'store', next: 'bye' },
          { id: 'bye', type: 'message', content: 'Anything else?' },
        ],
      },
    });
    const workflowId = created.body.data.id;
    expect((await t.http.post(`/v1/workflows/${workflowId}/activate`).set(org.auth('read_write'))).status).toBe(200);
    const trigger = await createTrigger(t, org, workflowId, 'api', { rate_limit: 100 });

    const first = startWorker();
    const fired = await t.http.post(`/v1/triggers/${trigger.id}/fire`).set(org.auth('read_write')).send({ customer_id: 'restart-customer', message: 'When do you open?' });
    expect(fired.status).toBe(202);
    const id = fired.body.data.workflow_execution_id as string;

    // The worker has sent "Hello" (inside its transaction) and waits on the AI provider: kill it now.
    await waitFor('the worker to reach the AI call', async () => aiRequests >= 1, 30_000);
    await first.kill();
    const sentBeforeRestart = await db.query(`SELECT count(*)::int AS n FROM messages WHERE execution_id = $1 AND direction = 'outbound'`, [id]);
    expect(sentBeforeRestart[0].n).toBe(0);
    expect((await db.query('SELECT status FROM workflow_executions WHERE id = $1', [id]))[0].status).toBe('running');

    hold = false;
    startWorker();
    const done = await waitFor(
      'the execution to finish on the new worker',
      async () => {
        const [row] = await db.query('SELECT status, output FROM workflow_executions WHERE id = $1', [id]);
        return row.status !== 'running' ? row : undefined;
      },
      60_000,
      200,
    );
    expect(done.status).toBe('success');
    const sent = await db.query(`SELECT content, node_id FROM messages WHERE execution_id = $1 AND direction = 'outbound' ORDER BY created_at, id`, [id]);
    expect(sent).toEqual([
      { content: 'Hello, one moment please.', node_id: 'hello' },
      { content: 'Our store opens at 9am.', node_id: 'answer' },
      { content: 'Anything else?', node_id: 'bye' },
    ]);
    const steps = await db.query('SELECT node_id FROM execution_steps WHERE execution_id = $1 ORDER BY started_at, created_at', [id]);
    expect(steps.map((s: { node_id: string }) => s.node_id)).toEqual(['hello', 'answer', 'bye']);
    const events = await db.query(`SELECT count(*)::int AS n FROM outbox_events WHERE type = 'message.sent' AND data->>'execution_id' = $1`, [id]);
    expect(events[0].n).toBe(3);
  });
});
