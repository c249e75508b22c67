import { createHmac } from 'node:crypto';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutionsService } from '../../src/executions/executions.service.js';
import { createTrigger } from '../factories/triggers.js';
import { createActiveWorkflow } from '../factories/workflows.js';
import type { FakeMeta } from '../utils/fake-meta.js';
import { startChannelsTestApp, type ChannelsTestApp } from '../utils/channels-test-app.js';
import { metaSignature } from '../utils/meta-signing.js';
import { instagramMessagesPayload, whatsappBatch, whatsappMessagesPayload, whatsappStatusesPayload } from '../utils/meta-payloads.js';
import { type TestApp, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';

const APP_SECRET = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
const TOKEN = 'EAAGtest-access-token-0123456789';

/** Meta's documented X-Hub-Signature-256, computed by the tests (not by the service's code). */
const sign = (raw: string, secret = APP_SECRET) => metaSignature(secret, raw);

describe('channel accounts: WhatsApp and Instagram through the providers', () => {
  let app: ChannelsTestApp;
  let t: TestApp;
  let fake: FakeMeta;
  let org: TestOrganization;
  let other: TestOrganization;
  let db: DataSource;
  let seq = 0;

  beforeAll(async () => {
    app = await startChannelsTestApp('channels', { PUBLIC_BASE_URL: 'https://api.example.com' });
    ({ t, fake, org, other, db } = app);
  });
  afterAll(() => app?.close());

  const nextNumber = () => `1555${String(Date.now() % 1_000_000).padStart(6, '0')}${++seq}`;

  async function whatsappAccount(o = org, extra: Record<string, unknown> = {}) {
    const phone = String(100000 + ++seq);
    const res = await t.http
      .post('/v1/channel-accounts')
      .set(o.auth('read_write'))
      .send({ name: `WA ${seq}`, channel: 'whatsapp', provider: 'whatsapp_cloud', credentials: { phone_number_id: phone, access_token: TOKEN, app_secret: APP_SECRET }, ...extra });
    expect(res.status).toBe(201);
    return { ...(res.body.data as { id: string; verify_token: string; webhook_url: string }), phone };
  }

  /** Three replies in a row: 'one', 'two', 'three'. */
  const ONE_TWO_THREE = [
    { id: 'a', type: 'message', content: 'one', next: 'b' },
    { id: 'b', type: 'message', content: 'two', next: 'c' },
    { id: 'c', type: 'message', content: 'three' },
  ];

  async function keywordWorkflow(keyword: string, nodes: Record<string, unknown>[]) {
    const id = await createActiveWorkflow(t, org, nodes);
    await createTrigger(t, org, id, 'message', { keywords: [keyword] });
    return id;
  }

  const post = (accountId: string, payload: unknown, signature?: string | null) => {
    const raw = JSON.stringify(payload);
    const req = t.http.post(`/v1/channel-accounts/${accountId}/webhook`).set('Content-Type', 'application/json');
    if (signature !== null) req.set('X-Hub-Signature-256', signature ?? sign(raw));
    return req.send(raw);
  };

  /** A reply kept for a waiting execution in the database (not a message on its account), its run queued; its status and error once it ends. */
  async function runWithKeptReply(execution: { id: string; customer_id: string }): Promise<{ status: string; error: { code: string; node_id?: string } | null }> {
    await db.query(
      `INSERT INTO messages (organization_id, customer_id, channel, direction, content, execution_id) VALUES ($1, $2, 'whatsapp', 'inbound', 'yes', $3)`,
      [org.id, execution.customer_id, execution.id],
    );
    await t.app.get(ExecutionsService).enqueue(execution.id);
    return waitFor('finished', async () => {
      const [e] = await db.query(`SELECT status, error FROM workflow_executions WHERE id = $1`, [execution.id]);
      return e.status !== 'running' ? e : undefined;
    });
  }

  const received = (to: string) => fake.received.filter((m) => m.to === to);
  const textOf = (m: { body: unknown }) => (m.body as { text?: { body: string } }).text?.body;

  describe('the resource', () => {
    it('creates, reads, updates and deletes an account; credentials are write-only and sealed', async () => {
      const account = await whatsappAccount();
      const got = await t.http.get(`/v1/channel-accounts/${account.id}`).set(org.auth('read_only'));
      expect(got.status).toBe(200);
      expect(got.body.data).toMatchObject({
        channel: 'whatsapp',
        provider: 'whatsapp_cloud',
        credentials: { phone_number_id: true, access_token: true, app_secret: true },
        webhook_url: `https://api.example.com/v1/channel-accounts/${account.id}/webhook`,
      });
      expect(got.body.data.verify_token).toMatch(/^[\x21-\x7e]{16,}$/);
      expect(JSON.stringify(got.body)).not.toContain(TOKEN);
      expect(JSON.stringify(got.body)).not.toContain(APP_SECRET);
      const [row] = await db.query(`SELECT credentials_sealed, verify_token_sealed FROM channel_accounts WHERE id = $1`, [account.id]);
      expect(row.credentials_sealed).not.toContain(TOKEN);
      expect(row.credentials_sealed).not.toContain(APP_SECRET);
      expect(row.verify_token_sealed).not.toContain(account.verify_token);

      const list = await t.http.get('/v1/channel-accounts?channel=whatsapp').set(org.auth('read_only'));
      expect(list.status).toBe(200);
      expect(list.body.data.map((a: { id: string }) => a.id)).toContain(account.id);

      const updated = await t.http.put(`/v1/channel-accounts/${account.id}`).set(org.auth('read_write')).send({ name: 'Renamed', credentials: { access_token: `${TOKEN}-rotated` } });
      expect(updated.status).toBe(200);
      expect(updated.body.data).toMatchObject({ name: 'Renamed', credentials: { phone_number_id: true, access_token: true, app_secret: true } });

      expect((await t.http.delete(`/v1/channel-accounts/${account.id}`).set(org.auth('read_write'))).status).toBe(403);
      expect((await t.http.delete(`/v1/channel-accounts/${account.id}`).set(org.auth('full_access'))).status).toBe(200);
      expect((await t.http.get(`/v1/channel-accounts/${account.id}`).set(org.auth('read_only'))).body.error.code).toBe('CHANNEL_ACCOUNT_NOT_FOUND');
      const hook = await t.http.get(`/v1/channel-accounts/${account.id}/webhook`).query({ 'hub.mode': 'subscribe', 'hub.verify_token': account.verify_token, 'hub.challenge': 'x' });
      expect(hook.status).toBe(404);
      expect((await post(account.id, whatsappMessagesPayload(account.phone, [{ from: '15550001', id: 'wamid.gone', text: 'hi' }]))).status).toBe(404);
    });

    it('answers 404 to a payload for an account another process deleted while this one still had it', async () => {
      const account = await whatsappAccount();
      // Read (and kept) by this process, then deleted behind its back, as through another API process.
      expect((await t.http.get(`/v1/channel-accounts/${account.id}/webhook`).query({ 'hub.mode': 'subscribe', 'hub.verify_token': account.verify_token, 'hub.challenge': 'c' })).status).toBe(200);
      await db.query(`DELETE FROM channel_accounts WHERE id = $1`, [account.id]);
      const res = await post(account.id, whatsappMessagesPayload(account.phone, [{ from: '15550002', id: `wamid.stale${seq}`, text: 'hi' }]));
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('CHANNEL_ACCOUNT_NOT_FOUND');
    });

    it('refuses bad channels, providers, credentials and settings with the field named, never echoing a secret', async () => {
      const base = { name: 'x', channel: 'whatsapp', provider: 'whatsapp_cloud', credentials: { phone_number_id: '1', access_token: TOKEN, app_secret: APP_SECRET } };
      const cases: [Record<string, unknown>, string][] = [
        [{ ...base, channel: 'sms' }, 'channel'],
        [{ ...base, provider: 'twilio' }, 'provider'],
        [{ ...base, provider: 'nope' }, 'provider'],
        [{ ...base, credentials: { phone_number_id: '1', access_token: TOKEN } }, 'credentials.app_secret'],
        [{ ...base, credentials: { ...base.credentials, phone_number_id: 'abc' } }, 'credentials.phone_number_id'],
        [{ ...base, credentials: { ...base.credentials, extra: 'x' } }, 'credentials.extra'],
        [{ ...base, credentials: 'x' }, 'credentials'],
        [{ ...base, settings: { workflow_id: 'nope' } }, 'settings.workflow_id'],
        [{ ...base, settings: { workflow_id: '00000000-0000-4000-8000-000000000000' } }, 'settings.workflow_id'],
        [{ ...base, settings: { other: 1 } }, 'settings.other'],
        [{ ...base, verify_token: 'short' }, 'verify_token'],
      ];
      for (const [body, field] of cases) {
        const res = await t.http.post('/v1/channel-accounts').set(org.auth('read_write')).send(body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'INVALID_CHANNEL_ACCOUNT', field });
        expect(JSON.stringify(res.body)).not.toContain(TOKEN);
      }
      const missing = await t.http.post('/v1/channel-accounts').set(org.auth('read_write')).send({ name: 'x', channel: 'whatsapp', provider: 'whatsapp_cloud' });
      expect(missing.status).toBe(400);
      const voice = await t.http
        .post('/v1/channel-accounts')
        .set(org.auth('read_write'))
        .send({ name: 'line', channel: 'voice', provider: 'twilio', credentials: { account_sid: `AC${'a'.repeat(32)}`, auth_token: 'b'.repeat(32), phone_number: '+14155550100' } });
      expect(voice.status).toBe(201);
      expect(voice.body.data.verify_token).toBeUndefined();
      expect(voice.body.data.webhook_url).toMatch(/\/voice$/);
    });

    it('keeps organizations apart', async () => {
      const account = await whatsappAccount();
      for (const res of [
        await t.http.get(`/v1/channel-accounts/${account.id}`).set(other.auth()),
        await t.http.put(`/v1/channel-accounts/${account.id}`).set(other.auth()).send({ name: 'mine' }),
        await t.http.delete(`/v1/channel-accounts/${account.id}`).set(other.auth()),
        await t.http.post('/v1/messages').set(other.auth()).send({ channel: 'whatsapp', customer_id: '1555', message: 'hi', channel_account_id: account.id }),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('CHANNEL_ACCOUNT_NOT_FOUND');
      }
      const list = await t.http.get('/v1/channel-accounts').set(other.auth());
      expect(list.body.data.map((a: { id: string }) => a.id)).not.toContain(account.id);
      // A payload signed for org A's account creates nothing in org B.
      expect((await post(account.id, whatsappMessagesPayload(account.phone, [{ from: '15559999', id: `wamid.iso${seq}`, text: 'hello' }]))).status).toBe(200);
      await waitFor('message stored', async () => (await db.query(`SELECT 1 FROM messages WHERE provider_message_id = $1`, [`wamid.iso${seq}`])).length > 0);
      expect(await db.query(`SELECT 1 FROM customers WHERE organization_id = $1 AND external_id = '15559999'`, [other.id])).toHaveLength(0);
    });
  });

  describe('inbound webhooks', () => {
    it("answers Meta's verification handshake", async () => {
      const account = await whatsappAccount();
      const url = `/v1/channel-accounts/${account.id}/webhook`;
      const ok = await t.http.get(url).query({ 'hub.mode': 'subscribe', 'hub.verify_token': account.verify_token, 'hub.challenge': '1158201444' });
      expect(ok.status).toBe(200);
      expect(ok.headers['content-type']).toMatch(/^text\/plain/);
      expect(ok.text).toBe('1158201444');
      expect((await t.http.get(url).query({ 'hub.mode': 'subscribe', 'hub.verify_token': 'wrong-token-xxxxxxxx', 'hub.challenge': '1' })).status).toBe(403);
      expect((await t.http.get(url).query({ 'hub.verify_token': account.verify_token, 'hub.challenge': '1' })).status).toBe(403);
    });

    it('checks X-Hub-Signature-256 on the raw bytes before storing anything', async () => {
      const account = await whatsappAccount();
      const payload = whatsappMessagesPayload(account.phone, [{ from: nextNumber(), id: `wamid.sig${seq}`, text: 'hi' }]);
      const raw = JSON.stringify(payload);
      const hex = createHmac('sha256', APP_SECRET).update(raw).digest('hex');
      const attempts: [string | null, string][] = [
        [sign(raw, 'another-app-secret-0000000000'), raw],
        [sign(raw), raw.replace('"hi"', '"ho"')],
        [hex, raw],
        [null, raw],
        ['sha256=zz', raw],
      ];
      for (const [signature, body] of attempts) {
        const req = t.http.post(`/v1/channel-accounts/${account.id}/webhook`).set('Content-Type', 'application/json');
        if (signature !== null) req.set('X-Hub-Signature-256', signature);
        const res = await req.send(body);
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('INVALID_SIGNATURE');
      }
      const unsignedText = await t.http.post(`/v1/channel-accounts/${account.id}/webhook`).set('Content-Type', 'text/plain').send('garbage');
      expect(unsignedText.status).toBe(401);
      expect(await db.query(`SELECT 1 FROM channel_webhook_payloads WHERE channel_account_id = $1`, [account.id])).toHaveLength(0);
      expect(await db.query(`SELECT 1 FROM messages WHERE channel_account_id = $1`, [account.id])).toHaveLength(0);
      const good = await post(account.id, payload);
      expect(good.status).toBe(200);
      await waitFor('stored', async () => (await db.query(`SELECT 1 FROM messages WHERE channel_account_id = $1`, [account.id])).length === 1);
    });

    it('applies every message of a batched payload, and a redelivery changes nothing', async () => {
      const account = await whatsappAccount();
      const [a, b] = [nextNumber(), nextNumber()];
      const payload = whatsappBatch(
        whatsappMessagesPayload(account.phone, [
          { from: a, id: `wamid.b1-${seq}`, text: 'first' },
          { from: b, id: `wamid.b2-${seq}`, text: 'hello' },
          { from: a, id: `wamid.b3-${seq}`, text: 'second' },
        ]),
        whatsappMessagesPayload(account.phone, [{ from: b, id: `wamid.b4-${seq}`, type: 'image' }]),
      );
      expect((await post(account.id, payload)).status).toBe(200);
      const rows = await waitFor('four messages', async () => {
        const r = await db.query(
          `SELECT c.external_id, m.content, m.metadata->>'type' AS type FROM messages m JOIN customers c ON c.id = m.customer_id WHERE m.channel_account_id = $1 ORDER BY m.created_at, m.id`,
          [account.id],
        );
        return r.length === 4 ? r : undefined;
      });
      expect(rows.filter((r: { external_id: string }) => r.external_id === a).map((r: { content: string }) => r.content)).toEqual(['first', 'second']);
      expect(rows.find((r: { type: string }) => r.type === 'image')).toMatchObject({ external_id: b, content: '' });
      const events = await db.query(`SELECT count(*)::int AS n FROM outbox_events WHERE type = 'message.received' AND data->>'channel_account_id' = $1`, [account.id]);
      expect(events[0].n).toBe(4);

      expect((await post(account.id, payload)).status).toBe(200);
      await waitFor('payload applied', async () => (await db.query(`SELECT 1 FROM channel_webhook_payloads WHERE channel_account_id = $1`, [account.id])).length === 0);
      expect(await db.query(`SELECT 1 FROM messages WHERE channel_account_id = $1`, [account.id])).toHaveLength(4);
      const again = await db.query(`SELECT count(*)::int AS n FROM outbox_events WHERE type = 'message.received' AND data->>'channel_account_id' = $1`, [account.id]);
      expect(again[0].n).toBe(4);
    });

    it('stores a message delivered several times at once exactly once (the provider id is claimed in the receive statement)', async () => {
      const account = await whatsappAccount();
      const from = nextNumber();
      const payload = whatsappMessagesPayload(account.phone, [{ from, id: `wamid.race-${seq}`, text: 'only once' }]);
      const answers = await Promise.all(Array.from({ length: 6 }, () => post(account.id, payload)));
      expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 6 }, () => 200));
      await waitFor('payloads applied', async () => (await db.query(`SELECT 1 FROM channel_webhook_payloads WHERE channel_account_id = $1`, [account.id])).length === 0);
      await waitFor('stored', async () => (await db.query(`SELECT 1 FROM messages WHERE channel_account_id = $1`, [account.id])).length > 0);
      expect(await db.query(`SELECT 1 FROM messages WHERE channel_account_id = $1 AND direction = 'inbound'`, [account.id])).toHaveLength(1);
      expect(await db.query(`SELECT 1 FROM message_provider_ids WHERE channel_account_id = $1 AND provider_message_id = $2`, [account.id, `wamid.race-${seq}`])).toHaveLength(1);
      const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM outbox_events WHERE type = 'message.received' AND data->>'channel_account_id' = $1`, [account.id]);
      expect(n).toBe(1);
    });

    it('ignores Instagram echoes of our own messages', async () => {
      const res = await t.http
        .post('/v1/channel-accounts')
        .set(org.auth('read_write'))
        .send({ name: 'IG', channel: 'instagram', provider: 'instagram', credentials: { account_id: '17841400000000', access_token: TOKEN, app_secret: APP_SECRET } });
      expect(res.status).toBe(201);
      const id = res.body.data.id as string;
      const payload = instagramMessagesPayload('17841400000000', [
        { from: '9001', mid: `mid.echo${seq}`, text: 'we said this', echo: true },
        { from: '9001', mid: `mid.real${seq}`, text: 'customer said this' },
      ]);
      expect((await post(id, payload)).status).toBe(200);
      await waitFor('applied', async () => (await db.query(`SELECT 1 FROM channel_webhook_payloads WHERE channel_account_id = $1`, [id])).length === 0);
      const stored = await db.query(`SELECT content FROM messages WHERE channel_account_id = $1`, [id]);
      expect(stored).toEqual([{ content: 'customer said this' }]);
    });
  });

  describe('conversations', () => {
    it('runs a whole WhatsApp conversation through the provider, with delivery statuses', async () => {
      const account = await whatsappAccount();
      const workflowId = await keywordWorkflow('order', [
        { id: 'hello', type: 'message', content: 'Hi! Let us find your order.', next: 'ask' },
        { id: 'ask', type: 'form', fields: [{ name: 'order_number', type: 'text', label: 'What is your order number?' }], next: 'bye' },
        { id: 'bye', type: 'message', content: 'Thanks, we are on it.' },
      ]);
      const customer = nextNumber();
      expect((await post(account.id, whatsappMessagesPayload(account.phone, [{ from: customer, id: `wamid.in1-${seq}`, text: 'Where is my order?' }]))).status).toBe(200);
      await waitFor('two replies', async () => received(customer).length >= 2);
      const first = received(customer);
      expect(first.map(textOf)).toEqual(['Hi! Let us find your order.', 'What is your order number?']);
      expect(first[0]?.path).toBe(`/v21.0/${account.phone}/messages`);
      expect((fake.requests.find((r) => (r.body as { to?: string })?.to === customer)?.headers.authorization)).toBe(`Bearer ${TOKEN}`);

      const [execution] = await db.query(`SELECT id, channel_account_id FROM workflow_executions WHERE workflow_id = $1`, [workflowId]);
      expect(execution.channel_account_id).toBe(account.id);
      const wamid = first[0]!.providerMessageId;
      // Statuses out of order: read before delivered; a repeat of each.
      const statuses = whatsappStatusesPayload(account.phone, [
        { id: wamid, status: 'read', recipient: customer },
        { id: wamid, status: 'delivered', recipient: customer },
      ]);
      expect((await post(account.id, statuses)).status).toBe(200);
      expect((await post(account.id, whatsappStatusesPayload(account.phone, [{ id: wamid, status: 'delivered', recipient: customer }]))).status).toBe(200);
      await waitFor('read', async () => (await db.query(`SELECT 1 FROM message_deliveries d JOIN messages m ON m.id = d.message_id WHERE m.provider_message_id = $1 AND d.status = 'read'`, [wamid])).length === 1);
      await waitFor('payloads applied', async () => (await db.query(`SELECT 1 FROM channel_webhook_payloads WHERE channel_account_id = $1`, [account.id])).length === 0);
      const events = await db.query(`SELECT type FROM outbox_events WHERE data->>'provider_message_id' = $1 ORDER BY id`, [wamid]);
      expect(events.map((e: { type: string }) => e.type)).toEqual(['message.read']);

      expect((await post(account.id, whatsappMessagesPayload(account.phone, [{ from: customer, id: `wamid.in2-${seq}`, text: 'A-1234' }]))).status).toBe(200);
      await waitFor('success', async () => (await db.query(`SELECT status FROM workflow_executions WHERE id = $1`, [execution.id]))[0].status === 'success');
      await waitFor('goodbye sent', async () => received(customer).length === 3);
      expect(received(customer).map(textOf)[2]).toBe('Thanks, we are on it.');

      const detail = await waitFor('all sent', async () => {
        const res = await t.http.get(`/v1/workflows/${workflowId}/executions/${execution.id}`).set(org.auth('read_only'));
        const steps = res.body.data.steps as { node_id: string; output: Record<string, unknown> }[];
        return steps.every((s) => s.node_id === 'ask' || s.output.delivery_status === 'sent' || s.output.delivery_status === 'read') ? steps : undefined;
      });
      expect(detail.find((s) => s.node_id === 'hello')?.output).toMatchObject({ message_sent: true, delivery_status: 'read', provider_message_id: wamid });
      const customerRow = await db.query(`SELECT attributes FROM customers WHERE organization_id = $1 AND external_id = $2`, [org.id, customer]);
      expect(customerRow[0].attributes.order_number).toBe('A-1234');

      // Analytics from the delivery truth: three sends settled, the first delivered and read.
      const today = new Date().toISOString().slice(0, 10);
      const analytics = await t.http
        .get(`/v1/analytics/workflows/${workflowId}`)
        .query({ start_date: today, end_date: today, metrics: 'messages_delivered,messages_read,delivery_rate,read_rate,total_messages_sent' })
        .set(org.auth('read_only'));
      expect(analytics.status).toBe(200);
      expect(analytics.body.data.metrics).toEqual({ total_messages_sent: 3, messages_delivered: 1, messages_read: 1, delivery_rate: 1 / 3, read_rate: 1 });
    });

    it('applies a status that came before its send was recorded, once the sweep finds the send', async () => {
      const account = await whatsappAccount();
      await keywordWorkflow('early', [{ id: 'm', type: 'message', content: 'status first' }]);
      const customer = nextNumber();
      await post(account.id, whatsappMessagesPayload(account.phone, [{ from: customer, id: `wamid.e-${seq}`, text: 'early please' }]));
      await waitFor('sent', async () => received(customer).length === 1);
      const wamid = received(customer)[0]!.providerMessageId;
      const [message] = await waitFor('recorded', async () => {
        const r = await db.query(`SELECT id FROM messages WHERE provider_message_id = $1`, [wamid]);
        return r.length ? r : undefined;
      });
      // As if the sender had not recorded the provider's id yet when Meta's callback came.
      // (The statuses find their message through message_provider_ids, which the sender writes with it.)
      await db.query(`UPDATE messages SET provider_message_id = NULL WHERE id = $1`, [message.id]);
      await db.query(`DELETE FROM message_provider_ids WHERE message_id = $1`, [message.id]);
      expect((await post(account.id, whatsappStatusesPayload(account.phone, [{ id: wamid, status: 'delivered', recipient: customer }]))).status).toBe(200);
      const [kept] = await waitFor('kept for later', async () => {
        const r = await db.query(`SELECT id, attempts FROM channel_webhook_payloads WHERE channel_account_id = $1`, [account.id]);
        return r.length === 1 ? r : undefined;
      });
      expect(kept.attempts).toBe(0);
      await db.query(`UPDATE messages SET provider_message_id = $2 WHERE id = $1`, [message.id, wamid]);
      await db.query(`INSERT INTO message_provider_ids (channel_account_id, provider_message_id, message_id) SELECT channel_account_id, $2, id FROM messages WHERE id = $1`, [
        message.id,
        wamid,
      ]);
      await db.query(`UPDATE channel_webhook_payloads SET next_attempt_at = now() WHERE id = $1`, [kept.id]);
      await waitFor('applied by the sweep', async () => (await db.query(`SELECT 1 FROM channel_webhook_payloads WHERE id = $1`, [kept.id])).length === 0);
      const [delivery] = await db.query(`SELECT status, delivered_at FROM message_deliveries WHERE message_id = $1`, [message.id]);
      expect(delivery.status).toBe('delivered');
      expect(delivery.delivered_at).not.toBeNull();
    });

    it('fails the unsent messages of a deleted account, and keeps a send in flight failed when the provider then accepts it', async () => {
      const account = await whatsappAccount();
      await keywordWorkflow('gone', [
        { id: 'a', type: 'message', content: 'in flight', next: 'b' },
        { id: 'b', type: 'message', content: 'never sent' },
      ]);
      const customer = nextNumber();
      let release!: () => void;
      fake.hold = new Promise<void>((resolve) => (release = resolve));
      try {
        await post(account.id, whatsappMessagesPayload(account.phone, [{ from: customer, id: `wamid.g-${seq}`, text: 'gone please' }]));
        await waitFor('the first send held at the provider', async () => fake.requests.some((r) => (r.body as { to?: string })?.to === customer));
        expect((await t.http.delete(`/v1/channel-accounts/${account.id}`).set(org.auth('full_access'))).status).toBe(200);
      } finally {
        fake.hold = undefined;
        release();
      }
      await waitFor('accepted by the provider', async () => received(customer).length === 1);
      await waitFor('provider id recorded', async () =>
        (await db.query(`SELECT 1 FROM messages WHERE channel_account_id = $1 AND direction = 'outbound' AND provider_message_id IS NOT NULL`, [account.id])).length === 1,
      );
      const rows = await db.query(
        `SELECT m.content, d.status, d.error_code FROM message_deliveries d JOIN messages m ON m.id = d.message_id WHERE d.channel_account_id = $1 ORDER BY d.queued_at`,
        [account.id],
      );
      expect(rows).toEqual([
        { content: 'in flight', status: 'failed', error_code: 'CHANNEL_ACCOUNT_DELETED' },
        { content: 'never sent', status: 'failed', error_code: 'CHANNEL_ACCOUNT_DELETED' },
      ]);
      const events = await db.query(`SELECT count(*)::int AS n FROM outbox_events WHERE type = 'message.failed' AND data->>'channel_account_id' = $1`, [account.id]);
      expect(events[0].n).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(received(customer)).toHaveLength(1);
    });

    it('keeps the delivery rollups equal to the sends, and shows each account\'s send backlog', async () => {
      const account = await whatsappAccount();
      await keywordWorkflow('backlog', [{ id: 'm', type: 'message', content: 'held' }]);
      const customer = nextNumber();
      let release!: () => void;
      fake.hold = new Promise<void>((resolve) => (release = resolve));
      try {
        await post(account.id, whatsappMessagesPayload(account.phone, [{ from: customer, id: `wamid.bl-${seq}`, text: 'backlog please' }]));
        await waitFor('held at the provider', async () => fake.requests.some((r) => (r.body as { to?: string })?.to === customer));
        const realtime = await t.http.get('/v1/analytics/realtime').query({ channel: 'whatsapp' }).set(org.auth('read_only'));
        expect(realtime.status).toBe(200);
        const row = realtime.body.data.channel_account_metrics.find((a: { channel_account_id: string }) => a.channel_account_id === account.id);
        expect(row).toMatchObject({ channel: 'whatsapp', send_backlog: 1 });
        expect(row.oldest_queued_at).toMatch(/Z$/);
      } finally {
        fake.hold = undefined;
        release();
      }
      await waitFor('sent', async () => received(customer).length === 1);
      // The sends' deltas are logged and folded into the rollup by the worker (as readers do before they read).
      const folded = async () => (await db.query(`SELECT count(*)::int AS n FROM message_delivery_changes`))[0].n === 0;
      await waitFor('the worker to fold the deliveries', folded);
      // Rows and rollup read in one snapshot, once nothing is left to fold: a send of an earlier test of this
      // organization concluding between a fold and the reads would otherwise be in the rows only.
      const compare = async () => {
        const snapshot = db.createQueryRunner();
        await snapshot.connect();
        await snapshot.startTransaction('REPEATABLE READ');
        try {
          const [{ pending }] = await snapshot.query(`SELECT count(*)::int AS pending FROM message_delivery_changes`);
          const raw = await snapshot.query(`
            SELECT workflow_id, date_trunc('hour', started_at, 'UTC') AS hour, channel,
                   count(*) FILTER (WHERE status IN ('sent', 'delivered', 'read', 'failed'))::int AS concluded,
                   count(delivered_at)::int AS delivered, count(read_at)::int AS read
              FROM message_deliveries WHERE organization_id = $1 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`, [org.id]);
          const rolled = await snapshot.query(
            `SELECT workflow_id, hour, channel, concluded, delivered, read FROM workflow_delivery_hours
              WHERE organization_id = $1 AND (concluded <> 0 OR delivered <> 0 OR read <> 0) ORDER BY 1, 2, 3`,
            [org.id],
          );
          return { pending, raw: raw.filter((r: { concluded: number; delivered: number; read: number }) => r.concluded + r.delivered + r.read > 0), rolled };
        } finally {
          await snapshot.commitTransaction();
          await snapshot.release();
        }
      };
      const { raw, rolled } = await waitFor('a snapshot with nothing left to fold', async () => {
        const seen = await compare();
        return seen.pending === 0 ? seen : undefined;
      });
      expect(raw).toEqual(rolled);
      expect(rolled.length).toBeGreaterThan(0);
      // A deletion takes its counts away.
      await db.query(`DELETE FROM messages WHERE id IN (SELECT message_id FROM message_deliveries WHERE organization_id = $1 AND status = 'read')`, [org.id]);
      await waitFor('the worker to fold the deletion', folded);
      const after = await db.query(`SELECT sum(read)::int AS read FROM workflow_delivery_hours WHERE organization_id = $1`, [org.id]);
      expect(after[0].read).toBe(0);
    });

    it('retries a 429 after its Retry-After, and fails a permanent 400 with the provider code on the step', async () => {
      const account = await whatsappAccount();
      const workflowId = await keywordWorkflow('retry', [{ id: 'm', type: 'message', content: 'after a 429' }]);
      const customer = nextNumber();
      fake.upcoming.push({ status: 429, retryAfter: 1 });
      const started = Date.now();
      await post(account.id, whatsappMessagesPayload(account.phone, [{ from: customer, id: `wamid.r-${seq}`, text: 'retry please' }]));
      await waitFor('sent after the 429', async () => received(customer).length === 1);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
      // The fake records the message as it answers; the sender records the acceptance just after.
      const delivery = await waitFor('the acceptance recorded', async () => {
        const [row] = await db.query(`SELECT d.status, d.attempts FROM message_deliveries d JOIN workflow_executions e ON e.id = d.execution_id WHERE e.workflow_id = $1`, [workflowId]);
        return row?.status === 'sent' ? row : undefined;
      });
      expect(delivery).toEqual({ status: 'sent', attempts: 2 });

      const failing = await keywordWorkflow('refused', [{ id: 'm', type: 'message', content: 'never arrives' }]);
      const other = nextNumber();
      fake.upcoming.push({ status: 400, error: { code: 131047, title: 'Re-engagement message' } });
      await post(account.id, whatsappMessagesPayload(account.phone, [{ from: other, id: `wamid.f-${seq}`, text: 'refused please' }]));
      const [execution] = await waitFor('failed', async () => {
        const r = await db.query(
          `SELECT e.id, d.status, d.error_code FROM message_deliveries d JOIN workflow_executions e ON e.id = d.execution_id WHERE e.workflow_id = $1 AND d.status = 'failed'`,
          [failing],
        );
        return r.length ? r : undefined;
      });
      expect(execution.error_code).toBe('131047');
      const detail = await t.http.get(`/v1/workflows/${failing}/executions/${execution.id}`).set(org.auth('read_only'));
      expect(detail.body.data.steps[0].output).toMatchObject({ delivery_status: 'failed', delivery_error: { code: '131047', title: 'Re-engagement message' } });
      await waitFor('message.failed', async () => (await db.query(`SELECT 1 FROM outbox_events WHERE type = 'message.failed' AND data->>'execution_id' = $1`, [execution.id])).length === 1);
      expect(received(other)).toHaveLength(0);
    });

    it("sends one customer's messages in order, one after the provider accepted the other", async () => {
      const account = await whatsappAccount();
      await keywordWorkflow('three', ONE_TWO_THREE);
      const customer = nextNumber();
      fake.delayMs = 150;
      try {
        await post(account.id, whatsappMessagesPayload(account.phone, [{ from: customer, id: `wamid.o-${seq}`, text: 'three please' }]));
        await waitFor('three sent', async () => received(customer).length === 3);
      } finally {
        fake.delayMs = 0;
      }
      expect(received(customer).map(textOf)).toEqual(['one', 'two', 'three']);
      const arrivals = fake.requests.filter((r) => (r.body as { to?: string })?.to === customer).map((r) => r.at);
      const accepted = received(customer).map((m) => m.at);
      // Each request arrived only after the previous one was answered.
      expect(arrivals[1]!).toBeGreaterThanOrEqual(accepted[0]!);
      expect(arrivals[2]!).toBeGreaterThanOrEqual(accepted[1]!);
    });

    it("sends many customers' conversations at once, each message once, in order, with the provider's id it was answered with", async () => {
      const account = await whatsappAccount();
      await keywordWorkflow('crowd', ONE_TWO_THREE);
      const customers = Array.from({ length: 24 }, () => nextNumber());
      // Answers held a little, so that the sends of the conversations overlap and share their claims and acceptances.
      fake.delayMs = 20;
      try {
        const payload = whatsappMessagesPayload(account.phone, customers.map((from, i) => ({ from, id: `wamid.crowd-${seq}-${i}`, text: 'crowd please' })));
        expect((await post(account.id, payload)).status).toBe(200);
        await waitFor('every reply sent', async () => customers.every((c) => received(c).length === 3), 30_000);
      } finally {
        fake.delayMs = 0;
      }
      for (const c of customers) expect(received(c).map(textOf)).toEqual(['one', 'two', 'three']);
      // The fake records a message as it answers; the sender records the answer after.
      await waitFor('every send recorded', async () => {
        const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM message_deliveries WHERE channel_account_id = $1 AND status = 'sent'`, [account.id]);
        return n === customers.length * 3;
      });
      const rows: { provider_message_id: string; content: string; customer: string; recorded: string }[] = await db.query(
        `SELECT m.provider_message_id, m.content, c.external_id AS customer, p.message_id::text = m.id::text AS recorded
           FROM messages m JOIN customers c ON c.id = m.customer_id
           LEFT JOIN message_provider_ids p ON p.channel_account_id = m.channel_account_id AND p.provider_message_id = m.provider_message_id
          WHERE m.channel_account_id = $1 AND m.direction = 'outbound'`,
        [account.id],
      );
      const answered = new Map(customers.flatMap((c) => received(c).map((m) => [m.providerMessageId, { content: textOf(m), customer: c }] as const)));
      expect(rows).toHaveLength(customers.length * 3);
      for (const row of rows) {
        expect(answered.get(row.provider_message_id)).toEqual({ content: row.content, customer: row.customer });
        expect(row.recorded).toBe(true);
      }
    });

    it('POST /v1/messages with channel_account_id joins the account\'s conversation and replies through it', async () => {
      const account = await whatsappAccount();
      await keywordWorkflow('injected', [{ id: 'm', type: 'message', content: 'through the account' }]);
      const customer = nextNumber();
      const res = await t.http.post('/v1/messages').set(org.auth('read_write')).send({ channel: 'whatsapp', customer_id: customer, message: 'injected', channel_account_id: account.id });
      expect(res.status).toBe(202);
      const executionId = res.body.data.executions[0].workflow_execution_id;
      await waitFor('sent through the account', async () => received(customer).length === 1);
      expect(received(customer)[0]?.account).toBe(account.phone);
      const [execution] = await db.query(`SELECT channel_account_id FROM workflow_executions WHERE id = $1`, [executionId]);
      expect(execution.channel_account_id).toBe(account.id);
      const wrongChannel = await t.http.post('/v1/messages').set(org.auth('read_write')).send({ channel: 'instagram', customer_id: customer, message: 'x', channel_account_id: account.id });
      expect(wrongChannel.status).toBe(400);
      expect(wrongChannel.body.error).toMatchObject({ code: 'INVALID_CHANNEL_ACCOUNT', field: 'channel_account_id' });
      // Without it, nothing leaves through a provider (behaviour as before).
      const plain = nextNumber();
      expect((await t.http.post('/v1/messages').set(org.auth('read_write')).send({ channel: 'whatsapp', customer_id: plain, message: 'injected' })).status).toBe(202);
      await waitFor('stored', async () => (await db.query(`SELECT 1 FROM messages m JOIN customers c ON c.id = m.customer_id WHERE c.external_id = $1 AND m.direction = 'outbound'`, [plain])).length === 1);
      expect(await db.query(`SELECT 1 FROM message_deliveries d JOIN customers c ON c.id = d.customer_id WHERE c.external_id = $1`, [plain])).toHaveLength(0);
      expect(received(plain)).toHaveLength(0);
    });

    it("starts the account's settings.workflow_id when no trigger matches, without a trigger", async () => {
      const created = await t.http
        .post('/v1/workflows')
        .set(org.auth('read_write'))
        .send({ name: `fallback-${++seq}-${Date.now()}`, channel: 'whatsapp', configuration: { nodes: [{ id: 'm', type: 'message', content: 'Hello from the default workflow' }] } });
      const workflowId = created.body.data.id as string;
      const account = await whatsappAccount(org, { settings: { workflow_id: workflowId } });
      const customer = nextNumber();
      // Inactive: nothing starts.
      await post(account.id, whatsappMessagesPayload(account.phone, [{ from: customer, id: `wamid.fb1-${seq}`, text: 'no keyword here' }]));
      await waitFor('applied', async () => (await db.query(`SELECT 1 FROM channel_webhook_payloads WHERE channel_account_id = $1`, [account.id])).length === 0);
      expect(await db.query(`SELECT 1 FROM workflow_executions WHERE workflow_id = $1`, [workflowId])).toHaveLength(0);

      expect((await t.http.post(`/v1/workflows/${workflowId}/activate`).set(org.auth('read_write'))).status).toBe(200);
      await post(account.id, whatsappMessagesPayload(account.phone, [{ from: customer, id: `wamid.fb2-${seq}`, text: 'still no keyword' }]));
      await waitFor('the default workflow replied', async () => received(customer).length === 1);
      expect(textOf(received(customer)[0]!)).toBe('Hello from the default workflow');
      const [execution] = await db.query(`SELECT trigger_id, trigger_execution_id, channel_account_id, status FROM workflow_executions WHERE workflow_id = $1`, [workflowId]);
      expect(execution).toMatchObject({ trigger_id: null, trigger_execution_id: null, channel_account_id: account.id });
      await waitFor('success', async () => (await db.query(`SELECT status FROM workflow_executions WHERE workflow_id = $1`, [workflowId]))[0].status === 'success');
      const events = await db.query(`SELECT type FROM outbox_events WHERE data->>'workflow_id' = $1 ORDER BY id`, [workflowId]);
      expect(events.map((e: { type: string }) => e.type)).toEqual(['workflow.started', 'workflow.completed']);
    });

    it('outside the 24-hour window sends the template, or fails the step with CHANNEL_WINDOW_CLOSED', async () => {
      const account = await whatsappAccount();
      const run = async (node: Record<string, unknown>) => {
        const keyword = `late${seq}`;
        const workflowId = await keywordWorkflow(keyword, [
          { id: 'ask', type: 'form', fields: [{ name: 'x', type: 'text', label: 'Still there?' }], next: 'late' },
          { id: 'late', type: 'message', content: 'Free text', ...node },
        ]);
        const customer = nextNumber();
        await post(account.id, whatsappMessagesPayload(account.phone, [{ from: customer, id: `wamid.w-${seq}`, text: keyword }]));
        const [execution] = await waitFor('waiting', async () => {
          const r = await db.query(`SELECT id, customer_id FROM workflow_executions WHERE workflow_id = $1 AND waiting`, [workflowId]);
          return r.length ? r : undefined;
        });
        await waitFor('question sent', async () => received(customer).length === 1);
        // A day later: the customer's message on the account is 25 hours old, and a reply reaches the
        // execution without counting as a message on the account (a reply kept for it in the database).
        await db.query(`UPDATE messages SET created_at = created_at - interval '25 hours' WHERE customer_id = $1`, [execution.customer_id]);
        const done = await runWithKeptReply(execution);
        return { customer, done };
      };

      const withTemplate = await run({ template: { name: 'order_update', language: 'en_US' } });
      expect(withTemplate.done.status).toBe('success');
      await waitFor('template sent', async () => received(withTemplate.customer).length === 2);
      expect(received(withTemplate.customer)[1]?.body).toMatchObject({ type: 'template', template: { name: 'order_update', language: { code: 'en_US' } } });

      const without = await run({});
      expect(without.done.status).toBe('failed');
      expect(without.done.error?.code).toBe('CHANNEL_WINDOW_CLOSED');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(received(without.customer)).toHaveLength(1);
    });

    it('fails a send of a run whose account was deleted while it waited with CHANNEL_ACCOUNT_DELETED, and sends nothing', async () => {
      const account = await whatsappAccount();
      const workflowId = await keywordWorkflow('deleted', [
        { id: 'ask', type: 'form', fields: [{ name: 'x', type: 'text', label: 'Still there?' }], next: 'after' },
        { id: 'after', type: 'message', content: 'Nobody hears this' },
      ]);
      const customer = nextNumber();
      await post(account.id, whatsappMessagesPayload(account.phone, [{ from: customer, id: `wamid.del-${seq}`, text: 'deleted' }]));
      const [execution] = await waitFor('waiting', async () => {
        const r = await db.query(`SELECT id, customer_id FROM workflow_executions WHERE workflow_id = $1 AND waiting`, [workflowId]);
        return r.length ? r : undefined;
      });
      await waitFor('question sent', async () => received(customer).length === 1);
      expect((await t.http.delete(`/v1/channel-accounts/${account.id}`).set(org.auth('full_access'))).status).toBe(200);
      // A reply kept for the execution before the account went (its webhook now answers 404).
      const done = await runWithKeptReply(execution);
      expect(done).toMatchObject({ status: 'failed', error: { code: 'CHANNEL_ACCOUNT_DELETED', node_id: 'after' } });
      expect(await db.query(`SELECT 1 FROM messages WHERE execution_id = $1 AND content = 'Nobody hears this'`, [execution.id])).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(received(customer)).toHaveLength(1);
    });
  });

  it('limits failed signature checks per source address (429 after WEBHOOK_SIGNATURE_FAILURES_PER_MINUTE)', async () => {
    const account = await whatsappAccount();
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await post(account.id, { object: 'whatsapp_business_account', entry: [] }, 'sha256=' + '0'.repeat(64))).status);
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
  });
});
