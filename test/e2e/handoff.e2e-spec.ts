import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RunsRepository } from '../../src/executions/runs.repository.js';
import { RunWrites } from '../../src/executions/run-writes.js';
import { createTrigger } from '../factories/triggers.js';
import { createActiveWorkflow } from '../factories/workflows.js';
import type { FakeMeta } from '../utils/fake-meta.js';
import { startChannelsTestApp, type ChannelsTestApp } from '../utils/channels-test-app.js';
import { metaSignature } from '../utils/meta-signing.js';
import { expectJourneyRollupsMatchRows } from '../utils/journey-rollups.js';
import { instagramMessagesPayload, whatsappMessagesPayload } from '../utils/meta-payloads.js';
import { createOrganization, RATE_LIMITS_OUT_OF_REACH, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';
import { subscribeToEvents } from '../factories/webhooks.js';

const APP_SECRET = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
const TOKEN = 'EAAGtest-access-token-0123456789';
const DAY_MS = 86_400_000;

/** Meta's documented X-Hub-Signature-256, computed by the tests (not by the service's code). */
const sign = (raw: string) => metaSignature(APP_SECRET, raw);

interface OutboxRow {
  type: string;
  data: Record<string, unknown>;
}

describe('handoff: a person takes a conversation over', () => {
  let app: ChannelsTestApp;
  let t: TestApp;
  let fake: FakeMeta;
  let org: TestOrganization;
  let other: TestOrganization;
  let db: DataSource;
  let seq = 0;

  beforeAll(async () => {
    app = await startChannelsTestApp('handoff');
    ({ t, fake, org, other, db } = app);
  });
  afterAll(() => app?.close());

  const nextCustomer = () => `1555${String(Date.now() % 1_000_000).padStart(6, '0')}${++seq}`;

  async function keywordWorkflow(keyword: string, nodes: Record<string, unknown>[], o = org) {
    const id = await createActiveWorkflow(t, o, nodes);
    await createTrigger(t, o, id, 'message', { keywords: [keyword] });
    return id;
  }

  const FORM = [{ id: 'ask', type: 'form', fields: [{ name: 'city', type: 'text', required: true, label: 'Which city?' }], next: 'bye' }, { id: 'bye', type: 'message', content: 'Thanks' }];

  const say = (customer: string, message: string, o = org) =>
    t.http.post('/v1/messages').set(o.auth('read_write')).send({ channel: 'whatsapp', customer_id: customer, message });

  const events = async (type: string, customer: string): Promise<OutboxRow[]> =>
    db.query(`SELECT type, data FROM outbox_events WHERE organization_id = $1 AND type = $2 AND data->>'customer_id' = $3 ORDER BY id`, [org.id, type, customer]);

  const executionsOf = async (workflowId: string): Promise<{ id: string; status: string; waiting: boolean; error: { code: string } | null }[]> =>
    db.query(`SELECT id, status, waiting, error FROM workflow_executions WHERE workflow_id = $1 ORDER BY started_at, id`, [workflowId]);

  async function waitingExecution(workflowId: string, customer: string, keyword: string) {
    const res = await say(customer, keyword);
    expect(res.status).toBe(202);
    expect(res.body.data.executions).toHaveLength(1);
    const id = res.body.data.executions[0].workflow_execution_id as string;
    await waitFor('waiting for the form', async () => (await db.query(`SELECT 1 FROM workflow_executions WHERE id = $1 AND waiting`, [id])).length === 1);
    return id;
  }

  describe('pausing automation', () => {
    let workflowId: string;
    const customer = nextCustomer();
    const keyword = `book${Date.now() % 100000}`;
    let first: string;
    /** The execution as a run read it just before the handoff. */
    let staleRun: Awaited<ReturnType<RunsRepository['load']>>;

    beforeAll(async () => {
      workflowId = await keywordWorkflow(keyword, FORM);
    });

    it('ends a waiting execution as EXECUTION_HANDED_OFF, emits handoff_started, and the customer detail shows it', async () => {
      first = await waitingExecution(workflowId, customer, keyword);
      staleRun = await t.app.get(RunsRepository).load(first);
      const before = Date.now();
      const res = await t.http.post(`/v1/customers/${customer}/handoff`).set(org.auth('read_write')).send({ reason: '  Asked for a human  ' });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ customer_id: customer, handoff: { active: true, reason: 'Asked for a human' } });
      const endsAt = Date.parse(res.body.data.handoff.ends_at);
      expect(endsAt - before).toBeGreaterThan(DAY_MS - 60_000);
      expect(endsAt - before).toBeLessThan(DAY_MS + 60_000);

      const execution = await t.http.get(`/v1/workflows/${workflowId}/executions/${first}`).set(org.auth('read_only'));
      expect(execution.body.data.status).toBe('failed');
      expect(execution.body.data.error).toMatchObject({ code: 'EXECUTION_HANDED_OFF', node_id: 'ask' });
      const started = await events('conversation.handoff_started', customer);
      expect(started).toHaveLength(1);
      expect(started[0]!.data).toEqual({ customer_id: customer, reason: 'Asked for a human', started_at: res.body.data.handoff.started_at, ends_at: res.body.data.handoff.ends_at });
      const failed = await db.query(`SELECT data FROM outbox_events WHERE type = 'workflow.failed' AND data->>'execution_id' = $1`, [first]);
      expect(failed[0].data.error.code).toBe('EXECUTION_HANDED_OFF');

      const detail = await t.http.get(`/v1/customers/${customer}`).set(org.auth('read_only'));
      expect(detail.body.data.handoff).toEqual(res.body.data.handoff);
    });

    it("records and emits the customer's next messages, which resume and start nothing (the keyword trigger does not fire)", async () => {
      const answer = await say(customer, 'Paris');
      expect(answer.status).toBe(202);
      expect(answer.body.data.executions).toEqual([]);
      const again = await say(customer, keyword);
      expect(again.body.data.executions).toEqual([]);
      expect(await executionsOf(workflowId)).toHaveLength(1);
      const received = await events('message.received', customer);
      expect(received.slice(-2).map((e) => [e.data.content, e.data.execution_id])).toEqual([['Paris', null], [keyword, null]]);
      const stored = await db.query(`SELECT m.execution_id FROM messages m JOIN customers c ON c.id = m.customer_id WHERE c.external_id = $1 AND m.content = 'Paris'`, [customer]);
      expect(stored).toEqual([{ execution_id: null }]);
      const list = await t.http.get(`/v1/customers/${customer}/messages`).set(org.auth('read_only'));
      expect(list.body.data[0]).toMatchObject({ content: keyword, direction: 'inbound', author: 'customer', channel_account_id: null });
    });

    it('extends an active handoff on a second start (200), keeping started_at and the reason when none is given, with no second event', async () => {
      const detail = (await t.http.get(`/v1/customers/${customer}`).set(org.auth('read_only'))).body.data.handoff;
      await new Promise((resolve) => setTimeout(resolve, 20));
      const res = await t.http.post(`/v1/customers/${customer}/handoff`).set(org.auth('read_write')).send({});
      expect(res.status).toBe(200);
      expect(res.body.data.handoff.started_at).toBe(detail.started_at);
      expect(res.body.data.handoff.reason).toBe('Asked for a human');
      expect(Date.parse(res.body.data.handoff.ends_at)).toBeGreaterThan(Date.parse(detail.ends_at));
      expect(await events('conversation.handoff_started', customer)).toHaveLength(1);
    });

    it('a run that read the execution before the handoff cannot commit over it', async () => {
      // A run that read the waiting execution before the handoff and now commits it as finished.
      const { execution, version } = staleRun!;
      expect(execution.status).toBe('running');
      const finished = Object.assign(execution, { status: 'success' as const, waiting: false, waitExpiresAt: null, completedAt: new Date(), durationMs: 1 });
      expect(await t.app.get(RunsRepository).commit({ execution: finished, version, writes: new RunWrites() })).toBe(false);
      expect((await executionsOf(workflowId))[0]).toMatchObject({ status: 'failed', error: { code: 'EXECUTION_HANDED_OFF' } });
    });

    it('DELETE ends it (200 with the customer, handoff_ended by request); the next message matches the triggers again', async () => {
      const res = await t.http.delete(`/v1/customers/${customer}/handoff`).set(org.auth('read_write'));
      expect(res.status).toBe(200);
      expect(res.body.data.handoff).toEqual({ active: false, reason: null, started_at: null, ends_at: null });
      const ended = await events('conversation.handoff_ended', customer);
      expect(ended).toHaveLength(1);
      expect(ended[0]!.data).toMatchObject({ customer_id: customer, reason: 'Asked for a human', ended_by: 'request' });
      // Ending again changes nothing and emits nothing.
      expect((await t.http.delete(`/v1/customers/${customer}/handoff`).set(org.auth('read_write'))).status).toBe(200);
      expect(await events('conversation.handoff_ended', customer)).toHaveLength(1);

      const fired = await say(customer, keyword);
      expect(fired.body.data.executions).toHaveLength(1);
      await waitFor('waiting again', async () => (await executionsOf(workflowId)).filter((e) => e.waiting).length === 1);
      const resumed = await say(customer, 'Lyon');
      expect(resumed.body.data.executions[0].workflow_execution_id).toBe(fired.body.data.executions[0].workflow_execution_id);
      await waitFor('success', async () => (await executionsOf(workflowId))[1]?.status === 'success');
    });
  });

  describe('agent messages', () => {
    async function whatsappAccount(o = org) {
      const phone = String(200000 + ++seq);
      const res = await t.http
        .post('/v1/channel-accounts')
        .set(o.auth('read_write'))
        .send({ name: `WA ${seq}`, channel: 'whatsapp', provider: 'whatsapp_cloud', credentials: { phone_number_id: phone, access_token: TOKEN, app_secret: APP_SECRET } });
      expect(res.status).toBe(201);
      return { id: res.body.data.id as string, phone };
    }

    const post = (accountId: string, payload: unknown) => {
      const raw = JSON.stringify(payload);
      return t.http.post(`/v1/channel-accounts/${accountId}/webhook`).set('Content-Type', 'application/json').set('X-Hub-Signature-256', sign(raw)).send(raw);
    };
    const received = (to: string) => fake.received.filter((m) => m.to === to);
    const textOf = (m: { body: unknown }) => (m.body as { text?: { body: string }; message?: { text: string } }).text?.body ?? (m.body as { message?: { text: string } }).message?.text;
    const agentSay = (customer: string, body: Record<string, unknown>, o = org) => t.http.post(`/v1/customers/${customer}/messages`).set(o.auth('read_write')).send(body);

    it("leaves after the workflow's queued messages, through the account the customer last wrote from, and starts a handoff", async () => {
      const account = await whatsappAccount();
      const keyword = `hours${seq}`;
      const workflowId = await keywordWorkflow(keyword, [
        { id: 'one', type: 'message', content: 'Bot one', next: 'two' },
        { id: 'two', type: 'message', content: 'Bot two', next: 'ask' },
        { id: 'ask', type: 'form', fields: [{ name: 'day', type: 'text', label: 'Which day?' }] },
      ]);
      const customer = nextCustomer();
      let release!: () => void;
      fake.hold = new Promise<void>((resolve) => (release = resolve));
      try {
        expect((await post(account.id, whatsappMessagesPayload(account.phone, [{ from: customer, id: `wamid.h${seq}`, text: keyword }]))).status).toBe(200);
        // The run committed its three messages; the provider holds the first.
        await waitFor('bot messages queued', async () => (await db.query(`SELECT 1 FROM message_deliveries d JOIN workflow_executions e ON e.id = d.execution_id WHERE e.workflow_id = $1`, [workflowId])).length === 3);
        const res = await agentSay(customer, { content: '  Hi, Anna from support here.  ' });
        expect(res.status).toBe(201);
        expect(res.body.data).toMatchObject({ status: 'queued', author: 'agent', channel: 'whatsapp', channel_account_id: account.id, content: 'Hi, Anna from support here.' });
        expect(Date.parse(res.body.data.created_at)).not.toBeNaN();
      } finally {
        release();
        fake.hold = undefined;
      }
      await waitFor('four messages at the provider', async () => received(customer).length === 4);
      expect(received(customer).map(textOf)).toEqual(['Bot one', 'Bot two', 'Which day?', 'Hi, Anna from support here.']);
      expect(received(customer)[3]!.path).toBe(`/v21.0/${account.phone}/messages`);

      const detail = await t.http.get(`/v1/customers/${customer}`).set(org.auth('read_only'));
      expect(detail.body.data.handoff).toMatchObject({ active: true, reason: null });
      expect((await executionsOf(workflowId))[0]).toMatchObject({ status: 'failed', error: { code: 'EXECUTION_HANDED_OFF' } });
      const sent = await events('message.sent', customer);
      expect(sent.map((e) => e.data.author)).toEqual(['bot', 'bot', 'bot', 'agent']);
      expect(sent[3]!.data).toMatchObject({ execution_id: null, node_id: null, channel_account_id: account.id, content: 'Hi, Anna from support here.' });
      const list = await t.http.get(`/v1/customers/${customer}/messages`).set(org.auth('read_only'));
      expect(list.body.data[0]).toMatchObject({ author: 'agent', direction: 'outbound', execution_id: null, channel_account_id: account.id });
      expect(list.body.data[1]).toMatchObject({ author: 'bot', content: 'Which day?' });
      await waitFor('sent', async () => (await db.query(`SELECT status FROM message_deliveries WHERE message_id = $1`, [list.body.data[0].id]))[0]?.status === 'sent');
    });

    it("a handed-off customer's webhook message is recorded and emitted but does not start the account's settings.workflow_id", async () => {
      const created = await t.http
        .post('/v1/workflows')
        .set(org.auth('read_write'))
        .send({ name: `default-${++seq}-${Date.now()}`, channel: 'whatsapp', configuration: { nodes: [{ id: 'm', type: 'message', content: 'Default workflow here' }] } });
      const workflowId = created.body.data.id as string;
      expect((await t.http.post(`/v1/workflows/${workflowId}/activate`).set(org.auth('read_write'))).status).toBe(200);
      const phone = String(200000 + ++seq);
      const account = await t.http
        .post('/v1/channel-accounts')
        .set(org.auth('read_write'))
        .send({ name: `WA ${seq}`, channel: 'whatsapp', provider: 'whatsapp_cloud', credentials: { phone_number_id: phone, access_token: TOKEN, app_secret: APP_SECRET }, settings: { workflow_id: workflowId } });
      const accountId = account.body.data.id as string;
      const customer = nextCustomer();
      expect((await post(accountId, whatsappMessagesPayload(phone, [{ from: customer, id: `wamid.d1-${seq}`, text: 'hello' }]))).status).toBe(200);
      await waitFor('the default workflow ran', async () => (await executionsOf(workflowId))[0]?.status === 'success');

      expect((await t.http.post(`/v1/customers/${customer}/handoff`).set(org.auth('read_write')).send({ reason: 'VIP' })).status).toBe(200);
      expect((await post(accountId, whatsappMessagesPayload(phone, [{ from: customer, id: `wamid.d2-${seq}`, text: 'hello again' }]))).status).toBe(200);
      const receivedEvent = await waitFor('message.received', async () => (await events('message.received', customer)).find((e) => e.data.provider_message_id === `wamid.d2-${seq}`));
      expect(receivedEvent.data).toMatchObject({ content: 'hello again', execution_id: null, channel_account_id: accountId });
      expect(await executionsOf(workflowId)).toHaveLength(1);
    });

    it('refuses a WhatsApp message 24 hours after the customer last wrote (CHANNEL_WINDOW_CLOSED, nothing queued), and a customer without an account', async () => {
      const account = await whatsappAccount();
      const customer = nextCustomer();
      expect((await post(account.id, whatsappMessagesPayload(account.phone, [{ from: customer, id: `wamid.w${seq}`, text: 'hello there' }]))).status).toBe(200);
      const [row] = await waitFor('stored', async () => {
        const r = await db.query(`SELECT customer_id FROM messages WHERE channel_account_id = $1`, [account.id]);
        return r.length ? r : undefined;
      });
      await db.query(`UPDATE messages SET created_at = created_at - interval '25 hours' WHERE customer_id = $1`, [row.customer_id]);
      const res = await agentSay(customer, { content: 'Sorry for the wait' });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('CHANNEL_WINDOW_CLOSED');
      expect(await db.query(`SELECT 1 FROM messages WHERE customer_id = $1 AND direction = 'outbound'`, [row.customer_id])).toHaveLength(0);
      expect((await t.http.get(`/v1/customers/${customer}`).set(org.auth('read_only'))).body.data.handoff.active).toBe(false);

      const direct = nextCustomer();
      await say(direct, 'no account here');
      const none = await agentSay(direct, { content: 'Hello' });
      expect(none.status).toBe(409);
      expect(none.body.error).toMatchObject({ code: 'NO_CHANNEL_ACCOUNT', field: 'channel_account_id' });
    });

    it('sends an Instagram message with the HUMAN_AGENT tag up to 7 days after the customer last wrote', async () => {
      const created = await t.http
        .post('/v1/channel-accounts')
        .set(org.auth('read_write'))
        .send({ name: 'IG', channel: 'instagram', provider: 'instagram', credentials: { account_id: '17841400000077', access_token: TOKEN, app_secret: APP_SECRET } });
      expect(created.status).toBe(201);
      const accountId = created.body.data.id as string;
      const igsid = `70${Date.now() % 1_000_000_000}`;
      expect((await post(accountId, instagramMessagesPayload('17841400000077', [{ from: igsid, mid: `mid.in${seq}`, text: 'anyone there?' }]))).status).toBe(200);
      const [row] = await waitFor('stored', async () => {
        const r = await db.query(`SELECT customer_id FROM messages WHERE channel_account_id = $1`, [accountId]);
        return r.length ? r : undefined;
      });
      await db.query(`UPDATE messages SET created_at = created_at - interval '3 days' WHERE customer_id = $1`, [row.customer_id]);
      const res = await agentSay(igsid, { content: 'Sorry, we were away', channel_account_id: accountId });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ channel: 'instagram', channel_account_id: accountId, author: 'agent' });
      await waitFor('at the provider', async () => received(igsid).length === 1);
      expect(received(igsid)[0]).toMatchObject({ channel: 'instagram', tag: 'HUMAN_AGENT' });
      expect(received(igsid)[0]!.body).toEqual({ recipient: { id: igsid }, messaging_type: 'MESSAGE_TAG', tag: 'HUMAN_AGENT', message: { text: 'Sorry, we were away' } });

      await db.query(`UPDATE messages SET created_at = created_at - interval '5 days' WHERE customer_id = $1 AND direction = 'inbound'`, [row.customer_id]);
      const late = await agentSay(igsid, { content: 'Still there?' });
      expect(late.status).toBe(409);
      expect(late.body.error.code).toBe('CHANNEL_WINDOW_CLOSED');
    });

    it('refuses bad input with the error envelope and a clear code', async () => {
      const customer = nextCustomer();
      await say(customer, 'hi');
      const handoff = (body: unknown) => t.http.post(`/v1/customers/${customer}/handoff`).set(org.auth('read_write')).send(body as object);
      const cases: [Awaited<ReturnType<typeof handoff>>, number, string, string | undefined][] = [
        [await handoff({ reason: 42 }), 400, 'INVALID_REQUEST', 'reason'],
        [await handoff({ reason: 'x'.repeat(501) }), 400, 'INVALID_REQUEST', 'reason'],
        [await handoff({ reason: 'ok', extra: true }), 400, 'INVALID_REQUEST', 'extra'],
        [await agentSay(customer, {}), 400, 'MISSING_REQUIRED_FIELD', 'content'],
        [await agentSay(customer, { content: '   ' }), 400, 'INVALID_REQUEST', 'content'],
        [await agentSay(customer, { content: 'x'.repeat(4097) }), 400, 'INVALID_REQUEST', 'content'],
        [await agentSay(customer, { content: 7 }), 400, 'INVALID_REQUEST', 'content'],
        [await agentSay(customer, { content: 'hi', channel_account_id: 'nope' }), 400, 'INVALID_REQUEST', 'channel_account_id'],
        [await agentSay(customer, { content: 'hi', channel_account_id: '00000000-0000-4000-8000-000000000000' }), 404, 'CHANNEL_ACCOUNT_NOT_FOUND', undefined],
        [await t.http.post('/v1/customers/nobody-here/handoff').set(org.auth('read_write')).send({}), 404, 'CUSTOMER_NOT_FOUND', undefined],
        [await t.http.delete('/v1/customers/nobody-here/handoff').set(org.auth('read_write')), 404, 'CUSTOMER_NOT_FOUND', undefined],
        [await agentSay('nobody-here', { content: 'hi' }), 404, 'CUSTOMER_NOT_FOUND', undefined],
        [await t.http.post(`/v1/customers/${customer}/handoff`).set(org.auth('read_only')).send({}), 403, 'INSUFFICIENT_PERMISSIONS', undefined],
        [await agentSay(customer, { content: 'hi' }, { ...org, auth: () => org.auth('read_only') }), 403, 'INSUFFICIENT_PERMISSIONS', undefined],
        [await t.http.post(`/v1/customers/${customer}/handoff`).send({}), 401, 'MISSING_AUTHENTICATION', undefined],
      ];
      for (const [res, status, code, field] of cases) {
        expect([res.status, res.body.error?.code, res.body.error?.field], JSON.stringify(res.body)).toEqual([status, code, field]);
      }
      // A whitespace-only reason is none; null too.
      const blank = await handoff({ reason: '   ' });
      expect(blank.status).toBe(200);
      expect(blank.body.data.handoff).toMatchObject({ active: true, reason: null });
      expect((await handoff({ reason: null })).body.data.handoff.reason).toBeNull();
    });

    it("keeps organizations apart: another organization's customer is 404", async () => {
      const account = await whatsappAccount();
      const customer = nextCustomer();
      expect((await post(account.id, whatsappMessagesPayload(account.phone, [{ from: customer, id: `wamid.iso${seq}`, text: 'hello' }]))).status).toBe(200);
      await waitFor('stored', async () => (await db.query(`SELECT 1 FROM messages WHERE channel_account_id = $1`, [account.id])).length === 1);
      for (const res of [
        await t.http.post(`/v1/customers/${customer}/handoff`).set(other.auth()).send({ reason: 'mine' }),
        await t.http.delete(`/v1/customers/${customer}/handoff`).set(other.auth()),
        await t.http.post(`/v1/customers/${customer}/messages`).set(other.auth()).send({ content: 'hi' }),
        await t.http.post(`/v1/customers/${customer}/messages`).set(other.auth()).send({ content: 'hi', channel_account_id: account.id }),
        await t.http.get(`/v1/customers/${customer}`).set(other.auth()),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('CUSTOMER_NOT_FOUND');
      }
      // And org A's account is not org B's to send through, even to B's own customer.
      const theirs = nextCustomer();
      await say(theirs, 'hello', other);
      const res = await t.http.post(`/v1/customers/${theirs}/messages`).set(other.auth()).send({ content: 'hi', channel_account_id: account.id });
      expect([res.status, res.body.error.code]).toEqual([404, 'CHANNEL_ACCOUNT_NOT_FOUND']);
      expect((await t.http.get(`/v1/customers/${customer}`).set(org.auth())).body.data.handoff.active).toBe(false);
      expect(await db.query(`SELECT 1 FROM outbox_events WHERE organization_id = $1 AND type = 'conversation.handoff_started' AND data->>'customer_id' = $2`, [other.id, customer])).toHaveLength(0);
    });
  });

  describe('analytics', () => {
    it('counts handed-off executions as the drop-off reason handed_off and in handoff_rate, from the rollups as from the rows', async () => {
      const keyword = `stats${seq}`;
      const workflowId = await keywordWorkflow(keyword, FORM);
      const [a, b, c] = [nextCustomer(), nextCustomer(), nextCustomer()];
      const handedOff = await waitingExecution(workflowId, a, keyword);
      await waitingExecution(workflowId, b, keyword);
      await waitingExecution(workflowId, c, keyword);
      expect((await t.http.post(`/v1/customers/${a}/handoff`).set(org.auth('read_write')).send({})).status).toBe(200);
      await waitFor('handed off', async () => (await executionsOf(workflowId)).filter((e) => e.status === 'failed').length === 1);

      const today = new Date().toISOString().slice(0, 10);
      const analytics = (start: string, end = today) =>
        t.http.get(`/v1/analytics/workflows/${workflowId}`).query({ start_date: start, end_date: end, metrics: 'handoff_rate,total_executions' }).set(org.auth('read_only'));
      const raw = await analytics(today);
      expect(raw.status).toBe(200);
      expect(raw.body.data.metrics).toEqual({ total_executions: 3, handoff_rate: 1 / 3 });

      const journey = await t.http.get('/v1/analytics/customers/journey').query({ journey_type: workflowId, start_date: today, end_date: today }).set(org.auth('read_only'));
      expect(journey.status).toBe(200);
      expect(journey.body.data.journey.drop_off_points).toEqual([expect.objectContaining({ name: 'ask', drop_off_count: 1, common_reasons: ['handed_off'] })]);

      // The handed-off execution started two days ago: a whole UTC day inside the period, read from the error-code rollup.
      await db.query(`UPDATE workflow_executions SET started_at = started_at - interval '2 days' WHERE id = $1`, [handedOff]);
      const twoDaysAgo = new Date(Date.now() - 2 * DAY_MS).toISOString().slice(0, 10);
      const threeDaysAgo = new Date(Date.now() - 3 * DAY_MS).toISOString().slice(0, 10);
      const fromRollups = await analytics(threeDaysAgo);
      expect(fromRollups.body.data.metrics).toEqual({ total_executions: 3, handoff_rate: 1 / 3 });
      const rolled = await db.query(`SELECT failed FROM workflow_error_days WHERE workflow_id = $1 AND code = 'EXECUTION_HANDED_OFF' AND day = $2::date`, [workflowId, twoDaysAgo]);
      expect(rolled).toEqual([{ failed: 1 }]);
      expect((await analytics(today)).body.data.metrics).toEqual({ total_executions: 2, handoff_rate: 0 });
      expect((await analytics(twoDaysAgo, twoDaysAgo)).body.data.metrics).toEqual({ total_executions: 1, handoff_rate: 1 });
      expect((await analytics(threeDaysAgo, threeDaysAgo)).body.data.metrics).toEqual({ total_executions: 0, handoff_rate: null });

      // Reports name the same metric: per day, from the executions.
      const created = await t.http
        .post('/v1/analytics/reports')
        .set(org.auth('read_write'))
        .send({ name: 'Handoffs', format: 'json', metrics: ['total_executions', 'handoff_rate'], granularity: 'day', filters: { start_date: threeDaysAgo, end_date: today, workflow_ids: [workflowId] } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      // Generated by this app's workers.
      await waitFor('report completed', async () => (await t.http.get(`/v1/analytics/reports/${created.body.data.report_id}`).set(org.auth('read_only'))).body.data.status === 'completed');
      const file = await t.http.get(`/v1/analytics/reports/${created.body.data.report_id}/download`).set(org.auth('read_only')).buffer(true).parse((r, cb) => {
        let text = '';
        r.on('data', (p: Buffer) => (text += p.toString('utf8')));
        r.on('end', () => cb(null, text));
      });
      const rows = (JSON.parse(file.body as string) as { rows: { bucket: string; total_executions: number; handoff_rate: number | null }[] }).rows;
      expect(rows.map((r) => [r.bucket.slice(0, 10), r.total_executions, r.handoff_rate])).toEqual([
        [threeDaysAgo, 0, null],
        [twoDaysAgo, 1, 1],
        [new Date(Date.now() - DAY_MS).toISOString().slice(0, 10), 0, null],
        [today, 2, 0],
      ]);

      await expectJourneyRollupsMatchRows(db, org.id);
    });
  });

  describe('HANDOFF_TIMEOUT', () => {
    let short: TestApp;
    let shortOrg: TestOrganization;

    beforeAll(async () => {
      short = await startTestApp({ ...RATE_LIMITS_OUT_OF_REACH, REDIS_KEY_PREFIX: `${inject('redisKeyPrefix')}:handoff-timeout`, HANDOFF_TIMEOUT: '1s' });
      shortOrg = await createOrganization(short);
      await subscribeToEvents(short, shortOrg);
    });
    afterAll(async () => {
      await short?.close();
    });

    it('is inactive once ends_at passes (no sweep needed), and the sweep emits handoff_ended once', async () => {
      const customer = nextCustomer();
      await short.http.post('/v1/messages').set(shortOrg.auth('read_write')).send({ channel: 'whatsapp', customer_id: customer, message: 'hi' });
      const started = await short.http.post(`/v1/customers/${customer}/handoff`).set(shortOrg.auth('read_write')).send({ reason: 'brief' });
      expect(started.body.data.handoff).toMatchObject({ active: true, reason: 'brief' });
      expect(Date.parse(started.body.data.handoff.ends_at) - Date.parse(started.body.data.handoff.started_at)).toBe(1000);

      await new Promise((resolve) => setTimeout(resolve, 1100));
      const detail = await short.http.get(`/v1/customers/${customer}`).set(shortOrg.auth('read_only'));
      expect(detail.body.data.handoff).toEqual({ active: false, reason: null, started_at: null, ends_at: null });

      const ended = await waitFor('handoff_ended by the sweep', async () => {
        const rows: OutboxRow[] = await db.query(`SELECT type, data FROM outbox_events WHERE organization_id = $1 AND type = 'conversation.handoff_ended'`, [shortOrg.id]);
        return rows.length > 0 ? rows : undefined;
      });
      expect(ended[0]!.data).toMatchObject({ customer_id: customer, reason: 'brief', ended_by: 'timeout', started_at: started.body.data.handoff.started_at });
      // Several sweeps later (every 2 s, in both test apps' workers): still once.
      await new Promise((resolve) => setTimeout(resolve, 4500));
      expect(await db.query(`SELECT 1 FROM outbox_events WHERE organization_id = $1 AND type = 'conversation.handoff_ended'`, [shortOrg.id])).toHaveLength(1);
      expect(await db.query(`SELECT handoff_ends_at FROM customers WHERE organization_id = $1 AND external_id = $2`, [shortOrg.id, customer])).toEqual([{ handoff_ends_at: null }]);
      // Automation is back: the customer's messages match triggers again (none here, but nothing stops them).
      const after = await short.http.post('/v1/messages').set(shortOrg.auth('read_write')).send({ channel: 'whatsapp', customer_id: customer, message: 'back' });
      expect(after.status).toBe(202);
    });

    it('a start after an expired handoff that was not swept yet ends the old one first (each end emitted once)', async () => {
      const customer = nextCustomer();
      await short.http.post('/v1/messages').set(shortOrg.auth('read_write')).send({ channel: 'whatsapp', customer_id: customer, message: 'hi' });
      // An expired handoff no sweep has seen yet (written directly, as the sweep would find it).
      await db.query(
        `UPDATE customers SET handoff_reason = 'old', handoff_started_at = now() - interval '1 hour', handoff_ends_at = now() - interval '1 millisecond'
          WHERE organization_id = $1 AND external_id = $2`,
        [shortOrg.id, customer],
      );
      // Read as inactive whether or not a sweep cleared it since.
      expect((await short.http.get(`/v1/customers/${customer}`).set(shortOrg.auth('read_only'))).body.data.handoff.active).toBe(false);
      const res = await short.http.post(`/v1/customers/${customer}/handoff`).set(shortOrg.auth('read_write')).send({ reason: 'new' });
      expect(res.body.data.handoff).toMatchObject({ active: true, reason: 'new' });
      const rows: OutboxRow[] = await db.query(
        `SELECT type, data FROM outbox_events WHERE organization_id = $1 AND type LIKE 'conversation.%' AND data->>'customer_id' = $2 ORDER BY type`,
        [shortOrg.id, customer],
      );
      // One statement writes both (no order between them: same time).
      expect(rows.map((r) => [r.type, r.data.reason, r.data.ended_by])).toEqual([
        ['conversation.handoff_ended', 'old', 'timeout'],
        ['conversation.handoff_started', 'new', undefined],
      ]);
    });
  });
});
