import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ExecutionEngine } from '../../src/executions/execution-engine.service.js';
import { EXECUTIONS_QUEUE } from '../../src/executions/executions.queue.js';
import { createTrigger } from '../factories/triggers.js';
import { startFakeAiProvider, type FakeAiProvider } from '../utils/fake-ai-provider.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';
import { subscribeToEvents } from '../factories/webhooks.js';

const FAQ = [{ question: 'How can I get a refund?', answer: 'Refunds are issued within 14 days.' }];
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/**
 * Durable executions: retry of a failed execution, cancel of a running or waiting one,
 * and a node's transient failures attempted again with back-off. The ai_response node answers
 * through a fake OpenAI-compatible provider on loopback whose answers the tests script: a 503 is a
 * transient failure, and a held request keeps a run in progress.
 */
describe('execution retry, cancel and node attempts', () => {
  let t: TestApp;
  let org: TestOrganization;
  let db: DataSource;
  let ai: FakeAiProvider;
  let seq = 0;

  beforeAll(async () => {
    ai = await startFakeAiProvider({ content: 'Refunds take 14 days.' });
    t = await startTestApp({
      RATE_LIMITS_ENABLED: 'false',
      REDIS_KEY_PREFIX: `${inject('redisKeyPrefix')}:retry`,
      AI_PROVIDER: 'openai',
      AI_BASE_URL: ai.url,
      AI_API_KEY: 'test-key',
      NODE_RETRY_ATTEMPTS: '3',
      NODE_RETRY_BASE_DELAY_MS: '20',
    });
    org = await createOrganization(t);
    await subscribeToEvents(t, org);
    db = t.app.get(DataSource);
    await t.http.put('/v1/knowledge-bases/refunds').set(org.auth('read_write')).send({ entries: FAQ }).expect(201);
  });
  afterAll(async () => {
    await t?.close();
    await ai?.close();
  });

  /** An active workflow with a message trigger on a keyword of its own; returns its id and the keyword. */
  async function activeWorkflow(nodes: Record<string, unknown>[]): Promise<{ workflowId: string; keyword: string }> {
    seq += 1;
    const created = await t.http
      .post('/v1/workflows')
      .set(org.auth('read_write'))
      .send({ name: `retry-${seq}-${Date.now()}`, channel: 'whatsapp', configuration: { nodes } });
    expect(created.status).toBe(201);
    const workflowId = created.body.data.id;
    await t.http.post(`/v1/workflows/${workflowId}/activate`).set(org.auth('read_write')).expect(200);
    const keyword = `kw${seq}x${process.pid}`;
    await createTrigger(t, org, workflowId, 'message', { keywords: [keyword] });
    return { workflowId, keyword };
  }

  const ANSWERING = [
    { id: 'greet', type: 'message', content: 'Let me check.', next: 'answer' },
    { id: 'answer', type: 'ai_response', knowledge_base: 'refunds', next: 'bye' },
    { id: 'bye', type: 'message', content: 'Anything else?' },
  ];

  const customer = () => `+1555${Date.now() % 1_000_000}${seq}`;
  const send = (customerId: string, message: string) =>
    t.http.post('/v1/messages').set(org.auth('read_write')).send({ channel: 'whatsapp', customer_id: customerId, message });
  const start = async (keyword: string, customerId = customer()): Promise<string> => {
    const res = await send(customerId, `${keyword} how can I get a refund?`);
    expect(res.status).toBe(202);
    return res.body.data.executions[0].workflow_execution_id;
  };
  const row = async (id: string) => (await db.query('SELECT * FROM workflow_executions WHERE id = $1', [id]))[0];
  const finished = (id: string) =>
    waitFor(`execution ${id} to finish`, async () => {
      const e = await row(id);
      return e.status !== 'running' ? e : undefined;
    }, 30_000);
  const steps = async (id: string) =>
    db.query('SELECT node_id, status, attempt, input, output FROM execution_steps WHERE execution_id = $1 ORDER BY started_at, created_at', [id]);
  const outbound = async (id: string): Promise<string[]> =>
    (await db.query(`SELECT content FROM messages WHERE execution_id = $1 AND direction = 'outbound' ORDER BY created_at, id`, [id])).map((r: { content: string }) => r.content);
  const events = async (id: string): Promise<{ type: string; data: Record<string, unknown> }[]> =>
    db.query(`SELECT type, data FROM outbox_events WHERE organization_id = $1 AND data->>'execution_id' = $2 ORDER BY id`, [org.id, id]);
  const retry = (workflowId: string, id: string, level: 'read_only' | 'read_write' = 'read_write') =>
    t.http.post(`/v1/workflows/${workflowId}/executions/${id}/retry`).set(org.auth(level));
  const cancel = (workflowId: string, id: string) => t.http.post(`/v1/workflows/${workflowId}/executions/${id}/cancel`).set(org.auth('read_write'));

  it('attempts a node failing transiently again: success on the 2nd attempt, and the step says so', async () => {
    const { workflowId, keyword } = await activeWorkflow(ANSWERING);
    ai.upcoming.push(503);
    const before = ai.requests.length;
    const id = await start(keyword);
    expect(await finished(id)).toMatchObject({ status: 'success', error: null });
    expect(ai.requests.length - before).toBe(2);
    expect((await steps(id)).map((s: { node_id: string; attempt: number }) => [s.node_id, s.attempt])).toEqual([['greet', 1], ['answer', 2], ['bye', 1]]);
    const detail = await t.http.get(`/v1/workflows/${workflowId}/executions/${id}`).set(org.auth('read_only'));
    expect(detail.body.data.steps.map((s: { attempt: number }) => s.attempt)).toEqual([1, 2, 1]);
    expect(detail.body.data.retry_of).toBeNull();
  });

  it('fails after 3 transient failures; a retry re-runs it from the failed step, linked, and completes', async () => {
    const { workflowId, keyword } = await activeWorkflow(ANSWERING);
    ai.status = 503;
    const before = ai.requests.length;
    let id: string;
    let failed;
    try {
      id = await start(keyword);
      failed = await finished(id);
    } finally {
      ai.status = 200;
    }
    expect(ai.requests.length - before).toBe(3);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'NODE_RETRIES_EXHAUSTED', node_id: 'answer' } });
    expect(failed.error.message).toBe('The node failed after 3 attempts: AI provider failed (HTTP 503)');
    expect(JSON.stringify(failed)).not.toContain('upstream-secret-detail');
    expect((await steps(id)).map((s: { node_id: string; status: string; attempt: number }) => [s.node_id, s.status, s.attempt])).toEqual([
      ['greet', 'completed', 1],
      ['answer', 'failed', 3],
    ]);
    expect(await outbound(id)).toEqual(['Let me check.']);
    expect((await events(id)).map((e) => e.type)).toEqual(expect.arrayContaining(['workflow.started', 'workflow.completed', 'workflow.failed']));
    const counts = async () => (await db.query('SELECT execution_count, success_count, failure_count FROM workflows WHERE id = $1', [workflowId]))[0];
    expect(await counts()).toEqual({ execution_count: 1, success_count: 0, failure_count: 1 });

    // A read_only key may not retry.
    expect((await retry(workflowId, id, 'read_only')).status).toBe(403);

    const res = await retry(workflowId, id);
    expect(res.status).toBe(201);
    const retried = res.body.data;
    expect(retried).toMatchObject({ workflow_id: workflowId, retry_of: id, workflow_version: failed.workflow_version, trigger_id: failed.trigger_id, customer_id: failed.customer_ref, input: failed.input });
    expect(retried.id).not.toBe(id);
    const done = await finished(retried.id);
    expect(done).toMatchObject({ status: 'success', error: null, retry_of: id });

    // From the failed step, with the context as it was before it (the customer's question).
    const retriedSteps = await steps(retried.id);
    expect(retriedSteps.map((s: { node_id: string; attempt: number }) => [s.node_id, s.attempt])).toEqual([['answer', 1], ['bye', 1]]);
    expect(retriedSteps[0].input.question).toBe(`${keyword} how can I get a refund?`);
    expect(await outbound(retried.id)).toEqual(['Refunds take 14 days.', 'Anything else?']);
    const started = (await events(retried.id)).find((e) => e.type === 'workflow.started');
    expect(started?.data).toMatchObject({ workflow_id: workflowId, execution_id: retried.id, retry_of: id, trigger_id: failed.trigger_id, channel: 'whatsapp' });
    expect((await events(retried.id)).map((e) => e.type)).toContain('workflow.completed');
    expect(await counts()).toEqual({ execution_count: 2, success_count: 1, failure_count: 1 });

    // Both are listed; the original is unchanged and says nothing of its retry.
    const list = await t.http.get(`/v1/workflows/${workflowId}/executions`).set(org.auth('read_only'));
    expect(list.body.pagination.total).toBe(2);
    expect(list.body.data.find((e: { id: string }) => e.id === retried.id).retry_of).toBe(id);
    expect((await t.http.get(`/v1/workflows/${workflowId}/executions/${id}`).set(org.auth('read_only'))).body.data).toMatchObject({ status: 'failed', retry_of: null });

    // At most one retry per execution; a succeeded one is not retryable.
    const again = await retry(workflowId, id);
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'EXECUTION_NOT_RETRYABLE' });
    expect(again.body.error.message).toContain(retried.id);
    const succeeded = await retry(workflowId, retried.id);
    expect(succeeded.status).toBe(409);
    expect(succeeded.body.error).toEqual({ code: 'EXECUTION_NOT_RETRYABLE', message: 'Only a failed execution can be retried (this one is success)' });
  });

  it('of concurrent retries of one failed execution, exactly one starts a retry; the others are 409 naming it', async () => {
    const { workflowId } = await activeWorkflow(ANSWERING);
    const [{ id }] = await db.query(
      `INSERT INTO workflow_executions (organization_id, workflow_id, workflow_version, status, input, state, started_at, completed_at, duration_ms, error)
       SELECT organization_id, id, 1, 'failed', '{}', '{}', now(), now(), 1, '{"code": "NODE_FAILED", "message": "x"}' FROM workflows WHERE id = $1
       RETURNING id`,
      [workflowId],
    );
    const answers = await Promise.all(Array.from({ length: 8 }, () => retry(workflowId, id)));
    const started = answers.filter((a) => a.status === 201);
    expect(started).toHaveLength(1);
    const refused = answers.filter((a) => a.status !== 201);
    expect(refused.map((a) => [a.status, a.body.error.code])).toEqual(Array.from({ length: 7 }, () => [409, 'EXECUTION_NOT_RETRYABLE']));
    for (const a of refused) expect(a.body.error.message).toContain(started[0]!.body.data.id);
    const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM workflow_executions WHERE retry_of = $1`, [id]);
    expect(n).toBe(1);
  });

  it('answers 404 EXECUTION_NOT_FOUND for unknown, malformed or another workflow\'s executions, 404 WORKFLOW_NOT_FOUND for an unknown workflow', async () => {
    const { workflowId, keyword } = await activeWorkflow(ANSWERING);
    const { workflowId: other } = await activeWorkflow(ANSWERING);
    const id = await start(keyword);
    await finished(id);
    for (const call of [retry, cancel]) {
      for (const [wf, ex] of [[workflowId, UNKNOWN_ID], [workflowId, 'not-a-uuid'], [other, id]]) {
        const res = await call(wf, ex);
        expect(res.status, `${wf} ${ex}`).toBe(404);
        expect(res.body.error.code).toBe('EXECUTION_NOT_FOUND');
      }
      const res = await call(UNKNOWN_ID, id);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('WORKFLOW_NOT_FOUND');
    }
    // Another organization sees nothing.
    const stranger = await createOrganization(t);
    const res = await t.http.post(`/v1/workflows/${workflowId}/executions/${id}/cancel`).set(stranger.auth('read_write'));
    expect(res.status).toBe(404);
  });

  it('cancels a waiting execution: failed with EXECUTION_CANCELLED, events emitted, and a later reply does not resume it', async () => {
    const { workflowId, keyword } = await activeWorkflow([
      { id: 'city', type: 'form', fields: [{ name: 'city', type: 'text', required: true, label: 'Which city?' }], next: 'thanks' },
      { id: 'thanks', type: 'message', content: 'Thanks!' },
    ]);
    const customerId = customer();
    const id = await start(keyword, customerId);
    await waitFor('the wait', async () => (await row(id)).waiting === true);

    const res = await cancel(workflowId, id);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id, status: 'failed', error: { code: 'EXECUTION_CANCELLED', node_id: 'city' }, output: { next_action: 'abort' } });
    expect(await row(id)).toMatchObject({ status: 'failed', waiting: false });
    const types = (await events(id)).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['workflow.started', 'workflow.completed', 'workflow.failed']));
    expect((await events(id)).find((e) => e.type === 'workflow.failed')?.data.error).toMatchObject({ code: 'EXECUTION_CANCELLED' });
    const [firing] = await db.query('SELECT status, error FROM trigger_executions WHERE workflow_execution_id = $1', [id]);
    expect(firing).toMatchObject({ status: 'failed', error: { code: 'EXECUTION_CANCELLED' } });

    // The customer's answer comes too late: it is not kept for the cancelled execution.
    const reply = await send(customerId, 'Lisbon');
    expect(reply.status).toBe(202);
    expect(reply.body.data.executions).toEqual([]);
    const [stored] = await db.query(`SELECT execution_id FROM messages WHERE id = $1`, [reply.body.data.message_id]);
    expect(stored.execution_id).toBeNull();
    // A run job for it (a duplicate, the expiry) changes nothing.
    const engine = t.app.get(ExecutionEngine);
    expect(await engine.run(id)).toEqual({ status: 'failed' });
    expect(await engine.expire(id)).toEqual({ status: 'failed' });
    expect(await outbound(id)).toEqual(['Which city?']);
    expect((await steps(id)).length).toBe(0);

    // Already ended: 409.
    const twice = await cancel(workflowId, id);
    expect(twice.status).toBe(409);
    expect(twice.body.error).toEqual({ code: 'EXECUTION_ALREADY_FINISHED', message: 'The execution has already ended (status failed)' });

    // A cancelled execution is failed, so it can be retried: the form asks again from its first field.
    const retried = await retry(workflowId, id);
    expect(retried.status).toBe(201);
    await waitFor('the retry to wait', async () => (await row(retried.body.data.id)).waiting === true);
    expect(await outbound(retried.body.data.id)).toEqual(['Which city?']);
    await send(customerId, 'Porto');
    expect(await finished(retried.body.data.id)).toMatchObject({ status: 'success' });
    expect(await outbound(retried.body.data.id)).toEqual(['Which city?', 'Thanks!']);
  });

  it('a run in progress when the execution is cancelled does not commit over it', async () => {
    const { workflowId, keyword } = await activeWorkflow(ANSWERING);
    let release!: () => void;
    ai.hold = new Promise<void>((resolve) => (release = resolve));
    const before = ai.requests.length;
    let id: string;
    try {
      id = await start(keyword);
      // The run has sent nothing yet (its writes commit at its end) and waits for the provider.
      await waitFor('the provider request', async () => ai.requests.length > before);
      const res = await cancel(workflowId, id);
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ status: 'failed', error: { code: 'EXECUTION_CANCELLED' } });
    } finally {
      ai.hold = undefined;
      release();
    }
    // The run's commit misses (the row changed), it reads the execution again and stops: its job ends.
    const queue = t.app.get<Queue>(getQueueToken(EXECUTIONS_QUEUE));
    await waitFor('the held run to end', async () => (await queue.getActiveCount()) === 0 && (await queue.getWaitingCount()) === 0);
    expect(await row(id)).toMatchObject({ status: 'failed', error: { code: 'EXECUTION_CANCELLED' } });
    expect(await outbound(id)).toEqual([]);
    expect(await steps(id)).toEqual([]);
    expect((await events(id)).filter((e) => e.type === 'workflow.completed')).toHaveLength(1);
  });

  it('cancel of a finished execution is 409 EXECUTION_ALREADY_FINISHED; retry of a running one is 409 EXECUTION_NOT_RETRYABLE', async () => {
    const { workflowId, keyword } = await activeWorkflow(ANSWERING);
    const id = await start(keyword);
    await finished(id);
    const res = await cancel(workflowId, id);
    expect(res.status).toBe(409);
    expect(res.body.error).toEqual({ code: 'EXECUTION_ALREADY_FINISHED', message: 'The execution has already ended (status success)' });

    const { workflowId: waitingFlow, keyword: waitingKeyword } = await activeWorkflow([
      { id: 'city', type: 'form', fields: [{ name: 'city', type: 'text', required: true }] },
    ]);
    const waiting = await start(waitingKeyword);
    const running = await retry(waitingFlow, waiting);
    expect(running.status).toBe(409);
    expect(running.body.error).toEqual({ code: 'EXECUTION_NOT_RETRYABLE', message: 'Only a failed execution can be retried (this one is running)' });
    await cancel(waitingFlow, waiting).expect(200);
  });
});
