import { createHmac } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import { connect as netConnect, type AddressInfo } from 'node:net';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryClient } from '../../src/webhooks/delivery/delivery-client.js';
import { createTrigger } from '../factories/triggers.js';
import { createWorkflow } from '../factories/workflows.js';
import { HttpsReceiver, selfSignedCertificate } from '../utils/https-receiver.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';

// Traffic goes only to the local receiver on 127.0.0.1: WEBHOOK_ALLOWED_CIDRS keeps every delivery inside loopback.
const LOOPBACK_ONLY = { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8,::1/128' };

interface Log {
  id: string;
  delivery_id: string;
  event_type: string;
  status: string;
  response_code: number | null;
  response_time_ms: number | null;
  attempt: number;
  delivered_at: string;
  error_message: string | null;
}

describe('webhooks', () => {
  let t: TestApp;
  let strict: TestApp;
  let org: TestOrganization;
  let other: TestOrganization;
  let receiver: HttpsReceiver;
  let tls: ReturnType<typeof selfSignedCertificate>;
  let db: DataSource;
  let counter = 0;

  beforeAll(async () => {
    tls = selfSignedCertificate();
    receiver = new HttpsReceiver(tls);
    await receiver.start();
    t = await startTestApp({ ...LOOPBACK_ONLY, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_CA_FILE: tls.certFile, WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_DISABLE_AFTER: '2s' });
    // The same database, private targets refused; API only (no relay, no processor).
    strict = await startTestApp({ ...LOOPBACK_ONLY, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', WEBHOOK_CA_FILE: tls.certFile, APP_ROLE: 'api' });
    // A name that resolves to 127.0.0.1 through a stub, in both apps (no DNS query leaves the process).
    for (const app of [t, strict]) {
      const client = app.app.get(DeliveryClient);
      const system = client.resolver;
      client.resolver = async (host) => (host === 'evil.test' ? [{ address: '127.0.0.1', family: 4 }] : system(host));
    }
    db = t.app.get(DataSource);
    org = await createOrganization(t);
    other = await createOrganization(t);
  }, 60_000);

  afterAll(async () => {
    await strict?.close();
    await t?.close();
    await receiver?.stop();
    tls?.cleanup();
  });

  const path = (name: string) => `/${name}-${++counter}`;

  async function createWebhook(body: Record<string, unknown>, who = org) {
    const res = await t.http.post('/v1/webhooks').set(who.auth('read_write')).send({ name: `hook ${++counter}`, events: ['*'], ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data as { id: string; secret: string; url: string; events: string[]; active: boolean; retry_policy: { max_retries: number; retry_delay_ms: number } };
  }

  async function logs(webhookId: string, query = '', who = org): Promise<Log[]> {
    const res = await t.http.get(`/v1/webhooks/${webhookId}/logs?limit=100${query}`).set(who.auth('read_only'));
    expect(res.status).toBe(200);
    return res.body.data as Log[];
  }

  async function emit(type: string, data: Record<string, unknown>, organizationId = org.id): Promise<string> {
    const [row] = (await db.query(`INSERT INTO outbox_events (organization_id, type, data) VALUES ($1, $2, $3::jsonb) RETURNING id`, [organizationId, type, JSON.stringify(data)])) as { id: string }[];
    return row!.id;
  }

  describe('CRUD and validation', () => {
    it('creates with defaults and a generated whsec_ secret; lists without secret; gets and updates with it', async () => {
      const url = receiver.url(path('crud'));
      const created = await createWebhook({ url, events: ['workflow.completed', 'message.*'] });
      expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32);
      expect(created).toMatchObject({ url, events: ['workflow.completed', 'message.*'], active: true, retry_policy: { max_retries: 3, retry_delay_ms: 1000 } });

      const list = await t.http.get('/v1/webhooks?event_type=message.sent&active=true').set(org.auth('read_only'));
      expect(list.status).toBe(200);
      const item = (list.body.data as Record<string, unknown>[]).find((w) => w.id === created.id);
      expect(item).toBeDefined();
      expect(item).not.toHaveProperty('secret');
      expect(item).not.toHaveProperty('retry_policy');
      const none = await t.http.get('/v1/webhooks?event_type=customer.created').set(org.auth('read_only'));
      expect((none.body.data as { id: string }[]).some((w) => w.id === created.id)).toBe(false);

      const got = await t.http.get(`/v1/webhooks/${created.id}`).set(org.auth('read_only'));
      expect(got.body.data).toMatchObject({ id: created.id, secret: created.secret, retry_policy: { max_retries: 3, retry_delay_ms: 1000 } });

      const updated = await t.http.put(`/v1/webhooks/${created.id}`).set(org.auth('read_write')).send({ retry_policy: { max_retries: 5 }, active: false });
      expect(updated.status).toBe(200);
      expect(updated.body.data).toMatchObject({ url, events: ['workflow.completed', 'message.*'], active: false, secret: created.secret, retry_policy: { max_retries: 5, retry_delay_ms: 1000 } });

      const del = await t.http.delete(`/v1/webhooks/${created.id}`).set(org.auth('full_access'));
      expect(del.status).toBe(200);
      expect((await t.http.get(`/v1/webhooks/${created.id}`).set(org.auth())).body.error.code).toBe('WEBHOOK_NOT_FOUND');
    });

    it('refuses bad input with the issue\'s codes and fields', async () => {
      const url = receiver.url(path('valid'));
      const cases: [Record<string, unknown>, number, string, string][] = [
        [{ url: 'http://example.com/x' }, 400, 'INVALID_WEBHOOK_URL', 'url'],
        [{ url: 'https://user:pw@example.com/x' }, 400, 'INVALID_WEBHOOK_URL', 'url'],
        [{ url: 'https://example.com/x#frag' }, 400, 'INVALID_WEBHOOK_URL', 'url'],
        [{ url: 'not a url' }, 400, 'INVALID_WEBHOOK_URL', 'url'],
        [{ url: 'https://exa_mple..com/' }, 400, 'INVALID_WEBHOOK_URL', 'url'],
        [{ url: 42 }, 400, 'INVALID_WEBHOOK_URL', 'url'],
        [{ url, events: [] }, 400, 'INVALID_EVENT_TYPES', 'events'],
        [{ url, events: ['workflow.exploded'] }, 400, 'INVALID_EVENT_TYPES', 'events[0]'],
        [{ url, events: 'workflow.completed' }, 400, 'INVALID_EVENT_TYPES', 'events'],
        [{ url, events: ['workflow.completed', 7] }, 400, 'INVALID_EVENT_TYPES', 'events[1]'],
        [{ url, events: ['nothing.*'] }, 400, 'INVALID_EVENT_TYPES', 'events[0]'],
        [{ url, retry_policy: { max_retries: 11 } }, 400, 'INVALID_RETRY_POLICY', 'retry_policy.max_retries'],
        [{ url, retry_policy: { retry_delay_ms: 99 } }, 400, 'INVALID_RETRY_POLICY', 'retry_policy.retry_delay_ms'],
        [{ url, retry_policy: { retry_delay_ms: 1000.5 } }, 400, 'INVALID_RETRY_POLICY', 'retry_policy.retry_delay_ms'],
        [{ url, retry_policy: { max_retries: '3' } }, 400, 'INVALID_RETRY_POLICY', 'retry_policy.max_retries'],
        [{ url, retry_policy: [] }, 400, 'INVALID_RETRY_POLICY', 'retry_policy'],
        [{ url, secret: 'short' }, 400, 'INVALID_REQUEST', 'secret'],
        [{ url: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'url'],
      ];
      for (const [body, status, code, field] of cases) {
        const res = await t.http.post('/v1/webhooks').set(org.auth('read_write')).send({ name: 'bad', events: ['*'], url, ...body });
        expect([res.status, res.body.error?.code, res.body.error?.field], JSON.stringify(body)).toEqual([status, code, field]);
      }
    });

    it('answers 409 for the same URL in an organization, not across organizations', async () => {
      const url = receiver.url(path('dup'));
      await createWebhook({ url });
      const again = await t.http.post('/v1/webhooks').set(org.auth('read_write')).send({ name: 'again', url, events: ['*'] });
      expect([again.status, again.body.error.code, again.body.error.field]).toEqual([409, 'WEBHOOK_ALREADY_EXISTS', 'url']);
      await createWebhook({ url }, other);
      const second = await createWebhook({ url: receiver.url(path('dup2')) });
      const clash = await t.http.put(`/v1/webhooks/${second.id}`).set(org.auth('read_write')).send({ url });
      expect([clash.status, clash.body.error.code]).toEqual([409, 'WEBHOOK_ALREADY_EXISTS']);
    });

    it('answers 404 WEBHOOK_NOT_FOUND for unknown, foreign and malformed ids', async () => {
      const foreign = await createWebhook({ url: receiver.url(path('foreign')) }, other);
      for (const id of ['00000000-0000-4000-8000-000000000000', foreign.id, 'nope']) {
        for (const [method, suffix] of [['get', ''], ['put', ''], ['delete', ''], ['get', '/logs'], ['post', '/test']] as const) {
          const res = await t.http[method](`/v1/webhooks/${id}${suffix}`).set(org.auth()).send(method === 'post' ? { event_type: 'workflow.completed' } : method === 'put' ? { name: 'x' } : undefined);
          expect([res.status, res.body.error?.code], `${method} ${id}${suffix}`).toEqual([404, 'WEBHOOK_NOT_FOUND']);
        }
      }
    });

    it('checks permission levels and authentication', async () => {
      const hook = await createWebhook({ url: receiver.url(path('perm')) });
      expect((await t.http.get('/v1/webhooks')).body.error.code).toBe('MISSING_AUTHENTICATION');
      const create = await t.http.post('/v1/webhooks').set(org.auth('read_only')).send({ name: 'x', url: receiver.url('/p'), events: ['*'] });
      expect([create.status, create.body.error.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
      const del = await t.http.delete(`/v1/webhooks/${hook.id}`).set(org.auth('read_write'));
      expect([del.status, del.body.error.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
      const test = await t.http.post(`/v1/webhooks/${hook.id}/test`).set(org.auth('read_only')).send({ event_type: 'workflow.completed' });
      expect([test.status, test.body.error.code]).toEqual([403, 'INSUFFICIENT_PERMISSIONS']);
    });

    it('lists every event type with a JSON Schema of its data', async () => {
      const res = await t.http.get('/v1/webhooks/event-types').set(org.auth('read_only'));
      expect(res.status).toBe(200);
      const types = (res.body.data as { type: string; data_schema: { properties: Record<string, unknown> } }[]);
      expect(types.map((e) => e.type)).toEqual(['workflow.started', 'workflow.completed', 'workflow.failed', 'message.received', 'message.sent', 'message.delivered', 'message.read', 'message.failed', 'trigger.activated', 'customer.created', 'customer.updated', 'conversation.handoff_started', 'conversation.handoff_ended']);
      expect(Object.keys(types[1]!.data_schema.properties)).toEqual(['workflow_id', 'execution_id', 'status', 'duration_ms', 'customer_id', 'channel']);
    });
  });

  describe('delivery', () => {
    it('delivers a real workflow.completed, signed verifiably (X-Service-Signature and Standard Webhooks)', async () => {
      const p = path('completed');
      const hook = await createWebhook({ url: receiver.url(p), events: ['workflow.completed'] });
      const workflow = await createWorkflow(t, org, { configuration: { nodes: [{ id: 'hi', type: 'message', content: 'Hello' }] } });
      expect((await t.http.post(`/v1/workflows/${workflow.id}/activate`).set(org.auth('read_write'))).status).toBe(200);
      const trigger = await createTrigger(t, org, workflow.id, 'api', {});
      const fired = await t.http.post(`/v1/triggers/${trigger.id}/fire`).set(org.auth('read_write')).send({ customer_id: 'cust-1', channel: 'whatsapp' });
      expect(fired.status).toBe(202);
      const [hit] = await waitFor('the delivery', async () => receiver.hitsOf(p).length > 0 && receiver.hitsOf(p));
      const payload = JSON.parse(hit!.body);
      expect(payload).toEqual({
        id: expect.any(String),
        type: 'workflow.completed',
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        data: { workflow_id: workflow.id, execution_id: fired.body.data.workflow_execution_id, status: 'success', duration_ms: expect.any(Number), customer_id: 'cust-1', channel: 'whatsapp' },
        metadata: { webhook_id: hook.id, retry_count: 0, version: '1' },
      });
      expect(hit!.headers['content-type']).toBe('application/json');
      expect(hit!.headers['user-agent']).toMatch(/WorkflowAutomationService/);
      expect(hit!.headers['x-service-event']).toBe('workflow.completed');
      expect(hit!.headers['x-service-signature']).toBe(createHmac('sha256', hook.secret).update(hit!.body).digest('hex'));
      expect(hit!.headers['x-service-delivery']).toBe(hit!.headers['webhook-id']);
      expect(new StandardWebhook(hook.secret).verify(hit!.body, hit!.headers)).toEqual(payload);
      const [log] = await waitFor('the log row', async () => ((await logs(hook.id)).length > 0 ? logs(hook.id) : undefined));
      expect(log).toMatchObject({ delivery_id: hit!.headers['webhook-id'], event_type: 'workflow.completed', status: 'delivered', response_code: 200, attempt: 1, error_message: null });
    });

    it('signs with a secret the client chose, verifiable by the standardwebhooks package', async () => {
      const p = path('chosen');
      const secret = 'a-secret-the-client-chose-1234';
      const hook = await createWebhook({ url: receiver.url(p), secret });
      expect(hook.secret).toBe(secret);
      const res = await t.http.post(`/v1/webhooks/${hook.id}/test`).set(org.auth('read_write')).send({ event_type: 'customer.created', test_data: { customer_id: 'c9' } });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ test_id: expect.any(String), status: 'delivered', response_code: 200, response_time_ms: expect.any(Number), tested_at: expect.any(String) });
      const [hit] = receiver.hitsOf(p);
      expect(hit!.headers['webhook-id']).toBe(res.body.data.test_id);
      // The package takes a base64 key; a plain secret's key is its UTF-8 bytes.
      expect(new StandardWebhook(Buffer.from(secret).toString('base64')).verify(hit!.body, hit!.headers)).toMatchObject({ type: 'customer.created', data: { customer_id: 'c9' } });
      expect(hit!.headers['x-service-signature']).toBe(createHmac('sha256', secret).update(hit!.body).digest('hex'));
      const [log] = await logs(hook.id);
      expect(log).toMatchObject({ attempt: 1, status: 'delivered', delivery_id: res.body.data.test_id });
    });

    it('retries 500, 500 then 200 with growing gaps: retrying, retrying, delivered', async () => {
      const p = path('retry');
      receiver.on(p, (_hit, i) => ({ status: i < 2 ? 500 : 200 }));
      const hook = await createWebhook({ url: receiver.url(p), events: ['workflow.*'], retry_policy: { max_retries: 3, retry_delay_ms: 200 } });
      await emit('workflow.started', { workflow_id: 'w' });
      await waitFor('three hits', async () => receiver.hitsOf(p).length >= 3);
      const rows = await waitFor('three log rows', async () => {
        const l = await logs(hook.id);
        return l.length >= 3 && l;
      });
      expect(rows.map((r) => [r.attempt, r.status, r.response_code, r.error_message])).toEqual([
        [3, 'delivered', 200, null],
        [2, 'retrying', 500, 'HTTP 500'],
        [1, 'retrying', 500, 'HTTP 500'],
      ]);
      const hits = receiver.hitsOf(p);
      expect(new Set(hits.map((h) => h.headers['x-service-delivery'])).size).toBe(1);
      expect(hits.map((h) => JSON.parse(h.body).metadata.retry_count)).toEqual([0, 1, 2]);
      const gap1 = hits[1]!.at - hits[0]!.at;
      const gap2 = hits[2]!.at - hits[1]!.at;
      expect(gap1).toBeGreaterThanOrEqual(190);
      expect(gap2).toBeGreaterThanOrEqual(390);
      expect(gap2).toBeGreaterThan(gap1);
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.hitsOf(p)).toHaveLength(3);
    });

    it('does not retry a 404, honours 429 Retry-After, disables on 410', async () => {
      const p404 = path('nf');
      receiver.on(p404, () => ({ status: 404 }));
      const h404 = await createWebhook({ url: receiver.url(p404), events: ['message.sent'], retry_policy: { max_retries: 3, retry_delay_ms: 100 } });
      const p429 = path('limited');
      receiver.on(p429, (_hit, i) => (i === 0 ? { status: 429, headers: { 'Retry-After': '1' } } : { status: 200 }));
      const h429 = await createWebhook({ url: receiver.url(p429), events: ['message.sent'], retry_policy: { max_retries: 3, retry_delay_ms: 100 } });
      const p410 = path('gone');
      receiver.on(p410, () => ({ status: 410 }));
      const h410 = await createWebhook({ url: receiver.url(p410), events: ['message.sent'], retry_policy: { max_retries: 3, retry_delay_ms: 100 } });
      await emit('message.sent', { message_id: 'm1' });

      await waitFor('429 then 200', async () => receiver.hitsOf(p429).length >= 2);
      const [first, second] = receiver.hitsOf(p429);
      expect(second!.at - first!.at).toBeGreaterThanOrEqual(950);
      await waitFor('404 and 410 logged', async () => (await logs(h404.id)).length === 1 && (await logs(h410.id)).length === 1);
      await new Promise((r) => setTimeout(r, 500));
      expect(receiver.hitsOf(p404)).toHaveLength(1);
      expect((await logs(h404.id))[0]).toMatchObject({ status: 'failed', response_code: 404, error_message: 'HTTP 404' });
      expect((await logs(h429.id)).map((l) => l.status)).toEqual(['delivered', 'retrying']);
      expect(receiver.hitsOf(p410)).toHaveLength(1);
      expect((await logs(h410.id))[0]).toMatchObject({ status: 'failed', response_code: 410, error_message: expect.stringContaining('disabled') });
      expect((await t.http.get(`/v1/webhooks/${h410.id}`).set(org.auth())).body.data.active).toBe(false);
      const failed = await logs(h404.id, '&status=failed');
      expect(failed).toHaveLength(1);
      expect(await logs(h404.id, '&status=delivered')).toHaveLength(0);
    });

    it('times out a receiver that never answers (WEBHOOK_TIMEOUT_MS=1000)', async () => {
      const p = path('hang');
      receiver.on(p, () => null);
      const hook = await createWebhook({ url: receiver.url(p) });
      const res = await t.http.post(`/v1/webhooks/${hook.id}/test`).set(org.auth('read_write')).send({ event_type: 'workflow.failed', test_data: {} });
      expect(res.body.data).toMatchObject({ status: 'failed', response_code: null });
      expect(res.body.data.response_time_ms).toBeGreaterThanOrEqual(990);
      expect((await logs(hook.id))[0]).toMatchObject({ status: 'failed', response_code: null, error_message: 'timeout after 1000 ms' });
    });

    it('does not follow a redirect (a 3xx is a failure)', async () => {
      const p = path('redirect');
      const target = path('redirect-target');
      receiver.on(p, () => ({ status: 302, headers: { Location: receiver.url(target) } }));
      const hook = await createWebhook({ url: receiver.url(p) });
      const res = await t.http.post(`/v1/webhooks/${hook.id}/test`).set(org.auth('read_write')).send({ event_type: 'workflow.completed' });
      expect(res.body.data).toMatchObject({ status: 'failed', response_code: 302 });
      expect(receiver.hitsOf(target)).toHaveLength(0);
    });

    it('logs connection refused', async () => {
      const hook = await createWebhook({ url: 'https://127.0.0.1:1/refused' });
      const res = await t.http.post(`/v1/webhooks/${hook.id}/test`).set(org.auth('read_write')).send({ event_type: 'workflow.completed' });
      expect(res.body.data).toMatchObject({ status: 'failed', response_code: null });
      expect((await logs(hook.id))[0]!.error_message).toBe('connection refused');
    });

    it('refuses an unknown test event type', async () => {
      const hook = await createWebhook({ url: receiver.url(path('tt')) });
      const res = await t.http.post(`/v1/webhooks/${hook.id}/test`).set(org.auth('read_write')).send({ event_type: 'workflow.*' });
      expect([res.status, res.body.error.code, res.body.error.field]).toEqual([400, 'INVALID_EVENT_TYPES', 'event_type']);
    });

    it('publishes outbox rows of organizations without webhooks', async () => {
      const lonely = await createOrganization(t);
      const id = await emit('customer.created', { customer_id: 'x' }, lonely.id);
      await waitFor('published', async () => ((await db.query(`SELECT published_at FROM outbox_events WHERE id = $1`, [id])) as { published_at: Date | null }[])[0]?.published_at !== null);
      expect(await db.query(`SELECT 1 FROM webhook_deliveries WHERE event_id = $1`, [id])).toHaveLength(0);
    });
  });

  describe('SSRF (private targets refused)', () => {
    const spellings = ['127.0.0.1', '127.1', '0x7f.0.0.1', '2130706433', '[::1]', '[::ffff:127.0.0.1]', 'localhost', 'evil.test'];

    it('refuses every loopback spelling at create with 422 WEBHOOK_VALIDATION_FAILED, and nothing reaches the receiver', async () => {
      const before = receiver.hits.length;
      for (const host of spellings) {
        const res = await strict.http.post('/v1/webhooks').set(org.auth('read_write')).send({ name: `ssrf ${host}`, url: `https://${host}:${receiver.port}/ssrf`, events: ['*'] });
        expect([res.status, res.body.error?.code, res.body.error?.field], host).toEqual([422, 'WEBHOOK_VALIDATION_FAILED', 'url']);
      }
      expect(receiver.hits.length).toBe(before);
    });

    it('refuses test deliveries to loopback in every spelling: failed, "target address not allowed", no hit', async () => {
      const before = receiver.hits.length;
      for (const host of spellings) {
        // Created where private targets are allowed, then tested where they are not.
        const hook = await createWebhook({ url: `https://${host}:${receiver.port}/ssrf-${++counter}` });
        const res = await strict.http.post(`/v1/webhooks/${hook.id}/test`).set(org.auth('read_write')).send({ event_type: 'workflow.completed' });
        expect(res.body.data, host).toMatchObject({ status: 'failed', response_code: null });
        expect((await logs(hook.id))[0], host).toMatchObject({ status: 'failed', error_message: 'target address not allowed' });
        await t.http.delete(`/v1/webhooks/${hook.id}`).set(org.auth('full_access'));
      }
      expect(receiver.hits.length).toBe(before);
    });

    it('refuses an update to a loopback URL', async () => {
      const hook = await createWebhook({ url: receiver.url(path('upd')) });
      const res = await strict.http.put(`/v1/webhooks/${hook.id}`).set(org.auth('read_write')).send({ url: `https://localhost:${receiver.port}/x` });
      expect([res.status, res.body.error.code, res.body.error.field]).toEqual([422, 'WEBHOOK_VALIDATION_FAILED', 'url']);
    });
  });

  describe('beyond the specification: rotate, resend, recover, auto-disable', () => {
    it('rotate-secret returns a new secret and deliveries carry both signatures', async () => {
      const p = path('rotate');
      const hook = await createWebhook({ url: receiver.url(p) });
      const rotated = await t.http.post(`/v1/webhooks/${hook.id}/rotate-secret`).set(org.auth('read_write'));
      expect(rotated.status).toBe(200);
      const next = rotated.body.data.secret as string;
      expect(next).toMatch(/^whsec_/);
      expect(next).not.toBe(hook.secret);
      expect(Date.parse(rotated.body.data.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23 * 3_600_000);
      expect((await t.http.get(`/v1/webhooks/${hook.id}`).set(org.auth())).body.data.secret).toBe(next);
      await t.http.post(`/v1/webhooks/${hook.id}/test`).set(org.auth('read_write')).send({ event_type: 'workflow.completed' });
      const [hit] = receiver.hitsOf(p);
      expect(hit!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
      expect(() => new StandardWebhook(hook.secret).verify(hit!.body, hit!.headers)).not.toThrow();
      expect(() => new StandardWebhook(next).verify(hit!.body, hit!.headers)).not.toThrow();
      expect(hit!.headers['x-service-signature']).toBe(createHmac('sha256', next).update(hit!.body).digest('hex'));
    });

    it('resend queues a new delivery of a logged event (202)', async () => {
      const p = path('resend');
      const hook = await createWebhook({ url: receiver.url(p) });
      await t.http.post(`/v1/webhooks/${hook.id}/test`).set(org.auth('read_write')).send({ event_type: 'message.received', test_data: { n: 1 } });
      const [log] = await logs(hook.id);
      const res = await t.http.post(`/v1/webhooks/${hook.id}/logs/${log!.id}/resend`).set(org.auth('read_write'));
      expect(res.status).toBe(202);
      await waitFor('the resent delivery', async () => receiver.hitsOf(p).length >= 2);
      const [first, second] = receiver.hitsOf(p);
      expect(second!.headers['webhook-id']).toBe(res.body.data.delivery_id);
      expect(JSON.parse(second!.body).id).toBe(JSON.parse(first!.body).id);
      const missing = await t.http.post(`/v1/webhooks/${hook.id}/logs/00000000-0000-4000-8000-000000000000/resend`).set(org.auth('read_write'));
      expect([missing.status, missing.body.error.code]).toEqual([404, 'WEBHOOK_LOG_NOT_FOUND']);
    });

    it('recover re-queues the events whose deliveries failed since a time', async () => {
      const own = await createOrganization(t);
      const p = path('recover');
      let failing = true;
      receiver.on(p, () => ({ status: failing ? 404 : 200 }));
      const hook = await createWebhook({ url: receiver.url(p), events: ['customer.*'] }, own);
      const since = new Date(Date.now() - 1000).toISOString();
      const ids = [await emit('customer.created', { customer_id: 'a' }, own.id), await emit('customer.updated', { customer_id: 'a' }, own.id)];
      await waitFor('two failures', async () => (await logs(hook.id, '&status=failed', own)).length === 2);
      failing = false;
      const res = await t.http.post(`/v1/webhooks/${hook.id}/recover`).set(own.auth('read_write')).send({ since });
      expect([res.status, res.body.data]).toEqual([202, { count: 2 }]);
      await waitFor('two deliveries', async () => (await logs(hook.id, '&status=delivered', own)).length === 2);
      const delivered = receiver.hitsOf(p).slice(2).map((h) => JSON.parse(h.body).id as string);
      expect(new Set(delivered)).toEqual(new Set(ids));
      const again = await t.http.post(`/v1/webhooks/${hook.id}/recover`).set(own.auth('read_write')).send({ since });
      expect(again.body.data).toEqual({ count: 0 });
      const bad = await t.http.post(`/v1/webhooks/${hook.id}/recover`).set(own.auth('read_write')).send({ since: 'yesterday' });
      expect([bad.status, bad.body.error.code, bad.body.error.field]).toEqual([400, 'INVALID_REQUEST', 'since']);
    });

    it('disables a webhook whose every delivery failed for WEBHOOK_DISABLE_AFTER (2 s here), with a log row saying why', async () => {
      const own = await createOrganization(t);
      const p = path('failing');
      receiver.on(p, () => ({ status: 500 }));
      const hook = await createWebhook({ url: receiver.url(p), events: ['message.sent'], retry_policy: { max_retries: 0, retry_delay_ms: 100 } }, own);
      await emit('message.sent', { n: 1 }, own.id);
      await waitFor('first failure', async () => (await logs(hook.id, '', own)).length === 1);
      expect((await t.http.get(`/v1/webhooks/${hook.id}`).set(own.auth())).body.data.active).toBe(true);
      await new Promise((r) => setTimeout(r, 2100));
      await emit('message.sent', { n: 2 }, own.id);
      await waitFor('second failure', async () => (await logs(hook.id, '', own)).length === 2);
      const [latest] = await logs(hook.id, '', own);
      expect(latest).toMatchObject({ status: 'failed', response_code: 500, error_message: expect.stringContaining('webhook disabled') });
      expect((await t.http.get(`/v1/webhooks/${hook.id}`).set(own.auth())).body.data.active).toBe(false);
      const resend = await t.http.post(`/v1/webhooks/${hook.id}/logs/${latest!.id}/resend`).set(own.auth('read_write'));
      expect([resend.status, resend.body.error.code]).toEqual([409, 'WEBHOOK_INACTIVE']);
    });
  });

  describe('egress proxy (WEBHOOK_PROXY_URL)', () => {
    let proxy: Server;
    let proxied: TestApp;
    const tunnels: string[] = [];
    const tunnelSockets: { destroy(): void }[] = [];

    beforeAll(async () => {
      // A minimal HTTP CONNECT proxy on loopback that records each tunnel's target.
      proxy = createHttpServer();
      proxy.on('connect', (req, client) => {
        // Tunnels are not HTTP connections: closeAllConnections() leaves them, so they are tracked here.
        tunnelSockets.push(client);
        tunnels.push(req.url ?? '');
        const [host, port] = [(req.url ?? '').replace(/:\d+$/, '').replace(/^\[|\]$/g, ''), Number((req.url ?? '').split(':').pop())];
        const upstream = netConnect(port, host, () => {
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          upstream.pipe(client);
          client.pipe(upstream);
        });
        tunnelSockets.push(upstream);
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
      });
      await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
      const port = (proxy.address() as AddressInfo).port;
      proxied = await startTestApp({ ...LOOPBACK_ONLY, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_CA_FILE: tls.certFile, APP_ROLE: 'api', WEBHOOK_PROXY_URL: `http://127.0.0.1:${port}` });
      const client = proxied.app.get(DeliveryClient);
      const system = client.resolver;
      client.resolver = async (host) => (host === 'evil.test' ? [{ address: '127.0.0.1', family: 4 }] : system(host));
    }, 60_000);

    afterAll(async () => {
      await proxied?.close();
      for (const socket of tunnelSockets) socket.destroy();
      proxy?.closeAllConnections();
      await new Promise((r) => proxy?.close(r));
    });

    it('sends deliveries through the proxy, to the checked address, signed as usual', async () => {
      const p = path('proxied');
      // evil.test resolves to 127.0.0.1 through the stub resolver: the tunnel must name that address.
      const hook = await createWebhook({ url: receiver.url(p, 'evil.test') });
      const before = tunnels.length;
      const res = await proxied.http.post(`/v1/webhooks/${hook.id}/test`).set(org.auth('read_write')).send({ event_type: 'workflow.completed' });
      expect(res.body.data, JSON.stringify(await logs(hook.id))).toMatchObject({ status: 'delivered', response_code: 200 });
      // CONNECT names the checked address, not the host name: the proxy cannot resolve it elsewhere.
      expect(tunnels.slice(before)).toEqual([`127.0.0.1:${receiver.port}`]);
      const [hit] = receiver.hitsOf(p);
      expect(new StandardWebhook(hook.secret).verify(hit!.body, hit!.headers)).toMatchObject({ type: 'workflow.completed' });
    });
  });
});
