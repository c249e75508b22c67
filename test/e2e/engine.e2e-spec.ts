import { createHmac } from 'node:crypto';
import { getQueueToken } from '@nestjs/bull';
import type { Job, Queue } from 'bull';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ExecutionEngine } from '../../src/executions/execution-engine.service.js';
import { SchedulesProcessor } from '../../src/triggers/schedules.processor.js';
import { SCHEDULES_QUEUE } from '../../src/triggers/triggers.queue.js';
import { createTrigger } from '../factories/triggers.js';
import { createOrganization, RATE_LIMITS_OUT_OF_REACH, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { expectJourneyRollupsMatchRows } from '../utils/journey-rollups.js';
import { expectRollupsMatchRows } from '../utils/rollups.js';
import { waitFor } from '../utils/wait-for.js';
import { subscribeToEvents } from '../factories/webhooks.js';

type Node = Record<string, unknown>;

describe('execution engine: triggers firing, conversations, steps', () => {
  let t: TestApp;
  let org: TestOrganization;
  let db: DataSource;
  let seq = 0;

  beforeAll(async () => {
    // Limits on (an api trigger's rate_limit and the webhook limits are tested here; RATE_LIMITS_ENABLED=false
    // turns them off too), the request limits out of reach, under a prefix of its own so that no other
    // file's per-address counts reach this one.
    t = await startTestApp({ ...RATE_LIMITS_OUT_OF_REACH, REDIS_KEY_PREFIX: `${inject('redisKeyPrefix')}:engine` });
    org = await createOrganization(t);
    await subscribeToEvents(t, org);
    db = t.app.get(DataSource);
    const kb = await t.http
      .put('/v1/knowledge-bases/faq')
      .set(org.auth('read_write'))
      .send({
        entries: [
          { question: 'How long does shipping take?', answer: 'Shipping takes 3 to 5 business days.' },
          { question: 'How can I return an item?', answer: 'You can return any item within 30 days.' },
          { question: 'What are your opening hours?', answer: 'We are open from 9am to 5pm, Monday to Friday.' },
        ],
      });
    expect([200, 201]).toContain(kb.status);
  });
  afterAll(() => t?.close());

  async function activeWorkflow(nodes: Node[]): Promise<string> {
    seq += 1;
    const created = await t.http
      .post('/v1/workflows')
      .set(org.auth('read_write'))
      .send({ name: `engine-${seq}-${Date.now()}`, channel: 'whatsapp', configuration: { nodes } });
    expect(created.status).toBe(201);
    expect((await t.http.post(`/v1/workflows/${created.body.data.id}/activate`).set(org.auth('read_write'))).status).toBe(200);
    return created.body.data.id;
  }

  const send = (customer: string, message: string, extra: Record<string, unknown> = {}) =>
    t.http.post('/v1/messages').set(org.auth('read_write')).send({ channel: 'whatsapp', customer_id: customer, message, ...extra });

  const execution = async (id: string) => (await db.query('SELECT * FROM workflow_executions WHERE id = $1', [id]))[0];
  const outbound = async (id: string): Promise<string[]> =>
    (await db.query(`SELECT content FROM messages WHERE execution_id = $1 AND direction = 'outbound' ORDER BY created_at, id`, [id])).map(
      (r: { content: string }) => r.content,
    );
  const waiting = (id: string) => waitFor(`execution ${id} to wait`, async () => (await execution(id)).waiting === true);
  const finished = (id: string) =>
    waitFor(`execution ${id} to finish`, async () => {
      const e = await execution(id);
      return e.status !== 'running' ? e : undefined;
    });

  it('runs message → ai_response → form over several inbound messages, re-asking a wrong answer', async () => {
    const workflowId = await activeWorkflow([
      { id: 'welcome', type: 'message', content: 'Hi! Let me look that up.', next: 'answer' },
      { id: 'answer', type: 'ai_response', knowledge_base: 'faq', next: 'contact' },
      {
        id: 'contact',
        type: 'form',
        fields: [
          { name: 'email', type: 'email', required: true, label: 'What is your email?' },
          { name: 'satisfaction', type: 'rating', required: true, label: 'How would you rate us from 1 to 5?' },
        ],
      },
    ]);
    const trigger = await createTrigger(t, org, workflowId, 'message', { keywords: ['shipping'] });
    const customer = `+1555${Date.now() % 1_000_000}`;

    const first = await send(customer, 'How long does shipping take to Spain?', { language: 'en' });
    expect(first.status).toBe(202);
    expect(first.body.data.message_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.body.data.executions).toHaveLength(1);
    const fired = first.body.data.executions[0];
    expect(fired).toMatchObject({ trigger_id: trigger.id, trigger_execution_id: expect.any(String), workflow_execution_id: expect.any(String) });
    const id = fired.workflow_execution_id;

    await waiting(id);
    expect(await outbound(id)).toEqual(['Hi! Let me look that up.', 'Shipping takes 3 to 5 business days.', 'What is your email?']);

    // A wrong answer is asked again; the execution keeps waiting.
    expect((await send(customer, 'my email is secret')).body.data.executions).toEqual([
      { trigger_id: trigger.id, trigger_execution_id: fired.trigger_execution_id, workflow_execution_id: id, status: 'running' },
    ]);
    await waitFor('the re-ask', async () => (await outbound(id)).length === 4);
    expect((await outbound(id))[3]).toMatch(/email address/);
    expect((await execution(id)).status).toBe('running');

    await send(customer, 'Ada@Example.com');
    await waitFor('the second question', async () => (await outbound(id)).length === 5);
    expect((await outbound(id))[4]).toBe('How would you rate us from 1 to 5?');
    await send(customer, '5');
    const done = await finished(id);
    expect(done.status).toBe('success');
    expect(done.output).toEqual({ response: 'How would you rate us from 1 to 5?', next_action: 'end' });
    expect(done.duration_ms).toBeGreaterThanOrEqual(0);

    const steps = await db.query('SELECT * FROM execution_steps WHERE execution_id = $1 ORDER BY started_at, created_at', [id]);
    expect(steps.map((s: { node_id: string }) => s.node_id)).toEqual(['welcome', 'answer', 'contact']);
    expect(steps.every((s: { status: string }) => s.status === 'completed')).toBe(true);
    expect(steps[0].output).toMatchObject({ message_sent: true, content: 'Hi! Let me look that up.' });
    expect(steps[1].input).toEqual({ question: 'How long does shipping take to Spain?', knowledge_base: 'faq' });
    expect(steps[1].output.response).toBe('Shipping takes 3 to 5 business days.');
    expect(steps[1].output.confidence).toBeGreaterThan(0);
    expect(steps[1].output.confidence).toBeLessThanOrEqual(1);
    expect(steps[2].output).toEqual({ answers: { email: 'ada@example.com', satisfaction: 5 } });
    for (const s of steps) expect(s.duration_ms).toBe(new Date(s.completed_at).getTime() - new Date(s.started_at).getTime());

    const [customerRow] = await db.query('SELECT * FROM customers WHERE organization_id = $1 AND external_id = $2', [org.id, customer]);
    expect(customerRow.attributes).toEqual({ email: 'ada@example.com', satisfaction: 5 });
    const inbound = await db.query(`SELECT count(*)::int AS n FROM messages WHERE customer_id = $1 AND direction = 'inbound'`, [customerRow.id]);
    expect(inbound[0].n).toBe(4);

    const [te] = await db.query('SELECT * FROM trigger_executions WHERE id = $1', [fired.trigger_execution_id]);
    expect(te).toMatchObject({ status: 'success', workflow_execution_id: id, error: null });
    expect(te.input).toMatchObject({ message: 'How long does shipping take to Spain?', customer_id: customer, channel: 'whatsapp', metadata: { source: 'message' } });

    const workflow = (await t.http.get(`/v1/workflows/${workflowId}`).set(org.auth('read_only'))).body.data;
    expect(workflow).toMatchObject({ execution_count: 1, success_rate: 1 });
    const triggerNow = (await t.http.get(`/v1/triggers/${trigger.id}`).set(org.auth('read_only'))).body.data;
    expect(triggerNow.execution_count).toBe(1);
    expect(triggerNow.last_triggered).not.toBeNull();

    const events = (await db.query(`SELECT type, data FROM outbox_events WHERE organization_id = $1 AND (data->>'execution_id' = $2 OR data->>'workflow_execution_id' = $2 OR data->>'customer_id' = $3)`, [org.id, id, customer])) as { type: string; data: Record<string, unknown> }[];
    const types = events.map((e) => e.type);
    for (const type of ['customer.created', 'message.received', 'trigger.activated', 'workflow.started', 'message.sent', 'customer.updated', 'workflow.completed']) {
      expect(types).toContain(type);
    }
    expect(types).not.toContain('workflow.failed');
    expect(types.filter((x) => x === 'message.sent')).toHaveLength(5);
    expect(types.filter((x) => x === 'message.received')).toHaveLength(4);
    expect(types.filter((x) => x === 'customer.created')).toHaveLength(1);
    expect(events.find((e) => e.type === 'workflow.completed')?.data).toMatchObject({
      workflow_id: workflowId, execution_id: id, status: 'success', customer_id: customer, channel: 'whatsapp', duration_ms: done.duration_ms,
    });
  });

  it("counts a workflow's firings and finished runs without moving its updated_at (only a client's change does)", async () => {
    const id = await activeWorkflow([{ id: 'hello', type: 'message', content: 'Hello there' }]);
    await createTrigger(t, org, id, 'message', { keywords: ['updatedat'] });
    const before = (await t.http.get(`/v1/workflows/${id}`).set(org.auth('read_only'))).body.data;
    const fired = await send('updated-at-1', 'updatedat please');
    expect(fired.status).toBe(202);
    await finished(fired.body.data.executions[0].workflow_execution_id);
    const after = (await t.http.get(`/v1/workflows/${id}`).set(org.auth('read_only'))).body.data;
    expect([after.execution_count, after.success_rate]).toEqual([1, 1]);
    expect(after.updated_at).toBe(before.updated_at);
  });

  it('keeps running the workflow version it started with when the workflow is edited meanwhile', async () => {
    const workflowId = await activeWorkflow([
      { id: 'ask', type: 'form', fields: [{ name: 'city', type: 'text', required: true, label: 'Which city?' }], next: 'thanks' },
      { id: 'thanks', type: 'message', content: 'Thanks (version 1)' },
    ]);
    await createTrigger(t, org, workflowId, 'message', { keywords: ['pin-version'] });
    const customer = `pin-${Date.now()}`;
    const id = (await send(customer, 'pin-version')).body.data.executions[0].workflow_execution_id;
    await waiting(id);
    const edited = await t.http
      .put(`/v1/workflows/${workflowId}`)
      .set(org.auth('read_write'))
      .send({ configuration: { nodes: [{ id: 'ask', type: 'form', fields: [{ name: 'city', type: 'text', required: true }], next: 'bye' }, { id: 'bye', type: 'message', content: 'Version 2' }] } });
    expect(edited.body.data.version).toBe(2);
    await send(customer, 'Lisbon');
    const done = await finished(id);
    expect(done).toMatchObject({ status: 'success', workflow_version: 1 });
    expect(await outbound(id)).toEqual(['Which city?', 'Thanks (version 1)']);
    // A new conversation starts on version 2.
    const next = (await send(`${customer}-2`, 'pin-version')).body.data.executions[0].workflow_execution_id;
    await waiting(next);
    expect((await execution(next)).workflow_version).toBe(2);
  });

  it('matches keywords honouring case_sensitive, exact_match, language and channel; unmatched messages start nothing', async () => {
    const workflowId = await activeWorkflow([{ id: 'm', type: 'message', content: 'matched' }]);
    const exact = await createTrigger(t, org, workflowId, 'message', { keywords: ['START'], exact_match: true, case_sensitive: true });
    const spanish = await createTrigger(t, org, workflowId, 'message', { keywords: ['hola'], language: 'es' });
    const insta = await createTrigger(t, org, workflowId, 'message', { keywords: ['promo'], channel: 'instagram' });
    const firedBy = async (message: string, extra: Record<string, unknown> = {}) =>
      ((await send(`kw-${++seq}-${Date.now()}`, message, extra)).body.data.executions as { trigger_id: string }[]).map((e) => e.trigger_id);

    expect(await firedBy('START')).toEqual([exact.id]);
    expect(await firedBy('start')).toEqual([]);
    expect(await firedBy('START now')).toEqual([]);
    expect(await firedBy('hola amigos', { language: 'es-MX' })).toEqual([spanish.id]);
    expect(await firedBy('hola amigos', { language: 'en' })).toEqual([]);
    expect(await firedBy('any promo today?')).toEqual([]);
    expect(await firedBy('any promo today?', { channel: 'instagram' })).toEqual([insta.id]);
    expect(await firedBy('nothing to see')).toEqual([]);
  });

  it("matches concurrent messages, sharing a statement, against their own organization's active message triggers only, oldest first", async () => {
    const other = await createOrganization(t);
    const workflowOf = async (owner: TestOrganization) => {
      const created = await t.http
        .post('/v1/workflows')
        .set(owner.auth('read_write'))
        .send({ name: `batch-${++seq}`, channel: 'whatsapp', configuration: { nodes: [{ id: 'm', type: 'message', content: 'hi' }] } });
      await t.http.post(`/v1/workflows/${created.body.data.id}/activate`).set(owner.auth('read_write')).expect(200);
      return created.body.data.id as string;
    };
    const oursWorkflow = await workflowOf(org);
    const first = await createTrigger(t, org, oursWorkflow, 'message', { keywords: ['batchword'] });
    const second = await createTrigger(t, org, oursWorkflow, 'message', { keywords: ['batchword'] });
    const paused = await createTrigger(t, org, oursWorkflow, 'message', { keywords: ['batchword'] });
    await t.http.post(`/v1/triggers/${paused.id}/pause`).set(org.auth('read_write')).expect(200);
    const deactivated = await createTrigger(t, org, oursWorkflow, 'message', { keywords: ['batchword'] });
    await t.http.post(`/v1/triggers/${deactivated.id}/deactivate`).set(org.auth('read_write')).expect(200);
    const theirs = await createTrigger(t, other, await workflowOf(other), 'message', { keywords: ['batchword'] });

    const sendAs = (owner: TestOrganization, i: number) =>
      t.http.post('/v1/messages').set(owner.auth('read_write')).send({ channel: 'whatsapp', customer_id: `batch-${seq}-${i}`, message: 'batchword please' });
    const responses = await Promise.all(Array.from({ length: 24 }, (_, i) => sendAs(i % 2 === 0 ? org : other, i)));
    responses.forEach((res, i) => {
      expect(res.status).toBe(202);
      const fired = (res.body.data.executions as { trigger_id: string; status: string }[]).map((e) => [e.trigger_id, e.status]);
      expect(fired).toEqual(i % 2 === 0 ? [[first.id, 'running'], [second.id, 'running']] : [[theirs.id, 'running']]);
    });
  });

  it('records a failed trigger execution when the trigger or the workflow is not active', async () => {
    const workflowId = await activeWorkflow([{ id: 'm', type: 'message', content: 'never sent' }]);
    const paused = await createTrigger(t, org, workflowId, 'api', { rate_limit: 10 });
    expect((await t.http.post(`/v1/triggers/${paused.id}/pause`).set(org.auth('read_write'))).status).toBe(200);
    const res = await t.http.post(`/v1/triggers/${paused.id}/fire`).set(org.auth('read_write')).send({ customer_id: 'c-paused', message: 'x' });
    expect(res.status).toBe(202);
    expect(res.body.data).toMatchObject({ status: 'failed', workflow_execution_id: null, error: { code: 'TRIGGER_INACTIVE' } });
    const [te] = await db.query('SELECT status, error FROM trigger_executions WHERE id = $1', [res.body.data.trigger_execution_id]);
    expect(te).toMatchObject({ status: 'failed', error: { code: 'TRIGGER_INACTIVE' } });

    const active = await createTrigger(t, org, workflowId, 'api', { rate_limit: 10 });
    expect((await t.http.post(`/v1/workflows/${workflowId}/deactivate`).set(org.auth('read_write'))).status).toBe(200);
    const refused = await t.http.post(`/v1/triggers/${active.id}/fire`).set(org.auth('read_write')).send({});
    expect(refused.body.data).toMatchObject({ status: 'failed', error: { code: 'WORKFLOW_INACTIVE' } });
    const count = await db.query('SELECT count(*)::int AS n FROM workflow_executions WHERE workflow_id = $1', [workflowId]);
    expect(count[0].n).toBe(0);
  });

  it('fires api triggers within their hourly rate_limit, then answers 429 with retry_after', async () => {
    const workflowId = await activeWorkflow([{ id: 'm', type: 'message', content: 'fired by api' }]);
    const trigger = await createTrigger(t, org, workflowId, 'api', { rate_limit: 2 });
    const fire = () => t.http.post(`/v1/triggers/${trigger.id}/fire`).set(org.auth('read_write')).send({ customer_id: 'api-customer', data: { order: 42 } });
    const a = await fire();
    expect(a.status).toBe(202);
    expect(a.headers['x-ratelimit-limit']).toBe('2');
    expect(a.headers['x-ratelimit-remaining']).toBe('1');
    expect((await fire()).status).toBe(202);
    const limited = await fire();
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(limited.body.error.retry_after).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBe(limited.body.error.retry_after);
    const done = await finished(a.body.data.workflow_execution_id);
    expect(done.status).toBe('success');
    expect(done.input).toEqual({ message: null, data: { order: 42 } });
    expect(await outbound(done.id)).toEqual(['fired by api']);

    const read = await t.http.post(`/v1/triggers/${trigger.id}/fire`).set(org.auth('read_only')).send({});
    expect(read.status).toBe(403);
    const other = await createOrganization(t);
    expect((await t.http.post(`/v1/triggers/${trigger.id}/fire`).set(other.auth()).send({})).body.error.code).toBe('TRIGGER_NOT_FOUND');
  });

  it('fires webhook triggers only with a valid signature and the configured method and headers', async () => {
    const workflowId = await activeWorkflow([{ id: 'm', type: 'message', content: 'hooked' }]);
    const secret = 'a-webhook-secret-of-some-length';
    const trigger = await createTrigger(t, org, workflowId, 'webhook', { secret, method: 'POST', headers: { 'X-Source': 'crm' } });
    const url = `/v1/hooks/${trigger.id}`;
    expect(trigger.configuration.url).toMatch(new RegExp(`/v1/hooks/${trigger.id}$`));
    const body = JSON.stringify({ customer_id: 'hook-customer', message: 'order shipped', order: 7 });
    const sign = (raw: string) => createHmac('sha256', secret).update(raw).digest('hex');
    const post = (headers: Record<string, string>, raw = body) => t.http.post(url).set({ 'Content-Type': 'application/json', ...headers }).send(raw);

    const good = await post({ 'X-Service-Signature': sign(body), 'X-Source': 'crm', 'User-Agent': 'crm-bot/1.0' });
    expect(good.status).toBe(202);
    expect(good.body.data).toMatchObject({ trigger_id: trigger.id, status: 'running' });
    const missing = await post({ 'X-Source': 'crm' });
    expect(missing.status).toBe(401);
    expect(missing.body.error.code).toBe('INVALID_SIGNATURE');
    const wrong = await post({ 'X-Service-Signature': sign(`${body} `), 'X-Source': 'crm' });
    expect(wrong.status).toBe(401);
    const tampered = await post({ 'X-Service-Signature': sign(body), 'X-Source': 'crm' }, body.replace('7', '8'));
    expect(tampered.status).toBe(401);
    const noHeader = await post({ 'X-Service-Signature': sign(body) });
    expect(noHeader.status).toBe(401);
    const put = await t.http.put(url).set({ 'Content-Type': 'application/json', 'X-Service-Signature': sign(body), 'X-Source': 'crm' }).send(body);
    expect(put.status).toBe(405);
    expect((await t.http.post('/v1/hooks/00000000-0000-4000-8000-000000000000').send({})).body.error.code).toBe('TRIGGER_NOT_FOUND');

    const done = await finished(good.body.data.workflow_execution_id);
    expect(done).toMatchObject({ status: 'success', customer_ref: 'hook-customer', input: { message: 'order shipped', data: { customer_id: 'hook-customer', message: 'order shipped', order: 7 } } });
    const [te] = await db.query('SELECT input FROM trigger_executions WHERE id = $1', [good.body.data.trigger_execution_id]);
    expect(te.input.metadata).toMatchObject({ user_agent: 'crm-bot/1.0', source: 'webhook' });
    const executions = await db.query('SELECT count(*)::int AS n FROM trigger_executions WHERE trigger_id = $1', [trigger.id]);
    expect(executions[0].n).toBe(1);
  });

  it('limits each webhook trigger to 100 requests a minute', async () => {
    const workflowId = await activeWorkflow([{ id: 'm', type: 'message', content: 'x' }]);
    const trigger = await createTrigger(t, org, workflowId, 'webhook', {});
    // Only authenticated requests count (a wrong method or signature does not): use the window up
    // with accepted ones, on a paused trigger so that none starts an execution.
    expect((await t.http.post(`/v1/triggers/${trigger.id}/pause`).set(org.auth('read_write'))).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await t.http.get(`/v1/hooks/${trigger.id}`)).status).toBe(405);
    for (let i = 0; i < 100; i++) expect((await t.http.post(`/v1/hooks/${trigger.id}`).send({})).status).toBe(202);
    const limited = await t.http.post(`/v1/hooks/${trigger.id}`).send({});
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(limited.headers['x-ratelimit-limit']).toBe('100');
  });

  it('fires a schedule trigger on its repeatable job tick', async () => {
    const workflowId = await activeWorkflow([{ id: 'm', type: 'message', content: 'scheduled' }]);
    const trigger = await createTrigger(t, org, workflowId, 'schedule', { cron_expression: '* * * * *', timezone: 'Europe/Madrid' });
    // Its next tick as Bull holds it: the job carries the schedule it was made from.
    const queue = t.app.get<Queue>(getQueueToken(SCHEDULES_QUEUE));
    const [tick] = (await queue.getDelayed()).filter((j) => j.data?.triggerId === trigger.id);
    await t.app.get(SchedulesProcessor).tick(tick as Job<never>);
    const [te] = await waitFor('the schedule firing', async () => {
      const rows = await db.query('SELECT * FROM trigger_executions WHERE trigger_id = $1', [trigger.id]);
      return rows.length > 0 ? rows : undefined;
    });
    expect(te.input.metadata.source).toBe('schedule');
    const done = await finished(te.workflow_execution_id);
    // No customer to send to: a message node fails and says why.
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({ code: 'NO_RECIPIENT', node_id: 'm' });
  });

  describe('a reply to a running execution', () => {
    // An app with no workers, on queues of its own: what it accepts waits until the test runs it.
    let api: TestApp;
    beforeAll(async () => {
      api = await startTestApp({ RATE_LIMITS_ENABLED: 'false', APP_ROLE: 'api', REDIS_KEY_PREFIX: `${t.config.redisKeyPrefix}:noworkers` });
    });
    afterAll(() => api?.close());
    const sendVia = (app: TestApp, customer: string, message: string) =>
      app.http.post('/v1/messages').set(org.auth('read_write')).send({ channel: 'whatsapp', customer_id: customer, message });
    const survey = async () => {
      const id = await activeWorkflow([
        { id: 'hello', type: 'message', content: 'Hello', next: 'ask' },
        { id: 'ask', type: 'form', fields: [{ name: 'city', type: 'text', required: true }] },
      ]);
      const keyword = `reply${seq}x${Date.now()}`;
      await createTrigger(t, org, id, 'message', { keywords: [keyword] });
      return keyword;
    };

    it('is kept for it when it arrives before the execution waits, not matched against triggers', async () => {
      const keyword = await survey();
      const customer = `early-${Date.now()}`;
      const first = await sendVia(api, customer, `${keyword} please`);
      const id = first.body.data.executions[0].workflow_execution_id;
      expect((await execution(id)).waiting).toBe(false); // nothing has run it yet

      // Even a message matching the trigger's keyword stays with the running execution.
      const early = await sendVia(api, customer, `${keyword} Lisbon`);
      expect(early.status).toBe(202);
      expect(early.body.data.executions).toEqual([expect.objectContaining({ workflow_execution_id: id, status: 'running' })]);
      const [{ n }] = await db.query('SELECT count(*)::int AS n FROM workflow_executions WHERE customer_ref = $1', [customer]);
      expect(n).toBe(1);

      // The run asks the question and reads the reply that was already there.
      expect(await t.app.get(ExecutionEngine).run(id)).toEqual({ status: 'success' });
      const [step] = await db.query(`SELECT output FROM execution_steps WHERE execution_id = $1 AND node_id = 'ask'`, [id]);
      expect(step.output).toEqual({ answers: { city: `${keyword} Lisbon` } });
      const [{ unread }] = await db.query(`SELECT count(*)::int AS unread FROM messages WHERE execution_id = $1 AND direction = 'inbound' AND consumed_at IS NULL`, [id]);
      expect(unread).toBe(0);
    });

    it('kept before the wait expires prevents the expiry; after it, it is matched against triggers instead', async () => {
      const keyword = await survey();
      const engine = t.app.get(ExecutionEngine);
      const customer = `race-${Date.now()}`;
      const first = await sendVia(api, customer, `${keyword} please`);
      const id = first.body.data.executions[0].workflow_execution_id;
      expect(await engine.run(id)).toMatchObject({ status: 'running' });
      expect((await execution(id)).waiting).toBe(true);
      await db.query(`UPDATE workflow_executions SET wait_expires_at = now() - interval '1 second' WHERE id = $1`, [id]);

      // The reply arrives as the deadline passes, before the expiry job runs: it wins.
      const reply = await sendVia(api, customer, 'Porto');
      expect(reply.body.data.executions).toEqual([expect.objectContaining({ workflow_execution_id: id, status: 'running' })]);
      expect(await engine.expire(id)).toEqual({ status: 'running' });
      expect(await engine.run(id)).toEqual({ status: 'success' });

      // Another conversation expires first: the late reply starts what it matches instead.
      const second = await sendVia(api, customer, `${keyword} again`);
      const secondId = second.body.data.executions[0].workflow_execution_id;
      expect(secondId).not.toBe(id);
      await engine.run(secondId);
      await db.query(`UPDATE workflow_executions SET wait_expires_at = now() - interval '1 second' WHERE id = $1`, [secondId]);
      expect(await engine.expire(secondId)).toEqual({ status: 'failed' });
      const late = await sendVia(api, customer, `${keyword} too late`);
      expect(late.body.data.executions).toHaveLength(1);
      expect(late.body.data.executions[0].workflow_execution_id).not.toBe(secondId);
    });
  });

  it('fails a waiting conversation when its wait expires', async () => {
    // Its own queues (a sub-prefix), so that only this app, with the short timeout, runs these executions.
    const short = await startTestApp({ RATE_LIMITS_ENABLED: 'false', CONVERSATION_TIMEOUT: '1s', REDIS_KEY_PREFIX: `${t.config.redisKeyPrefix}:short` });
    try {
      const created = await short.http.post('/v1/workflows').set(org.auth('read_write')).send({
        name: `expiring-${Date.now()}`,
        channel: 'whatsapp',
        configuration: { nodes: [{ id: 'ask', type: 'form', fields: [{ name: 'city', type: 'text', required: true }] }] },
      });
      await short.http.post(`/v1/workflows/${created.body.data.id}/activate`).set(org.auth('read_write'));
      const trigger = await createTrigger(short, org, created.body.data.id, 'message', { keywords: ['expire-me'] });
      const res = await short.http.post('/v1/messages').set(org.auth('read_write')).send({ channel: 'whatsapp', customer_id: `exp-${Date.now()}`, message: 'expire-me' });
      const id = res.body.data.executions[0].workflow_execution_id;
      const done = await finished(id);
      expect(done.status).toBe('failed');
      expect(done.error).toMatchObject({ code: 'CONVERSATION_TIMEOUT', node_id: 'ask' });
      expect(done.waiting).toBe(false);
      const [te] = await db.query('SELECT status, error FROM trigger_executions WHERE trigger_id = $1', [trigger.id]);
      expect(te).toMatchObject({ status: 'failed', error: { code: 'CONVERSATION_TIMEOUT' } });
      const failedEvents = await db.query(`SELECT count(*)::int AS n FROM outbox_events WHERE type = 'workflow.failed' AND data->>'execution_id' = $1`, [id]);
      expect(failedEvents[0].n).toBe(1);
      // Its journey: it reached the form (waiting there, no step) and dropped off there for lack of a reply.
      const journey = await t.http.get('/v1/analytics/customers/journey').query({ journey_type: created.body.data.id }).set(org.auth('read_only'));
      expect(journey.body.data.journey).toMatchObject({
        total_journeys: 1,
        completed_journeys: 0,
        journey_steps: [{ step: 1, name: 'ask', customers: 1, completion_rate: 0, average_duration_ms: null }],
        drop_off_points: [{ step: 1, name: 'ask', drop_off_count: 1, drop_off_rate: 1, common_reasons: ['no reply before the conversation expired'] }],
      });
    } finally {
      await short.close();
    }
  });

  // Last: every execution, firing, refusal, reply and timeout above went through the engine's statements.
  it('keeps the hourly rollups equal to the rows its statements wrote', async () => {
    await expectRollupsMatchRows(db, org.id);
  });

  it('keeps the journey rollups equal to the rows its statements wrote', async () => {
    const counted = await expectJourneyRollupsMatchRows(db, org.id);
    expect(counted.executions).toBeGreaterThan(10);
    expect(counted.steps).toBeGreaterThan(10);
  });

  it('writes an event only when an active webhook of the organization subscribes to its type', async () => {
    const quiet = await createOrganization(t);
    const create = await t.http
      .post('/v1/workflows')
      .set(quiet.auth('read_write'))
      .send({ name: `events-${Date.now()}`, channel: 'whatsapp', configuration: { nodes: [{ id: 'hi', type: 'message', content: 'Hi' }] } });
    expect(create.status).toBe(201);
    expect((await t.http.post(`/v1/workflows/${create.body.data.id}/activate`).set(quiet.auth('read_write'))).status).toBe(200);
    const keyword = `quiet${Date.now()}`;
    await createTrigger(t, quiet, create.body.data.id, 'message', { keywords: [keyword] });
    const run = async (customer: string) => {
      const res = await t.http.post('/v1/messages').set(quiet.auth('read_write')).send({ channel: 'whatsapp', customer_id: customer, message: keyword });
      expect(res.status).toBe(202);
      return finished(res.body.data.executions[0].workflow_execution_id as string);
    };
    const typesOf = async (customer: string) =>
      ((await db.query(`SELECT type FROM outbox_events WHERE organization_id = $1 AND data->>'customer_id' = $2 ORDER BY id`, [quiet.id, customer])) as { type: string }[]).map(
        (r) => r.type,
      );

    // No webhook, then an inactive one for every type: a whole run writes no event.
    expect((await run('quiet-1')).status).toBe('success');
    expect(await typesOf('quiet-1')).toEqual([]);
    const inactive = await subscribeToEvents(t, quiet);
    await db.query('UPDATE webhooks SET active = false WHERE id = $1', [inactive]);
    expect((await run('quiet-2')).status).toBe('success');
    expect(await typesOf('quiet-2')).toEqual([]);

    // A group and an exact type: those events only, from then on.
    await subscribeToEvents(t, quiet, ['workflow.*', 'customer.created']);
    expect((await run('quiet-3')).status).toBe('success');
    expect(await typesOf('quiet-3')).toEqual(['customer.created', 'workflow.started', 'workflow.completed']);
    // Another organization's subscription records nothing for this one (org subscribes to everything).
    expect(await typesOf('quiet-1')).toEqual([]);
  });

  it('keys every row it wrote to the execution tables with a time-ordered UUID (version 7)', async () => {
    const versions: { t: string; v: string; n: number }[] = await db.query(
      `SELECT t, v, count(*)::int AS n FROM (
         SELECT 'executions' AS t, substr(id::text, 15, 1) AS v FROM workflow_executions WHERE organization_id = $1
         UNION ALL SELECT 'trigger executions', substr(id::text, 15, 1) FROM trigger_executions WHERE organization_id = $1
         UNION ALL SELECT 'messages', substr(id::text, 15, 1) FROM messages WHERE organization_id = $1
         UNION ALL SELECT 'steps', substr(s.id::text, 15, 1) FROM execution_steps s JOIN workflow_executions e ON e.id = s.execution_id WHERE e.organization_id = $1
         UNION ALL SELECT 'events', substr(id::text, 15, 1) FROM outbox_events WHERE organization_id = $1
       ) x GROUP BY t, v ORDER BY t, v`,
      [org.id],
    );
    expect(versions.map((r) => [r.t, r.v])).toEqual([['events', '7'], ['executions', '7'], ['messages', '7'], ['steps', '7'], ['trigger executions', '7']]);
  });
});
