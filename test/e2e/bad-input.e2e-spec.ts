import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/common/validation/storable-input.js';
import { RedisService } from '../../src/redis/redis.service.js';
import { createTrigger } from '../factories/triggers.js';
import { createWorkflow, workflowBody } from '../factories/workflows.js';
import { createOrganization, RATE_LIMITS_OUT_OF_REACH, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';

/** A lone high surrogate escaped inside JSON text: valid JSON, refused by PostgreSQL. */
const LONE = '\\ud83d';
const HEARTS = '❤️'.repeat(200);
/** About 2,400 levels of objects in 12 KB: used to overflow the stack in class-transformer. */
const DEEP = `${'{"a":'.repeat(2400)}1${'}'.repeat(2400)}`;

type Res = { status: number; body: { error?: { code: string; field?: string }; code?: number; message?: string }; headers: Record<string, string> };

function expectInvalid(res: Res, field?: string) {
  expect(res.status).toBe(400);
  expect(res.body.error?.code).toBe('INVALID_REQUEST');
  if (field !== undefined) expect(res.body.error?.field).toBe(field);
}

function expectPet400(res: Res) {
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ code: 400, message: expect.any(String) });
}

/**
 * Each request here once answered 500. Raw JSON strings are sent as they were: the lone
 * surrogate escaped in the JSON text, which JSON.stringify would never produce.
 */
describe('bad input is a 4xx, never a 500', () => {
  let t: TestApp;
  let org: TestOrganization;
  let workflowId: string;

  beforeAll(async () => {
    // Limits on (the webhook limits are tested below; RATE_LIMITS_ENABLED=false turns them off), the request limits out of reach.
    t = await startTestApp({ ...RATE_LIMITS_OUT_OF_REACH, WEBHOOK_SIGNATURE_FAILURES_PER_MINUTE: '3' });
    org = await createOrganization(t);
    workflowId = (await createWorkflow(t, org)).id;
    expect((await t.http.post(`/v1/workflows/${workflowId}/activate`).set(org.auth())).status).toBe(200);
  });
  afterAll(() => t?.close());

  const json = (method: 'post' | 'put', url: string, raw: string, auth = true) => {
    const req = t.http[method](url).set('Content-Type', 'application/json');
    return (auth ? req.set(org.auth()) : req).send(raw);
  };

  describe('NUL and lone surrogates, refused with the field path', () => {
    it('workflows: name, and a node content deep in the configuration', async () => {
      expectInvalid(await json('post', '/v1/workflows', `{"name":"a${LONE}"}`), 'name');
      expectInvalid(await t.http.post('/v1/workflows').set(org.auth()).send(workflowBody({ name: 'nul\u0000name' })), 'name');
      const body = workflowBody();
      const raw = JSON.stringify(body).replace('Hello! How can we help?', `Hello${LONE}`);
      expectInvalid(await json('post', '/v1/workflows', raw), 'configuration.nodes[0].content');
      expectInvalid(await json('put', `/v1/workflows/${workflowId}`, '{"description":"x\\u0000y"}'), 'description');
    });

    it('object keys are checked too', async () => {
      expectInvalid(await json('post', '/v1/workflows', `{"name":"ok","configuration":{"k${LONE}":1}}`), `configuration.k\ud83d`);
      expectInvalid(await json('post', '/v1/workflows', '{"na\\u0000me":"x"}'), 'na\u0000me');
    });

    it('api keys and triggers (name, keywords)', async () => {
      expectInvalid(await json('post', '/v1/api-keys', `{"name":"key${LONE}","permission_level":"read_only"}`), 'name');
      expectInvalid(
        await json('post', '/v1/triggers', JSON.stringify({ name: 'trigger\u0000', type: 'message', workflow_id: workflowId, configuration: { keywords: ['help'] } })),
        'name',
      );
      expectInvalid(
        await json('post', '/v1/triggers', `{"name":"t","type":"message","workflow_id":"${workflowId}","configuration":{"keywords":["ok","he${LONE}lp"]}}`),
        'configuration.keywords[1]',
      );
    });

    it('knowledge bases', async () => {
      expectInvalid(await json('put', '/v1/knowledge-bases/faq-bad', `{"entries":[{"question":"q${LONE}","answer":"a"}]}`), 'entries[0].question');
      expectInvalid(await json('put', '/v1/knowledge-bases/faq-bad', '{"entries":[{"question":"q","answer":"a\\u0000"}]}'), 'entries[0].answer');
    });

    it('query values and names: ?search=, and a path parameter: /v1/customers/{id}', async () => {
      expectInvalid(await t.http.get('/v1/workflows?search=%00').set(org.auth()), 'search');
      expectInvalid(await t.http.get('/v1/workflows?se%00arch=x').set(org.auth()), 'se\u0000arch');
      expectInvalid(await t.http.get('/v1/customers/abc%00def').set(org.auth()), 'customer_id');
      expectInvalid(await t.http.get('/v1/customers/abc%00def/messages').set(org.auth()), 'customer_id');
    });

    it('POST /v1/messages and /fire', async () => {
      expectInvalid(await json('post', '/v1/messages', `{"channel":"whatsapp","customer_id":"c${LONE}","message":"hi"}`), 'customer_id');
      expectInvalid(await json('post', '/v1/messages', '{"channel":"whatsapp","customer_id":"c","message":"hi\\u0000"}'), 'message');
      expectInvalid(await json('post', '/v1/messages', '{"channel":"whatsapp","customer_id":"c","message":"hi","metadata":{"x":"\\u0000"}}'), 'metadata.x');
      const api = await createTrigger(t, org, workflowId, 'api', {});
      expectInvalid(await json('post', `/v1/triggers/${api.id}/fire`, `{"message":"m${LONE}"}`), 'message');
      expectInvalid(await json('post', `/v1/triggers/${api.id}/fire`, '{"data":{"nested":["\\u0000"]}}'), 'data.nested[0]');
    });

    it('without a credential: POST /pet (form), PUT /pet, POST /v1/hooks/{id} of a trigger without a secret', async () => {
      expectPet400(await t.http.post('/pet').type('form').send('name=Rex%00&status=available'));
      expectPet400(await t.http.put('/pet').set('Content-Type', 'application/json').send(`{"id":1,"name":"Rex${LONE}"}`));
      expectPet400(await t.http.put('/pet').set('Content-Type', 'application/json').send('{"id":1,"tags":[{"name":"\\u0000"}]}'));
      const hook = await createTrigger(t, org, workflowId, 'webhook', {});
      expectInvalid(await json('post', `/v1/hooks/${hook.id}`, `{"message":"x${LONE}"}`, false), 'message');
      expectInvalid(await json('post', `/v1/hooks/${hook.id}`, '{"anything":{"deep":"\\u0000"}}', false), 'anything.deep');
      const text = await t.http.post(`/v1/hooks/${hook.id}`).set('Content-Type', 'text/plain').send('a\u0000b');
      expectInvalid(text, 'body');
    });
  });

  describe('lengths count code points, as varchar(n) does', () => {
    it('200 × "❤️" (400 code points) is refused by workflows, api keys, triggers and pets', async () => {
      expectInvalid(await t.http.post('/v1/workflows').set(org.auth()).send(workflowBody({ name: HEARTS })), 'name');
      expectInvalid(await t.http.post('/v1/api-keys').set(org.auth()).send({ name: HEARTS, permission_level: 'read_only' }), 'name');
      expectInvalid(
        await t.http.post('/v1/triggers').set(org.auth()).send({ name: HEARTS, type: 'message', workflow_id: workflowId, configuration: { keywords: ['help'] } }),
        'name',
      );
      expectPet400(await t.http.post('/pet').type('form').send({ name: HEARTS, status: 'available' }));
      expectPet400(await t.http.put('/pet').send({ id: 1, name: HEARTS }));
    });

    it('200 astral emoji (200 code points, 400 UTF-16 units) fit a varchar(200)', async () => {
      const res = await t.http.post('/v1/workflows').set(org.auth()).send(workflowBody({ name: '😀'.repeat(200) }));
      expect(res.status).toBe(201);
      expect(res.body.data.name).toBe('😀'.repeat(200));
    });
  });

  describe('inbound fields are bounded like their columns', () => {
    it('POST /v1/messages: a language longer than varchar(16)', async () => {
      const res = await t.http.post('/v1/messages').set(org.auth()).send({ channel: 'whatsapp', customer_id: 'c-lang', message: 'hi', language: 'pt-BR-abcdefgh-abcdefgh' });
      expectInvalid(res, 'language');
    });

    it('POST /v1/hooks/{id}: channel must be a known one, customer_id and message bounded', async () => {
      const hook = await createTrigger(t, org, workflowId, 'webhook', {});
      const url = `/v1/hooks/${hook.id}`;
      expectInvalid(await t.http.post(url).send({ channel: 'x'.repeat(40), message: 'hi' }), 'channel');
      expectInvalid(await t.http.post(url).send({ channel: 'sms', message: 'hi' }), 'channel');
      expectInvalid(await t.http.post(url).send({ customer_id: 'c'.repeat(201) }), 'customer_id');
      expectInvalid(await t.http.post(url).send({ message: 'm'.repeat(4097) }), 'message');
      const ok = await t.http.post(url).send({ channel: 'instagram', customer_id: 'hook-c', message: 'hi' });
      expect(ok.status).toBe(202);
    });
  });

  describe('nesting depth', () => {
    it(`refuses a body nested deeper than ${MAX_JSON_DEPTH} levels (the 2,400-level body of the issue)`, async () => {
      const res = await json('post', '/v1/workflows', DEEP);
      expectInvalid(res);
      expect(res.body.error?.message).toMatch(/deeper than 64/);
      const hook = await createTrigger(t, org, workflowId, 'webhook', {});
      expectInvalid(await json('post', `/v1/hooks/${hook.id}`, DEEP, false));
      expectPet400(await t.http.put('/pet').set('Content-Type', 'application/json').send(DEEP));
    });

    it('accepts exactly 64 levels and refuses 65', async () => {
      // The top-level object is level 1, so `levels - 1` arrays inside it.
      const nested = (levels: number) => `{"name":"deep","configuration":${'['.repeat(levels - 1)}1${']'.repeat(levels - 1)}}`;
      // 64 levels reach the validator, which refuses the configuration for what it is, not for its depth.
      const at = await json('post', '/v1/workflows', nested(64));
      expect(at.status).toBe(400);
      expect(at.body.error?.field).toBe('configuration');
      const over = await json('post', '/v1/workflows', nested(65));
      expectInvalid(over);
      expect(over.body.error?.message).toMatch(/deeper than 64/);
    });
  });

  describe('query integers', () => {
    it.each(['page=0x10', 'limit=1e2', 'page=1.5', 'page=', 'limit=%2010', 'page=1_0'])('%s is 400 with its field', async (query) => {
      const res = await t.http.get(`/v1/workflows?${query}`).set(org.auth());
      expectInvalid(res, query.split('=')[0]);
    });

    it('a repeated parameter is "must be given once"', async () => {
      const res = await t.http.get('/v1/workflows?limit=1&limit=2').set(org.auth());
      expectInvalid(res, 'limit');
      expect(res.body.error?.message).toBe('limit must be given once');
      expectInvalid(await t.http.get('/v1/triggers?status=active&status=paused').set(org.auth()), 'status');
      expectInvalid(await t.http.get(`/v1/workflows/${workflowId}/executions?page=1&page=1`).set(org.auth()), 'page');
    });

    it('decimal integers still work, and an unknown repeated parameter is an unknown property', async () => {
      const res = await t.http.get('/v1/workflows?page=01&limit=5').set(org.auth());
      expect(res.status).toBe(200);
      expect(res.body.pagination).toMatchObject({ page: 1, limit: 5 });
      expectInvalid(await t.http.get('/v1/workflows?x=1&x=2').set(org.auth()), 'x');
    });
  });

  describe('415 for a body of a type the route does not take', () => {
    it('a form or text body on a JSON route', async () => {
      const form = await t.http.post('/v1/workflows').set(org.auth()).type('form').send({ name: 'x' });
      expect(form.status).toBe(415);
      expect(form.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
      const text = await t.http.post('/v1/workflows').set(org.auth()).set('Content-Type', 'text/plain').send('{"name":"x"}');
      expect(text.status).toBe(415);
      expect(text.body.error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
      const none = await t.http.put('/pet').unset('Content-Type').send(Buffer.from('{"id":1}'));
      expect(none.status).toBe(415);
      expect(none.body).toEqual({ code: 415, message: expect.any(String) });
    });

    it('keeps the form of POST /pet, text on hooks, and bodiless POSTs', async () => {
      expect((await t.http.post('/pet').type('form').send({ name: 'Form', status: 'available' })).status).toBe(201);
      expect((await t.http.post('/pet').send({ name: 'Json', status: 'available' })).status).toBe(201);
      const hook = await createTrigger(t, org, workflowId, 'webhook', {});
      expect((await t.http.post(`/v1/hooks/${hook.id}`).set('Content-Type', 'text/plain').send('plain text')).status).toBe(202);
      expect((await t.http.post(`/v1/hooks/${hook.id}`).type('form').send({ a: 'b' })).status).toBe(415);
      expect((await t.http.post(`/v1/workflows/${workflowId}/activate`).set(org.auth())).status).toBe(200);
      expect((await t.http.post(`/v1/workflows/${workflowId}/activate`).set(org.auth()).set('Content-Type', 'text/plain')).status).toBe(200);
      expect((await json('post', `/v1/workflows/${workflowId}/activate`, '{}')).status).toBe(200);
    });
  });

  describe('methods', () => {
    it('TRACE, SEARCH and any method a path does not have → 405 with Allow', async () => {
      const trace = await t.http.trace('/v1/workflows').set(org.auth());
      expect(trace.status).toBe(405);
      expect(trace.headers.allow).toBe('GET, HEAD, POST');
      expect(trace.body.error.code).toBe('METHOD_NOT_ALLOWED');
      const search = await t.http.search(`/v1/workflows/${workflowId}`).set(org.auth());
      expect(search.status).toBe(405);
      expect(search.headers.allow).toBe('DELETE, GET, HEAD, PUT');
      const patch = await t.http.patch('/pet').send({});
      expect(patch.status).toBe(405);
      expect(patch.headers.allow).toBe('POST, PUT');
      expect(patch.body).toEqual({ code: 405, message: expect.any(String) });
    });

    it('a path no method has stays 404', async () => {
      const res = await t.http.trace('/v1/nothing-here').set(org.auth());
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    });

    it('HEAD answers a GET route with its headers and no body; without GET it is 405', async () => {
      const head = await t.http.head('/v1/workflows').set(org.auth());
      expect(head.status).toBe(200);
      expect(head.headers['content-type']).toMatch(/application\/json/);
      expect(head.text ?? '').toBe('');
      const none = await t.http.head('/v1/api-keys/00000000-0000-4000-8000-000000000000').set(org.auth());
      expect(none.status).toBe(405);
      expect(none.headers.allow).toBe('DELETE');
      expect(none.text ?? '').toBe('');
    });

    it('a webhook answers another method than its own 405 with Allow', async () => {
      const hook = await createTrigger(t, org, workflowId, 'webhook', {});
      const res = await t.http.put(`/v1/hooks/${hook.id}`).send({});
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('POST');
    });

    it('a method no webhook trigger can have is 405 on any trigger URL, known or not', async () => {
      const hook = await createTrigger(t, org, workflowId, 'webhook', {});
      for (const id of [hook.id, '00000000-0000-4000-8000-000000000000']) {
        const res = await t.http.delete(`/v1/hooks/${id}`);
        expect(res.status).toBe(405);
        expect(res.body.error.code).toBe('METHOD_NOT_ALLOWED');
        expect(res.headers.allow).toBe('POST, PUT, GET');
      }
    });
  });

  describe('webhook limits', () => {
    it('counts only authenticated requests against the trigger, and failed ones per source IP', async () => {
      const secret = 'a-webhook-secret-of-some-length';
      const hook = await createTrigger(t, org, workflowId, 'webhook', { secret, headers: { 'X-Source': 'crm' } });
      const url = `/v1/hooks/${hook.id}`;
      const body = '{"message":"signed"}';
      const sign = (raw: string) => createHmac('sha256', secret).update(raw).digest('hex');
      const post = (headers: Record<string, string>) => t.http.post(url).set({ 'Content-Type': 'application/json', ...headers }).send(body);
      // Other files of this run fail signatures from this address too: start from a clean count.
      const redis = t.app.get(RedisService);
      const counters = await redis.client.keys(redis.key('rl', 'hook-failures', '*'));
      if (counters.length > 0) await redis.client.del(...counters);

      // WEBHOOK_SIGNATURE_FAILURES_PER_MINUTE=3 in this app: three 401s, then 429 for this address.
      for (let i = 0; i < 3; i++) expect((await post({ 'X-Service-Signature': '0'.repeat(64), 'X-Source': 'crm' })).status).toBe(401);
      const limited = await post({ 'X-Service-Signature': sign(body), 'X-Source': 'wrong' });
      expect(limited.status).toBe(429);
      expect(limited.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);

      // The failures did not touch the trigger's own window: a signed request passes with 99 left.
      const good = await post({ 'X-Service-Signature': sign(body), 'X-Source': 'crm' });
      expect(good.status).toBe(202);
      expect(good.headers['x-ratelimit-limit']).toBe('100');
      expect(good.headers['x-ratelimit-remaining']).toBe('99');
    });
  });
});
