import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  insertCustomer,
  insertMessage,
  insertStep,
  insertTrigger,
  insertTriggerExecution,
  insertWorkflowExecution,
} from '../factories/executions.js';
import { createWorkflow } from '../factories/workflows.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const DAY_MS = 86_400_000;
const EXECUTION_KEYS = [
  'channel', 'completed_at', 'customer_id', 'duration_ms', 'id', 'input', 'output', 'retry_of', 'started_at', 'status', 'trigger_id', 'workflow_id',
  'workflow_version',
];
const TRIGGER_EXECUTION_KEYS = ['completed_at', 'duration_ms', 'id', 'input', 'output', 'status', 'trigger_id', 'triggered_at', 'workflow_id'];
const CUSTOMER_KEYS = ['attributes', 'channel', 'created_at', 'customer_id', 'first_seen_at', 'language', 'last_seen_at', 'updated_at'];
const MESSAGE_KEYS = ['author', 'channel', 'channel_account_id', 'content', 'created_at', 'delivery_error', 'delivery_status', 'direction', 'execution_id', 'id', 'language', 'node_id'];

const iso = (value: string) => new Date(value).toISOString();
const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((item) => item.id);

describe('execution read side', () => {
  let t: TestApp;
  let ds: DataSource;
  let org: TestOrganization;
  let other: TestOrganization;

  // The organization's data.
  let wf: string;
  let sibling: string;
  let quiet: string;
  let recent: string;
  const e: Record<string, string> = {};
  const tie: string[] = [];
  let trigger: string;
  let siblingTrigger: string;
  let quietTrigger: string;
  let recentTrigger: string;
  const te: Record<string, string> = {};
  let siblingTe: string;
  const customer: Record<string, string> = {};
  const messagesOfA: string[] = [];

  // The other organization's data, which must never show.
  let otherWf: string;
  let otherExecution: string;
  let otherTrigger: string;
  let otherTe: string;

  beforeAll(async () => {
    // APP_ROLE=api: no worker, so nothing but these tests touches the rows they insert.
    t = await startTestApp({ RATE_LIMITS_ENABLED: 'false', APP_ROLE: 'api' });
    ds = t.app.get(DataSource);
    org = await createOrganization(t);
    other = await createOrganization(t);
    wf = (await createWorkflow(t, org)).id;
    sibling = (await createWorkflow(t, org)).id;
    quiet = (await createWorkflow(t, org)).id;
    recent = (await createWorkflow(t, org)).id;
    otherWf = (await createWorkflow(t, other)).id;
    const o = org.id;

    // Customers, created in this order (newest last).
    const customers = [
      { key: 'A', externalId: '+15551234567', channel: 'whatsapp', language: 'en', attributes: { email: 'ann@example.com', score: 9 }, createdAt: '2025-01-01T10:00:00Z' },
      { key: 'B', externalId: 'ig:bob', channel: 'instagram', language: null, attributes: {}, createdAt: '2025-01-02T10:00:00Z' },
      { key: 'C', externalId: 'carol', channel: 'whatsapp', language: 'es', attributes: {}, createdAt: '2025-01-03T10:00:00Z' },
      { key: 'D', externalId: 'dave@example.com', channel: 'voice', language: null, attributes: {}, createdAt: '2025-01-04T10:00:00Z' },
      { key: 'S', externalId: 'team/sam', channel: 'instagram', language: 'fr', attributes: { plan: 'pro' }, createdAt: '2025-01-05T10:00:00Z' },
    ];
    for (const c of customers) {
      customer[c.key] = await insertCustomer(ds, { organizationId: o, ...c, lastSeenAt: '2025-03-20T10:00:00Z', updatedAt: '2025-03-21T10:00:00Z' });
    }
    const otherA = await insertCustomer(ds, {
      organizationId: other.id, externalId: '+15551234567', channel: 'voice', attributes: { email: 'other@example.com' }, createdAt: '2025-01-06T10:00:00Z',
    });

    // Executions of the workflow: six in March 2025, one before, one after.
    const run = (key: string, status: 'success' | 'failed' | 'running', startedAt: string, durationMs: number | null, who: string | null, channel: string | null) =>
      insertWorkflowExecution(ds, {
        organizationId: o, workflowId: wf, status, startedAt, durationMs, channel,
        customerRef: who ? customers.find((c) => c.key === who)!.externalId : null,
        customerId: who ? customer[who] : null,
        input: { message: `message ${key}` },
        output: status === 'running' ? null : { response: `response ${key}`, next_action: status === 'failed' ? 'abort' : 'end' },
        error: status === 'failed' ? { code: 'NODE_FAILED', message: `failure ${key}`, node_id: 'answer' } : null,
      }).then((id) => (e[key] = id));
    await run('e1', 'success', '2025-03-03T09:15:00Z', 1000, 'A', 'whatsapp');
    await run('e2', 'failed', '2025-03-03T09:45:00Z', 2000, 'B', 'whatsapp');
    await run('e3', 'success', '2025-03-03T14:10:00Z', 1500, 'A', 'instagram');
    await run('e4', 'running', '2025-03-05T10:00:00Z', null, 'C', null);
    await run('e5', 'success', '2025-03-10T08:00:00Z', 501, 'B', 'voice');
    await run('e6', 'failed', '2025-03-16T23:59:59Z', 700, 'D', 'whatsapp');
    await run('e7', 'success', '2025-04-02T12:00:00Z', 3000, 'A', 'whatsapp');
    await run('e8', 'success', '2025-02-20T12:00:00Z', 999, 'A', 'whatsapp');

    // e1's steps, inserted out of order.
    await insertStep(ds, e.e1, { nodeId: 'contact', type: 'form', startedAt: '2025-03-03T09:15:00.700Z', durationMs: 300, input: { fields: ['email'] }, output: { answers: { email: 'ann@example.com' } } });
    await insertStep(ds, e.e1, { nodeId: 'welcome', type: 'message', startedAt: '2025-03-03T09:15:00.000Z', durationMs: 200, input: {}, output: { message_sent: 'Hello! How can we help?' } });
    await insertStep(ds, e.e1, { nodeId: 'answer', type: 'ai_response', startedAt: '2025-03-03T09:15:00.200Z', durationMs: 500, input: { message: 'message e1' }, output: { response: 'We open at 9', confidence: 0.82 } });

    // Messages of the executions (and one of no execution), all with customer A or B.
    const say = (who: 'A' | 'B', direction: 'inbound' | 'outbound', execution: string | null, createdAt: string, content: string) =>
      insertMessage(ds, {
        organizationId: o, customerId: customer[who], direction, channel: who === 'A' ? 'whatsapp' : 'instagram', content, createdAt,
        language: 'en', executionId: execution, nodeId: execution ? 'welcome' : null,
      });
    messagesOfA.push(await say('A', 'outbound', e.e1, '2025-03-03T09:15:01Z', 'Hello! How can we help?'));
    messagesOfA.push(await say('A', 'inbound', e.e1, '2025-03-03T09:15:02Z', 'ann@example.com'));
    messagesOfA.push(await say('A', 'outbound', e.e1, '2025-03-03T09:15:03Z', 'Thanks'));
    messagesOfA.push(await say('A', 'outbound', e.e3, '2025-03-03T14:10:01Z', 'Hello again'));
    messagesOfA.push(await say('A', 'inbound', null, '2025-03-25T08:00:00Z', 'unrelated hello'));
    messagesOfA.push(await say('A', 'outbound', e.e7, '2025-04-02T12:00:01Z', 'April 1'));
    messagesOfA.push(await say('A', 'outbound', e.e7, '2025-04-02T12:00:02Z', 'April 2'));
    await say('B', 'outbound', e.e5, '2025-03-10T08:00:01Z', 'Hi Bob');
    await say('B', 'inbound', e.e5, '2025-03-10T08:00:02Z', 'one');
    await say('B', 'inbound', e.e5, '2025-03-10T08:00:03Z', 'two');
    await insertMessage(ds, { organizationId: other.id, customerId: otherA, direction: 'outbound', channel: 'voice', content: 'other org', createdAt: '2025-03-03T09:15:05Z' });

    // The sibling workflow: five executions started at the same instant (ordered by id), in March.
    for (let i = 0; i < 5; i++) {
      tie.push(await insertWorkflowExecution(ds, { organizationId: o, workflowId: sibling, status: 'success', startedAt: '2025-03-07T12:00:00Z', durationMs: 10, customerRef: 'zed', channel: 'voice' }));
    }
    // The other organization: an execution in March.
    otherExecution = await insertWorkflowExecution(ds, { organizationId: other.id, workflowId: otherWf, status: 'success', startedAt: '2025-03-03T09:20:00Z', durationMs: 5, customerRef: '+15551234567', channel: 'whatsapp' });

    // Triggers.
    trigger = await insertTrigger(ds, { organizationId: o, workflowId: wf, name: 'Help keyword' });
    siblingTrigger = await insertTrigger(ds, { organizationId: o, workflowId: wf, name: 'Sibling trigger' });
    quietTrigger = await insertTrigger(ds, { organizationId: o, workflowId: wf, name: 'Quiet trigger' });
    recentTrigger = await insertTrigger(ds, { organizationId: o, workflowId: recent, name: 'Recent trigger' });
    otherTrigger = await insertTrigger(ds, { organizationId: other.id, workflowId: otherWf, name: 'Other trigger' });

    const fire = (key: string, status: 'success' | 'failed' | 'running', triggeredAt: string, durationMs: number | null, input: Record<string, unknown>, workflowExecutionId: string | null, error: Record<string, unknown> | null = null) =>
      insertTriggerExecution(ds, { organizationId: o, triggerId: trigger, workflowId: wf, workflowExecutionId, status, triggeredAt, durationMs, input, error }).then((id) => (te[key] = id));
    const meta = (timestamp: string) => ({ user_agent: 'curl/8.5', timestamp, source: 'api' });
    await fire('te1', 'success', '2025-03-03T09:15:00Z', 120, { message: 'help me', customer_id: '+15551234567', channel: 'whatsapp', metadata: meta('2025-03-03T09:15:00.000Z') }, e.e1);
    await fire('te2', 'failed', '2025-03-03T09:45:00Z', 80, { message: 'help', customer_id: 'ig:bob', channel: 'whatsapp', metadata: meta('2025-03-03T09:45:00.000Z') }, e.e2, { code: 'NODE_FAILED', message: 'failure e2' });
    await fire('te3', 'failed', '2025-03-04T10:00:00Z', 0, { message: 'help', customer_id: '+15551234567', channel: 'instagram', metadata: meta('2025-03-04T10:00:00.000Z') }, null, { code: 'TRIGGER_INACTIVE', message: 'The trigger is paused' });
    await fire('te4', 'running', '2025-03-05T10:00:00Z', null, { message: 'help', customer_id: 'carol', channel: 'whatsapp', metadata: meta('2025-03-05T10:00:00.000Z') }, e.e4);
    await fire('te5', 'success', '2025-03-20T00:00:00Z', 101, { data: { batch: 7 }, metadata: meta('2025-03-20T00:00:00.000Z') }, e.e5);
    await fire('te6', 'success', '2025-04-02T12:00:00Z', 50, { message: 'help', customer_id: '+15551234567', channel: 'whatsapp', metadata: meta('2025-04-02T12:00:00.000Z') }, e.e7);
    await fire('te7', 'success', '2025-02-20T12:00:00Z', 40, { message: 'help', customer_id: '+15551234567', channel: 'whatsapp', metadata: meta('2025-02-20T12:00:00.000Z') }, e.e8);
    siblingTe = await insertTriggerExecution(ds, { organizationId: o, triggerId: siblingTrigger, workflowId: wf, status: 'success', triggeredAt: '2025-03-03T09:16:00Z', durationMs: 9, input: { customer_id: 'zed', channel: 'voice' } });
    otherTe = await insertTriggerExecution(ds, { organizationId: other.id, triggerId: otherTrigger, workflowId: otherWf, workflowExecutionId: otherExecution, status: 'success', triggeredAt: '2025-03-03T09:20:00Z', durationMs: 5, input: { customer_id: 'x', channel: 'whatsapp' } });
  });
  afterAll(() => t?.close());

  const read = (path: string, who = org, query: Record<string, string | number> = {}) => t.http.get(path).query(query).set(who.auth('read_only'));
  const expectError = (res: { status: number; body: { error?: { code: string; field?: string } } }, status: number, code: string, field?: string) => {
    expect({ status: res.status, code: res.body.error?.code, field: res.body.error?.field }).toEqual({ status, code, field });
  };

  /** Every route of this suite, for one set of the organization's ids. */
  const routes = () => [
    `/v1/workflows/${wf}/executions`,
    `/v1/workflows/${wf}/executions/${e.e1}`,
    `/v1/workflows/${wf}/metrics`,
    `/v1/triggers/${trigger}/executions`,
    `/v1/triggers/${trigger}/executions/${te.te1}`,
    `/v1/triggers/${trigger}/metrics`,
    '/v1/customers',
    '/v1/customers/%2B15551234567',
    '/v1/customers/%2B15551234567/messages',
  ];

  describe('authentication and access', () => {
    it('answers 401 MISSING_AUTHENTICATION on every route without a credential, and INVALID_API_KEY with a bad one', async () => {
      for (const path of routes()) {
        const res = await t.http.get(path);
        expect(res.status, path).toBe(401);
        expect(res.body.error.code, path).toBe('MISSING_AUTHENTICATION');
        const bad = await t.http.get(path).set('Authorization', 'Bearer not-a-real-key-0123456789abcdef');
        expect(bad.status, path).toBe(401);
        expect(bad.body.error.code, path).toBe('INVALID_API_KEY');
      }
    });

    it('lets every permission level read every route (they need executions:read)', async () => {
      for (const level of ['read_only', 'read_write', 'full_access'] as const) {
        for (const path of routes()) {
          const res = await t.http.get(path).set(org.auth(level));
          expect(res.status, `${level} ${path}`).toBe(200);
          expect(res.body.data, `${level} ${path}`).toBeDefined();
        }
      }
    });

    it('answers another organization 404 on every route, with the parent\'s not-found code', async () => {
      const expected = ['WORKFLOW_NOT_FOUND', 'WORKFLOW_NOT_FOUND', 'WORKFLOW_NOT_FOUND', 'TRIGGER_NOT_FOUND', 'TRIGGER_NOT_FOUND', 'TRIGGER_NOT_FOUND'];
      const scoped = routes().slice(0, 6);
      for (const [i, path] of scoped.entries()) expectError(await read(path, other), 404, expected[i]);
      // The other organization has its own customer with the same id: it sees that one, never ours.
      const mine = await read('/v1/customers/%2B15551234567', other);
      expect(mine.body.data).toMatchObject({ customer_id: '+15551234567', channel: 'voice', attributes: { email: 'other@example.com' } });
      const messages = await read('/v1/customers/%2B15551234567/messages', other);
      expect(messages.body.data.map((m: { content: string }) => m.content)).toEqual(['other org']);
      expectError(await read('/v1/customers/carol', other), 404, 'CUSTOMER_NOT_FOUND');
      expectError(await read('/v1/customers/carol/messages', other), 404, 'CUSTOMER_NOT_FOUND');
      const list = await read('/v1/customers', other);
      expect(list.body.data.map((c: { customer_id: string }) => c.customer_id)).toEqual(['+15551234567']);
    });
  });

  describe('GET /v1/workflows/{workflow_id}/executions', () => {
    const list = (query: Record<string, string | number> = {}) => read(`/v1/workflows/${wf}/executions`, org, query);

    it('lists the workflow\'s executions newest first, without steps or error', async () => {
      const res = await list();
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([e.e7, e.e6, e.e5, e.e4, e.e3, e.e2, e.e1, e.e8]);
      expect(res.body.pagination).toEqual({ page: 1, limit: 20, total: 8, pages: 1, next_cursor: null });
      for (const item of res.body.data) expect(Object.keys(item).sort()).toEqual(EXECUTION_KEYS);
      const byId = new Map(res.body.data.map((item: { id: string }) => [item.id, item]));
      expect(byId.get(e.e1)).toEqual({
        id: e.e1, workflow_id: wf, status: 'success', started_at: '2025-03-03T09:15:00.000Z', completed_at: '2025-03-03T09:15:01.000Z',
        duration_ms: 1000, customer_id: '+15551234567', channel: 'whatsapp', input: { message: 'message e1' },
        output: { response: 'response e1', next_action: 'end' }, workflow_version: 1, trigger_id: null, retry_of: null,
      });
      expect(byId.get(e.e4)).toMatchObject({ status: 'running', completed_at: null, duration_ms: null, output: null, channel: null, customer_id: 'carol' });
    });

    it('filters by status', async () => {
      expect(ids(await list({ status: 'failed' }))).toEqual([e.e6, e.e2]);
      expect(ids(await list({ status: 'running' }))).toEqual([e.e4]);
      const success = await list({ status: 'success' });
      expect(ids(success)).toEqual([e.e7, e.e5, e.e3, e.e1, e.e8]);
      expect(success.body.pagination.total).toBe(5);
    });

    it('filters by start and end dates on started_at, both inclusive; a date alone as end includes its whole day', async () => {
      expect(ids(await list({ start_date: '2025-03-05', end_date: '2025-03-10' }))).toEqual([e.e5, e.e4]);
      expect(ids(await list({ start_date: '2025-03-03T09:45:00Z' }))).toEqual([e.e7, e.e6, e.e5, e.e4, e.e3, e.e2]);
      expect(ids(await list({ end_date: '2025-03-03T09:45:00Z' }))).toEqual([e.e2, e.e1, e.e8]);
      expect(ids(await list({ start_date: '2025-03-03T09:45:00.001Z', end_date: '2025-03-16T23:59:59Z' }))).toEqual([e.e6, e.e5, e.e4, e.e3]);
      // An offset moves the instant: 10:45+01:00 is 09:45Z.
      expect(ids(await list({ start_date: '2025-03-03T10:45:00+01:00', end_date: '2025-03-03' }))).toEqual([e.e3, e.e2]);
      // An unencoded "+" arrives as a space; it is still read as the offset.
      const raw = await t.http.get(`/v1/workflows/${wf}/executions?start_date=2025-03-03T10:45:00+01:00&end_date=2025-03-03`).set(org.auth('read_only'));
      expect(ids(raw)).toEqual([e.e3, e.e2]);
      const combined = await list({ status: 'success', start_date: '2025-03-01', end_date: '2025-03-31' });
      expect(ids(combined)).toEqual([e.e5, e.e3, e.e1]);
      expect(combined.body.pagination).toEqual({ page: 1, limit: 20, total: 3, pages: 1, next_cursor: null });
      expect((await list({ start_date: '2026-01-01' })).body).toEqual({ data: [], pagination: { page: 1, limit: 20, total: 0, pages: 0, next_cursor: null } });
    });

    it('pages with page and limit', async () => {
      const pages = [await list({ limit: 3 }), await list({ limit: 3, page: 2 }), await list({ limit: 3, page: 3 }), await list({ limit: 3, page: 4 })];
      expect(pages.map(ids)).toEqual([[e.e7, e.e6, e.e5], [e.e4, e.e3, e.e2], [e.e1, e.e8], []]);
      expect(pages.map((p) => p.body.pagination)).toEqual(
        [1, 2, 3, 4].map((page) => ({ page, limit: 3, total: 8, pages: 3, next_cursor: page < 3 ? expect.any(String) : null })),
      );
    });

    it('orders executions that started at the same instant by id, newest first, stably across pages', async () => {
      const expected = [...tie].sort().reverse();
      const all = await read(`/v1/workflows/${sibling}/executions`);
      expect(ids(all)).toEqual(expected);
      const paged = [1, 2, 3].map((page) => read(`/v1/workflows/${sibling}/executions`, org, { limit: 2, page }));
      expect((await Promise.all(paged)).flatMap(ids)).toEqual(expected);
    });

    it('refuses bad filters and pagination with 400 and the field', async () => {
      expectError(await list({ status: 'done' }), 400, 'INVALID_REQUEST', 'status');
      expectError(await list({ start_date: 'yesterday' }), 400, 'INVALID_REQUEST', 'start_date');
      expectError(await list({ end_date: '2025-02-30' }), 400, 'INVALID_REQUEST', 'end_date');
      expectError(await list({ start_date: '2025-03-01T25:00:00Z' }), 400, 'INVALID_REQUEST', 'start_date');
      expectError(await list({ start_date: '2025-03-10', end_date: '2025-03-09' }), 400, 'INVALID_DATE_RANGE', 'end_date');
      expectError(await list({ limit: 0 }), 400, 'INVALID_REQUEST', 'limit');
      expectError(await list({ limit: 101 }), 400, 'INVALID_REQUEST', 'limit');
      expectError(await list({ page: 0 }), 400, 'INVALID_REQUEST', 'page');
      expectError(await list({ sort: 'asc' }), 400, 'INVALID_REQUEST', 'sort');
    });

    it('answers 404 WORKFLOW_NOT_FOUND for an unknown, malformed or foreign workflow', async () => {
      expectError(await read(`/v1/workflows/${UNKNOWN_ID}/executions`), 404, 'WORKFLOW_NOT_FOUND');
      expectError(await read('/v1/workflows/not-a-uuid/executions'), 404, 'WORKFLOW_NOT_FOUND');
      expectError(await read(`/v1/workflows/${otherWf}/executions`), 404, 'WORKFLOW_NOT_FOUND');
    });
  });

  describe('GET /v1/workflows/{workflow_id}/executions/{execution_id}', () => {
    const get = (id: string, workflow = wf, who = org) => read(`/v1/workflows/${workflow}/executions/${id}`, who);

    it('returns the execution with its steps in the order they started, and a null error', async () => {
      const res = await get(e.e1);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body.data).sort()).toEqual([...EXECUTION_KEYS, 'error', 'steps'].sort());
      expect(res.body.data).toMatchObject({ id: e.e1, workflow_id: wf, status: 'success', customer_id: '+15551234567', duration_ms: 1000, error: null });
      expect(res.body.data.steps).toEqual([
        {
          node_id: 'welcome', type: 'message', status: 'completed', started_at: '2025-03-03T09:15:00.000Z', completed_at: '2025-03-03T09:15:00.200Z',
          duration_ms: 200, input: {}, output: { message_sent: 'Hello! How can we help?' }, attempt: 1,
        },
        {
          node_id: 'answer', type: 'ai_response', status: 'completed', started_at: '2025-03-03T09:15:00.200Z', completed_at: '2025-03-03T09:15:00.700Z',
          duration_ms: 500, input: { message: 'message e1' }, output: { response: 'We open at 9', confidence: 0.82 }, attempt: 1,
        },
        {
          node_id: 'contact', type: 'form', status: 'completed', started_at: '2025-03-03T09:15:00.700Z', completed_at: '2025-03-03T09:15:01.000Z',
          duration_ms: 300, input: { fields: ['email'] }, output: { answers: { email: 'ann@example.com' } }, attempt: 1,
        },
      ]);
    });

    it('returns a failed execution\'s error and a running one without steps', async () => {
      const failed = await get(e.e2);
      expect(failed.body.data).toMatchObject({ status: 'failed', error: { code: 'NODE_FAILED', message: 'failure e2', node_id: 'answer' }, steps: [] });
      const running = await get(e.e4);
      expect(running.body.data).toMatchObject({ status: 'running', completed_at: null, duration_ms: null, output: null, error: null, steps: [] });
    });

    it('answers 404 EXECUTION_NOT_FOUND for an unknown, malformed or foreign id, or another workflow\'s execution', async () => {
      expectError(await get(UNKNOWN_ID), 404, 'EXECUTION_NOT_FOUND');
      expectError(await get('nope'), 404, 'EXECUTION_NOT_FOUND');
      expectError(await get(otherExecution), 404, 'EXECUTION_NOT_FOUND');
      expectError(await get(tie[0]), 404, 'EXECUTION_NOT_FOUND');
      expect((await get(tie[0], sibling)).status).toBe(200);
    });

    it('answers 404 WORKFLOW_NOT_FOUND when the workflow is not the caller\'s, whatever the execution', async () => {
      expectError(await get(e.e1, UNKNOWN_ID), 404, 'WORKFLOW_NOT_FOUND');
      expectError(await get(otherExecution, otherWf), 404, 'WORKFLOW_NOT_FOUND');
      expect((await get(otherExecution, otherWf, other)).status).toBe(200);
    });
  });

  describe('GET /v1/workflows/{workflow_id}/metrics', () => {
    const metrics = (query: Record<string, string> = {}, workflow = wf) => read(`/v1/workflows/${workflow}/metrics`, org, query);
    const march = { start_date: '2025-03-01', end_date: '2025-03-31' };

    it('computes the period\'s totals and daily buckets exactly', async () => {
      const res = await metrics(march);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({
        workflow_id: wf,
        period: { start_date: '2025-03-01T00:00:00.000Z', end_date: '2025-03-31T23:59:59.999Z' },
        metrics: {
          total_executions: 6,
          successful_executions: 3,
          failed_executions: 2,
          success_rate: 0.6,
          average_duration_ms: 1140, // (1000 + 2000 + 1500 + 501 + 700) / 5 = 1140.2; the running one has no duration
          total_messages_sent: 4,
          total_messages_received: 3,
          unique_customers: 4,
          channel_breakdown: { whatsapp: 3, instagram: 1, voice: 1, unknown: 1 },
        },
        daily_metrics: [
          { date: '2025-03-03T00:00:00.000Z', executions: 3, success_rate: 2 / 3, average_duration_ms: 1500, messages_sent: 3, messages_received: 1, unique_customers: 2 },
          { date: '2025-03-05T00:00:00.000Z', executions: 1, success_rate: null, average_duration_ms: null, messages_sent: 0, messages_received: 0, unique_customers: 1 },
          { date: '2025-03-10T00:00:00.000Z', executions: 1, success_rate: 1, average_duration_ms: 501, messages_sent: 1, messages_received: 2, unique_customers: 1 },
          { date: '2025-03-16T00:00:00.000Z', executions: 1, success_rate: 0, average_duration_ms: 700, messages_sent: 0, messages_received: 0, unique_customers: 1 },
        ],
      });
    });

    it('buckets by hour, week (from Monday) and month', async () => {
      const buckets = async (granularity: string) =>
        (await metrics({ ...march, granularity })).body.data.daily_metrics.map((b: Record<string, unknown>) => [b.date, b.executions, b.average_duration_ms, b.unique_customers]);
      expect(await buckets('hour')).toEqual([
        ['2025-03-03T09:00:00.000Z', 2, 1500, 2],
        ['2025-03-03T14:00:00.000Z', 1, 1500, 1],
        ['2025-03-05T10:00:00.000Z', 1, null, 1],
        ['2025-03-10T08:00:00.000Z', 1, 501, 1],
        ['2025-03-16T23:00:00.000Z', 1, 700, 1],
      ]);
      // 2025-03-16 is a Sunday, so e6 shares e5's week; (501 + 700) / 2 = 600.5 rounds to 601.
      expect(await buckets('week')).toEqual([
        ['2025-03-03T00:00:00.000Z', 4, 1500, 3],
        ['2025-03-10T00:00:00.000Z', 2, 601, 2],
      ]);
      expect(await buckets('month')).toEqual([['2025-03-01T00:00:00.000Z', 6, 1140, 4]]);
      const day = await metrics({ ...march, granularity: 'day' });
      expect(day.body.data).toEqual((await metrics(march)).body.data);
    });

    it('takes inclusive bounds to the millisecond, and offsets', async () => {
      const total = async (query: Record<string, string>) => (await metrics(query)).body.data.metrics.total_executions;
      expect(await total({ start_date: '2025-03-03T09:15:00Z', end_date: '2025-03-16T23:59:59Z' })).toBe(6);
      expect(await total({ start_date: '2025-03-03T09:15:00.001Z', end_date: '2025-03-16T23:59:58.999Z' })).toBe(4);
      // 2025-03-03T10:00+01:00 to 2025-03-03T15:00+01:00 is 09:00Z to 14:00Z: e1 and e2.
      expect(await total({ start_date: '2025-03-03T10:00:00+01:00', end_date: '2025-03-03T15:00:00+01:00' })).toBe(2);
      const wide = await metrics({ start_date: '2025-01-01', end_date: '2025-12-31', granularity: 'month' });
      expect(wide.body.data.metrics).toMatchObject({ total_executions: 8, total_messages_sent: 6, unique_customers: 4 });
      expect(wide.body.data.daily_metrics.map((b: { date: string; executions: number }) => [b.date, b.executions])).toEqual([
        ['2025-02-01T00:00:00.000Z', 1], ['2025-03-01T00:00:00.000Z', 6], ['2025-04-01T00:00:00.000Z', 1],
      ]);
    });

    it('reports zeros and nulls for a workflow without executions', async () => {
      const res = await metrics(march, quiet);
      expect(res.body.data).toEqual({
        workflow_id: quiet,
        period: { start_date: '2025-03-01T00:00:00.000Z', end_date: '2025-03-31T23:59:59.999Z' },
        metrics: {
          total_executions: 0, successful_executions: 0, failed_executions: 0, success_rate: null, average_duration_ms: null,
          total_messages_sent: 0, total_messages_received: 0, unique_customers: 0, channel_breakdown: {},
        },
        daily_metrics: [],
      });
    });

    it('defaults to the last 30 days ending now, by day', async () => {
      const now = Date.now();
      const hoursAgo = (h: number) => new Date(now - h * 3_600_000).toISOString();
      await insertWorkflowExecution(ds, { organizationId: org.id, workflowId: recent, status: 'success', startedAt: hoursAgo(1), durationMs: 100, customerRef: 'r1', channel: 'voice' });
      await insertWorkflowExecution(ds, { organizationId: org.id, workflowId: recent, status: 'failed', startedAt: hoursAgo(48), durationMs: 300, customerRef: 'r2', channel: 'voice' });
      await insertWorkflowExecution(ds, { organizationId: org.id, workflowId: recent, status: 'success', startedAt: hoursAgo(24 * 31), durationMs: 900, customerRef: 'r3', channel: 'voice' });

      const before = Date.now();
      const res = await metrics({}, recent);
      const after = Date.now();
      const { period, metrics: totals, daily_metrics } = res.body.data;
      const end = Date.parse(period.end_date);
      expect(end).toBeGreaterThanOrEqual(before);
      expect(end).toBeLessThanOrEqual(after);
      expect(end - Date.parse(period.start_date)).toBe(30 * DAY_MS);
      expect(totals).toMatchObject({ total_executions: 2, success_rate: 0.5, average_duration_ms: 200, unique_customers: 2, channel_breakdown: { voice: 2 } });
      for (const bucket of daily_metrics) expect(bucket.date).toMatch(/T00:00:00\.000Z$/);

      // Only end_date: the 30 days before it. Only start_date: up to now.
      const ending = await metrics({ end_date: '2025-03-31T00:00:00Z' });
      expect(ending.body.data.period).toEqual({ start_date: '2025-03-01T00:00:00.000Z', end_date: '2025-03-31T00:00:00.000Z' });
      const since = await metrics({ start_date: hoursAgo(72) }, recent);
      expect(Date.parse(since.body.data.period.end_date)).toBeGreaterThanOrEqual(after);
      expect(since.body.data.metrics.total_executions).toBe(2);
    });

    it('refuses a bad period or granularity with the specification\'s codes', async () => {
      expectError(await metrics({ start_date: '2025-03-10', end_date: '2025-03-09T23:59:59Z' }), 400, 'INVALID_DATE_RANGE', 'end_date');
      expectError(await metrics({ start_date: '2999-01-01' }), 400, 'INVALID_DATE_RANGE', 'end_date');
      expectError(await metrics({ start_date: 'last week' }), 400, 'INVALID_REQUEST', 'start_date');
      expectError(await metrics({ end_date: '2025-13-01' }), 400, 'INVALID_REQUEST', 'end_date');
      expectError(await metrics({ end_date: '' }), 400, 'INVALID_REQUEST', 'end_date');
      for (const granularity of ['year', 'DAY', 'days', '']) {
        expectError(await metrics({ ...march, granularity }), 422, 'INVALID_GRANULARITY', 'granularity');
      }
      expectError(await metrics({ metrics: 'x' }), 400, 'INVALID_REQUEST', 'metrics');
    });

    it('answers 404 WORKFLOW_NOT_FOUND for an unknown, malformed or foreign workflow', async () => {
      expectError(await metrics({}, UNKNOWN_ID), 404, 'WORKFLOW_NOT_FOUND');
      expectError(await metrics({}, 'abc'), 404, 'WORKFLOW_NOT_FOUND');
      expectError(await metrics({}, otherWf), 404, 'WORKFLOW_NOT_FOUND');
      // Ownership is checked before the period.
      expectError(await metrics({ start_date: 'x', granularity: 'year' }, otherWf), 404, 'WORKFLOW_NOT_FOUND');
    });
  });

  describe('GET /v1/triggers/{trigger_id}/executions', () => {
    const list = (query: Record<string, string | number> = {}, id = trigger) => read(`/v1/triggers/${id}/executions`, org, query);

    it('lists the trigger\'s firings newest first, with input without metadata and output without the workflow status', async () => {
      const res = await list();
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([te.te6, te.te5, te.te4, te.te3, te.te2, te.te1, te.te7]);
      expect(res.body.pagination).toEqual({ page: 1, limit: 20, total: 7, pages: 1, next_cursor: null });
      for (const item of res.body.data) {
        expect(Object.keys(item).sort()).toEqual(TRIGGER_EXECUTION_KEYS);
        expect(Object.keys(item.input).sort()).toEqual(['channel', 'customer_id', 'message']);
        expect(Object.keys(item.output)).toEqual(['workflow_execution_id']);
      }
      const byId = new Map(res.body.data.map((item: { id: string }) => [item.id, item]));
      expect(byId.get(te.te1)).toEqual({
        id: te.te1, trigger_id: trigger, workflow_id: wf, status: 'success', triggered_at: '2025-03-03T09:15:00.000Z',
        completed_at: '2025-03-03T09:15:00.120Z', duration_ms: 120,
        input: { message: 'help me', customer_id: '+15551234567', channel: 'whatsapp' }, output: { workflow_execution_id: e.e1 },
      });
      expect(byId.get(te.te5)).toMatchObject({ input: { message: null, customer_id: null, channel: null } });
      expect(byId.get(te.te4)).toMatchObject({ status: 'running', completed_at: null, duration_ms: null });
    });

    it('filters by status and dates on triggered_at, and pages', async () => {
      expect(ids(await list({ status: 'failed' }))).toEqual([te.te3, te.te2]);
      expect(ids(await list({ status: 'running' }))).toEqual([te.te4]);
      expect(ids(await list({ start_date: '2025-03-03T09:45:00Z', end_date: '2025-03-05' }))).toEqual([te.te4, te.te3, te.te2]);
      expect(ids(await list({ status: 'success', start_date: '2025-03-01', end_date: '2025-03-31' }))).toEqual([te.te5, te.te1]);
      const second = await list({ limit: 2, page: 2 });
      expect(ids(second)).toEqual([te.te4, te.te3]);
      expect(second.body.pagination).toEqual({ page: 2, limit: 2, total: 7, pages: 4, next_cursor: expect.any(String) });
    });

    it('refuses bad filters with 400 and the field', async () => {
      expectError(await list({ status: 'ok' }), 400, 'INVALID_REQUEST', 'status');
      expectError(await list({ start_date: '03/01/2025' }), 400, 'INVALID_REQUEST', 'start_date');
      expectError(await list({ start_date: '2025-03-02', end_date: '2025-03-01' }), 400, 'INVALID_DATE_RANGE', 'end_date');
      expectError(await list({ limit: 500 }), 400, 'INVALID_REQUEST', 'limit');
    });

    it('answers 404 TRIGGER_NOT_FOUND for an unknown, malformed or foreign trigger', async () => {
      expectError(await list({}, UNKNOWN_ID), 404, 'TRIGGER_NOT_FOUND');
      expectError(await list({}, 'trigger-1'), 404, 'TRIGGER_NOT_FOUND');
      expectError(await list({}, otherTrigger), 404, 'TRIGGER_NOT_FOUND');
    });
  });

  describe('GET /v1/triggers/{trigger_id}/executions/{execution_id}', () => {
    const get = (id: string, triggerId = trigger, who = org) => read(`/v1/triggers/${triggerId}/executions/${id}`, who);

    it('returns the firing with its metadata, the workflow execution\'s status and no error', async () => {
      const res = await get(te.te1);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({
        id: te.te1, trigger_id: trigger, workflow_id: wf, status: 'success', triggered_at: '2025-03-03T09:15:00.000Z',
        completed_at: '2025-03-03T09:15:00.120Z', duration_ms: 120,
        input: { message: 'help me', customer_id: '+15551234567', channel: 'whatsapp', metadata: { user_agent: 'curl/8.5', timestamp: '2025-03-03T09:15:00.000Z', source: 'api' } },
        output: { workflow_execution_id: e.e1, workflow_status: 'success' },
        error: null,
      });
    });

    it('shows the error of a refused firing with no workflow execution, the running status, and the firing\'s data', async () => {
      expect((await get(te.te3)).body.data).toMatchObject({
        status: 'failed', output: { workflow_execution_id: null, workflow_status: null }, error: { code: 'TRIGGER_INACTIVE', message: 'The trigger is paused' },
      });
      expect((await get(te.te2)).body.data).toMatchObject({ output: { workflow_execution_id: e.e2, workflow_status: 'failed' }, error: { code: 'NODE_FAILED' } });
      expect((await get(te.te4)).body.data.output).toEqual({ workflow_execution_id: e.e4, workflow_status: 'running' });
      expect((await get(te.te5)).body.data.input).toEqual({
        message: null, customer_id: null, channel: null, data: { batch: 7 }, metadata: { user_agent: 'curl/8.5', timestamp: '2025-03-20T00:00:00.000Z', source: 'api' },
      });
    });

    it('answers 404 EXECUTION_NOT_FOUND for an unknown, malformed or foreign id, or another trigger\'s firing', async () => {
      expectError(await get(UNKNOWN_ID), 404, 'EXECUTION_NOT_FOUND');
      expectError(await get('1234'), 404, 'EXECUTION_NOT_FOUND');
      expectError(await get(otherTe), 404, 'EXECUTION_NOT_FOUND');
      expectError(await get(siblingTe), 404, 'EXECUTION_NOT_FOUND');
      // A workflow execution's id is not a trigger execution's.
      expectError(await get(e.e1), 404, 'EXECUTION_NOT_FOUND');
      expect((await get(siblingTe, siblingTrigger)).status).toBe(200);
    });

    it('answers 404 TRIGGER_NOT_FOUND when the trigger is not the caller\'s', async () => {
      expectError(await get(te.te1, UNKNOWN_ID), 404, 'TRIGGER_NOT_FOUND');
      expectError(await get(otherTe, otherTrigger), 404, 'TRIGGER_NOT_FOUND');
      expect((await get(otherTe, otherTrigger, other)).status).toBe(200);
    });
  });

  describe('GET /v1/triggers/{trigger_id}/metrics', () => {
    const metrics = (query: Record<string, string> = {}, id = trigger) => read(`/v1/triggers/${id}/metrics`, org, query);
    const march = { start_date: '2025-03-01', end_date: '2025-03-31' };

    it('computes the period\'s totals and daily buckets exactly, in the specification\'s shape', async () => {
      const res = await metrics(march);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({
        trigger_id: trigger,
        period: { start_date: '2025-03-01T00:00:00.000Z', end_date: '2025-03-31T23:59:59.999Z' },
        metrics: {
          total_executions: 5,
          successful_executions: 2,
          failed_executions: 2,
          success_rate: 0.5,
          average_duration_ms: 75, // (120 + 80 + 0 + 101) / 4 = 75.25
          unique_customers: 3,
          channel_breakdown: { whatsapp: 3, instagram: 1, unknown: 1 },
        },
        daily_metrics: [
          { date: '2025-03-03T00:00:00.000Z', executions: 2, success_rate: 0.5, average_duration_ms: 100 },
          { date: '2025-03-04T00:00:00.000Z', executions: 1, success_rate: 0, average_duration_ms: 0 },
          { date: '2025-03-05T00:00:00.000Z', executions: 1, success_rate: null, average_duration_ms: null },
          { date: '2025-03-20T00:00:00.000Z', executions: 1, success_rate: 1, average_duration_ms: 101 },
        ],
      });
    });

    it('buckets by hour, week and month', async () => {
      const buckets = async (granularity: string) =>
        (await metrics({ ...march, granularity })).body.data.daily_metrics.map((b: Record<string, unknown>) => [b.date, b.executions, b.success_rate, b.average_duration_ms]);
      expect(await buckets('hour')).toEqual([
        ['2025-03-03T09:00:00.000Z', 2, 0.5, 100],
        ['2025-03-04T10:00:00.000Z', 1, 0, 0],
        ['2025-03-05T10:00:00.000Z', 1, null, null],
        ['2025-03-20T00:00:00.000Z', 1, 1, 101],
      ]);
      // (120 + 80 + 0) / 3 = 66.67 rounds to 67.
      expect(await buckets('week')).toEqual([
        ['2025-03-03T00:00:00.000Z', 4, 1 / 3, 67],
        ['2025-03-17T00:00:00.000Z', 1, 1, 101],
      ]);
      expect(await buckets('month')).toEqual([['2025-03-01T00:00:00.000Z', 5, 0.5, 75]]);
    });

    it('reports zeros and nulls for a trigger without firings, and defaults to the last 30 days', async () => {
      const res = await metrics(march, quietTrigger);
      expect(res.body.data).toEqual({
        trigger_id: quietTrigger,
        period: { start_date: '2025-03-01T00:00:00.000Z', end_date: '2025-03-31T23:59:59.999Z' },
        metrics: { total_executions: 0, successful_executions: 0, failed_executions: 0, success_rate: null, average_duration_ms: null, unique_customers: 0, channel_breakdown: {} },
        daily_metrics: [],
      });

      const now = Date.now();
      const at = (hours: number) => new Date(now - hours * 3_600_000).toISOString();
      const fire = (status: 'success' | 'failed', hours: number, durationMs: number) =>
        insertTriggerExecution(ds, { organizationId: org.id, triggerId: recentTrigger, workflowId: recent, status, triggeredAt: at(hours), durationMs, input: { customer_id: 'r', channel: 'voice' } });
      await fire('success', 2, 10);
      await fire('failed', 24 * 29, 30);
      await fire('success', 24 * 31, 1000);
      const recentMetrics = (await metrics({}, recentTrigger)).body.data;
      expect(Date.parse(recentMetrics.period.end_date) - Date.parse(recentMetrics.period.start_date)).toBe(30 * DAY_MS);
      expect(recentMetrics.metrics).toEqual({
        total_executions: 2, successful_executions: 1, failed_executions: 1, success_rate: 0.5, average_duration_ms: 20, unique_customers: 1, channel_breakdown: { voice: 2 },
      });
    });

    it('refuses a bad period or granularity with the specification\'s codes', async () => {
      expectError(await metrics({ start_date: '2025-03-31', end_date: '2025-03-01' }), 400, 'INVALID_DATE_RANGE', 'end_date');
      expectError(await metrics({ start_date: '2025-3-1' }), 400, 'INVALID_REQUEST', 'start_date');
      expectError(await metrics({ end_date: 'now' }), 400, 'INVALID_REQUEST', 'end_date');
      expectError(await metrics({ granularity: 'minute' }), 422, 'INVALID_GRANULARITY', 'granularity');
    });

    it('answers 404 TRIGGER_NOT_FOUND for an unknown, malformed or foreign trigger', async () => {
      expectError(await metrics({}, UNKNOWN_ID), 404, 'TRIGGER_NOT_FOUND');
      expectError(await metrics({}, 'x'), 404, 'TRIGGER_NOT_FOUND');
      expectError(await metrics({}, otherTrigger), 404, 'TRIGGER_NOT_FOUND');
      // Ownership is checked before the period.
      expectError(await metrics({ end_date: 'x', granularity: 'year' }, otherTrigger), 404, 'TRIGGER_NOT_FOUND');
    });
  });

  describe('customers', () => {
    it('lists the organization\'s customers newest first, with pagination and a channel filter', async () => {
      const res = await read('/v1/customers');
      expect(res.status).toBe(200);
      expect(res.body.data.map((c: { customer_id: string }) => c.customer_id)).toEqual(['team/sam', 'dave@example.com', 'carol', 'ig:bob', '+15551234567']);
      expect(res.body.pagination).toEqual({ page: 1, limit: 20, total: 5, pages: 1 });
      for (const item of res.body.data) expect(Object.keys(item).sort()).toEqual(CUSTOMER_KEYS);
      expect(res.body.data[0]).toEqual({
        customer_id: 'team/sam', channel: 'instagram', language: 'fr', attributes: { plan: 'pro' }, first_seen_at: '2025-01-05T10:00:00.000Z',
        last_seen_at: '2025-03-20T10:00:00.000Z', created_at: '2025-01-05T10:00:00.000Z', updated_at: '2025-03-21T10:00:00.000Z',
      });

      const page = await read('/v1/customers', org, { limit: 2, page: 3 });
      expect(page.body).toMatchObject({ pagination: { page: 3, limit: 2, total: 5, pages: 3 } });
      expect(page.body.data.map((c: { customer_id: string }) => c.customer_id)).toEqual(['+15551234567']);

      const instagram = await read('/v1/customers', org, { channel: 'instagram' });
      expect(instagram.body.data.map((c: { customer_id: string }) => c.customer_id)).toEqual(['team/sam', 'ig:bob']);
      expect(instagram.body.pagination.total).toBe(2);
      expectError(await read('/v1/customers', org, { channel: 'sms' }), 400, 'INVALID_REQUEST', 'channel');
      expectError(await read('/v1/customers', org, { limit: 0 }), 400, 'INVALID_REQUEST', 'limit');
    });

    it('gets a customer by the client\'s id, URL-decoded, with attributes', async () => {
      const encoded = await read('/v1/customers/%2B15551234567');
      expect(encoded.status).toBe(200);
      expect(encoded.body.data).toEqual({
        customer_id: '+15551234567', channel: 'whatsapp', language: 'en', attributes: { email: 'ann@example.com', score: 9 },
        first_seen_at: '2025-01-01T10:00:00.000Z', last_seen_at: '2025-03-20T10:00:00.000Z', created_at: '2025-01-01T10:00:00.000Z', updated_at: '2025-03-21T10:00:00.000Z',
        handoff: { active: false, reason: null, started_at: null, ends_at: null },
      });
      // A "+" in a path is a plus, not a space.
      expect((await read('/v1/customers/+15551234567')).body.data.customer_id).toBe('+15551234567');
      expect((await read('/v1/customers/team%2Fsam')).body.data.customer_id).toBe('team/sam');
      expect((await read(`/v1/customers/${encodeURIComponent('dave@example.com')}`)).body.data.customer_id).toBe('dave@example.com');
    });

    it('answers 404 CUSTOMER_NOT_FOUND for an unknown or over-long id', async () => {
      expectError(await read('/v1/customers/%2B15550000000'), 404, 'CUSTOMER_NOT_FOUND');
      expectError(await read('/v1/customers/15551234567'), 404, 'CUSTOMER_NOT_FOUND');
      expectError(await read(`/v1/customers/${'x'.repeat(201)}`), 404, 'CUSTOMER_NOT_FOUND');
      expectError(await read(`/v1/customers/${'x'.repeat(201)}/messages`), 404, 'CUSTOMER_NOT_FOUND');
      expectError(await read('/v1/customers/nobody/messages'), 404, 'CUSTOMER_NOT_FOUND');
    });

    it('lists a customer\'s messages in both directions, newest first, with pagination', async () => {
      const res = await read('/v1/customers/%2B15551234567/messages');
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([...messagesOfA].reverse());
      expect(res.body.pagination).toEqual({ page: 1, limit: 20, total: 7, pages: 1 });
      for (const item of res.body.data) expect(Object.keys(item).sort()).toEqual(MESSAGE_KEYS);
      expect(res.body.data[6]).toEqual({
        id: messagesOfA[0], direction: 'outbound', channel: 'whatsapp', content: 'Hello! How can we help?', language: 'en',
        execution_id: e.e1, node_id: 'welcome', author: 'bot', channel_account_id: null, created_at: '2025-03-03T09:15:01.000Z',
        // Stored with no channel account to send through: no delivery.
        delivery_status: null, delivery_error: null,
      });
      expect(res.body.data[2]).toMatchObject({ direction: 'inbound', execution_id: null, node_id: null, content: 'unrelated hello', author: 'customer' });

      const page = await read('/v1/customers/%2B15551234567/messages', org, { limit: 3, page: 3 });
      expect(ids(page)).toEqual([messagesOfA[0]]);
      expect(page.body.pagination).toEqual({ page: 3, limit: 3, total: 7, pages: 3 });
      expect((await read('/v1/customers/carol/messages')).body).toEqual({ data: [], pagination: { page: 1, limit: 20, total: 0, pages: 0 } });
      expectError(await read('/v1/customers/%2B15551234567/messages', org, { page: 'two' }), 400, 'INVALID_REQUEST', 'page');
    });
  });
});
