import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES_PAGE } from '../../src/customers/customers.service.js';
import { createTrigger } from '../factories/triggers.js';
import { createActiveWorkflow } from '../factories/workflows.js';
import type { FakeMeta } from '../utils/fake-meta.js';
import { startChannelsTestApp, type ChannelsTestApp } from '../utils/channels-test-app.js';
import { metaSignature } from '../utils/meta-signing.js';
import { whatsappMessagesPayload, whatsappStatusesPayload } from '../utils/meta-payloads.js';
import type { TestApp, TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';

const APP_SECRET = 'c0ffee00c0ffee00c0ffee00c0ffee00';
const TOKEN = 'EAAGtest-messages-token-0123456789';

interface Listed {
  id: string;
  direction: string;
  author: string;
  content: string;
  delivery_status: string | null;
  delivery_error: { code: string | null; title: string | null } | null;
}

/**
 * `GET /v1/customers/{customer_id}/messages` with each message's delivery state: sends through a WhatsApp
 * account (the fake Graph API) delivered and failed by the provider's status callbacks, inbound messages
 * and outbound ones with no provider (null), in one statement.
 */
describe("a customer's messages with their delivery status", () => {
  let app: ChannelsTestApp;
  let t: TestApp;
  let fake: FakeMeta;
  let org: TestOrganization;
  let other: TestOrganization;
  let db: DataSource;
  let seq = 0;

  beforeAll(async () => {
    app = await startChannelsTestApp('customer-messages');
    ({ t, fake, org, other, db } = app);
  });
  afterAll(() => app?.close());

  const messages = (customer: string, query: Record<string, number> = {}, who = org) =>
    t.http.get(`/v1/customers/${encodeURIComponent(customer)}/messages`).query(query).set(who.auth('read_only'));
  const post = (accountId: string, payload: unknown) => {
    const raw = JSON.stringify(payload);
    return t.http.post(`/v1/channel-accounts/${accountId}/webhook`).set('Content-Type', 'application/json').set('X-Hub-Signature-256', metaSignature(APP_SECRET, raw)).send(raw);
  };

  it('shows delivered, read, failed (with the provider error) and sent as the provider reported them; null for inbound', async () => {
    const phone = String(200000 + ++seq);
    const account = await t.http
      .post('/v1/channel-accounts')
      .set(org.auth('read_write'))
      .send({ name: 'Deliveries', channel: 'whatsapp', provider: 'whatsapp_cloud', credentials: { phone_number_id: phone, access_token: TOKEN, app_secret: APP_SECRET } });
    expect(account.status).toBe(201);
    const accountId = account.body.data.id as string;
    const workflowId = await createActiveWorkflow(t, org, [
      { id: 'a', type: 'message', content: 'first', next: 'b' },
      { id: 'b', type: 'message', content: 'second', next: 'c' },
      { id: 'c', type: 'message', content: 'third', next: 'd' },
      { id: 'd', type: 'message', content: 'fourth' },
    ]);
    await createTrigger(t, org, workflowId, 'message', { keywords: ['statuses'] });
    const customer = `1555${String(Date.now() % 1_000_000).padStart(6, '0')}`;
    expect((await post(accountId, whatsappMessagesPayload(phone, [{ from: customer, id: `wamid.in-${Date.now()}`, text: 'statuses please' }]))).status).toBe(200);
    await waitFor('four sends', async () => fake.received.filter((m) => m.to === customer).length === 4);
    const sent = fake.received.filter((m) => m.to === customer).map((m) => m.providerMessageId);
    await waitFor('the sends recorded', async () => (await db.query(`SELECT 1 FROM message_deliveries WHERE customer_id = (SELECT id FROM customers WHERE external_id = $1) AND status = 'sent'`, [customer])).length === 4);
    const statuses = whatsappStatusesPayload(phone, [
      { id: sent[0]!, status: 'delivered', recipient: customer },
      { id: sent[1]!, status: 'read', recipient: customer },
      { id: sent[2]!, status: 'failed', recipient: customer, error: { code: 131026, title: 'Message undeliverable' } },
    ]);
    expect((await post(accountId, statuses)).status).toBe(200);
    await waitFor('statuses applied', async () => (await db.query(`SELECT 1 FROM channel_webhook_payloads WHERE channel_account_id = $1`, [accountId])).length === 0);

    const res = await messages(customer);
    expect(res.status).toBe(200);
    const listed = res.body.data as Listed[];
    expect(listed.map((m) => [m.direction, m.author, m.content, m.delivery_status, m.delivery_error])).toEqual([
      ['outbound', 'bot', 'fourth', 'sent', null],
      ['outbound', 'bot', 'third', 'failed', { code: '131026', title: 'Message undeliverable' }],
      ['outbound', 'bot', 'second', 'read', null],
      ['outbound', 'bot', 'first', 'delivered', null],
      ['inbound', 'customer', 'statuses please', null, null],
    ]);
    expect(res.body.pagination).toEqual({ page: 1, limit: 20, total: 5, pages: 1 });
    // Pages keep each message's state.
    const second = await messages(customer, { limit: 2, page: 2 });
    expect((second.body.data as Listed[]).map((m) => [m.content, m.delivery_status])).toEqual([['second', 'read'], ['first', 'delivered']]);
    expect(second.body.pagination).toEqual({ page: 2, limit: 2, total: 5, pages: 3 });
    const past = await messages(customer, { limit: 2, page: 9 });
    expect(past.body).toEqual({ data: [], pagination: { page: 9, limit: 2, total: 5, pages: 3 } });
    // Another organization does not see the customer.
    const hidden = await messages(customer, {}, other);
    expect(hidden.status).toBe(404);
    expect(hidden.body.error.code).toBe('CUSTOMER_NOT_FOUND');
  });

  it('answers null for an outbound message with no channel account to send through', async () => {
    const workflowId = await createActiveWorkflow(t, org, [{ id: 'hi', type: 'message', content: 'relayed by the client' }]);
    await createTrigger(t, org, workflowId, 'message', { keywords: ['relay'] });
    const customer = `+1777${Date.now() % 1_000_000}`;
    expect((await t.http.post('/v1/messages').set(org.auth('read_write')).send({ channel: 'whatsapp', customer_id: customer, message: 'relay please' })).status).toBe(202);
    const listed = await waitFor('the reply', async () => {
      const res = await messages(customer);
      return res.body.data?.length === 2 ? (res.body.data as Listed[]) : undefined;
    });
    expect(listed.map((m) => [m.direction, m.content, m.delivery_status, m.delivery_error])).toEqual([
      ['outbound', 'relayed by the client', null, null],
      ['inbound', 'relay please', null, null],
    ]);
    expect((await messages('+10000000000')).body.error.code).toBe('CUSTOMER_NOT_FOUND');
    expect((await messages('x'.repeat(201))).status).toBe(404);
  });

  it('joins each message of the page to its delivery in the partition of its month only (run-time pruning), by primary key', async () => {
    const [customer] = await db.query(`SELECT external_id FROM customers WHERE organization_id = $1 AND channel = 'whatsapp' ORDER BY created_at LIMIT 1`, [org.id]);
    const partitions = (await db.query(`SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'message_deliveries'::regclass`))[0].n as number;
    expect(partitions).toBeGreaterThan(2);
    // As on a table too large to scan (these hold a few rows, which a scan reads faster than an index).
    const plan = await db.transaction(async (manager) => {
      await manager.query('SET LOCAL enable_seqscan = off');
      const [{ 'QUERY PLAN': [explained] }] = await manager.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${MESSAGES_PAGE.text}`, [org.id, customer.external_id, 20, 0]);
      return explained.Plan as Record<string, unknown>;
    });
    const scans: { relation: string; loops: number; type: string; index?: string }[] = [];
    const walk = (n: Record<string, unknown>) => {
      if (typeof n['Relation Name'] === 'string') scans.push({ relation: n['Relation Name'] as string, loops: n['Actual Loops'] as number, type: n['Node Type'] as string, index: n['Index Name'] as string | undefined });
      for (const c of (n.Plans as Record<string, unknown>[] | undefined) ?? []) walk(c);
    };
    walk(plan);
    const deliveries = scans.filter((s) => s.relation.startsWith('message_deliveries'));
    // Every partition is in the plan; only this month's is ever probed (the others never run), once per message of the page.
    expect(deliveries).toHaveLength(partitions);
    const probed = deliveries.filter((s) => s.loops > 0);
    expect(probed).toHaveLength(1);
    expect(probed[0]).toMatchObject({ type: 'Index Scan', loops: 5, index: expect.stringMatching(/_pkey$/) });
  });
});
