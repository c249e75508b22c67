import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAiProvider, type FakeAiProvider } from '../utils/fake-ai-provider.js';
import { AiProviderError, KnowledgeBaseNotFoundError } from '../../src/knowledge-bases/knowledge-bases.errors.js';
import { KNOWLEDGE_RESPONDER, type KnowledgeResponder } from '../../src/knowledge-bases/knowledge-responder.js';
import { DataSource } from 'typeorm';
import { createTrigger } from '../factories/triggers.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';

const FAQ = [
  { question: 'How do I reset my password?', answer: 'Use "Forgot password" on the sign-in page.' },
  { question: 'What are your opening hours?', answer: 'Monday to Friday, 9am to 6pm.' },
  { question: 'How can I get a refund?', answer: 'Refunds are issued within 14 days of receiving the return.' },
];
const DETAIL_KEYS = ['created_at', 'entries', 'entry_count', 'name', 'updated_at'];
const SUMMARY_KEYS = ['created_at', 'entry_count', 'name', 'updated_at'];

let counter = 0;
const uniqueName = (prefix = 'kb') => `${prefix}-${process.pid}-${++counter}`;

describe('knowledge bases', () => {
  let t: TestApp;
  let org: TestOrganization;
  let other: TestOrganization;

  beforeAll(async () => {
    // No queue workers: nothing here runs an execution.
    t = await startTestApp({ RATE_LIMITS_ENABLED: 'false', APP_ROLE: 'api' });
    org = await createOrganization(t);
    other = await createOrganization(t);
  });
  afterAll(() => t?.close());

  const put = (name: string, body: unknown, who = org, level: 'read_write' | 'full_access' | 'read_only' = 'read_write') =>
    t.http.put(`/v1/knowledge-bases/${name}`).set(who.auth(level)).send(body as object);
  const get = (name: string, who = org) => t.http.get(`/v1/knowledge-bases/${name}`).set(who.auth('read_only'));

  describe('PUT /v1/knowledge-bases/{name}', () => {
    it('creates with 201, then replaces every entry with 200, keeping created_at and moving updated_at', async () => {
      const name = uniqueName('faq.v1');
      const created = await put(name, { entries: FAQ });
      expect(created.status).toBe(201);
      expect(Object.keys(created.body.data).sort()).toEqual(DETAIL_KEYS);
      expect(created.body.data).toMatchObject({ name, entries: FAQ, entry_count: 3 });
      expect(created.body.data.created_at).toBe(created.body.data.updated_at);

      const replaced = await put(name, { entries: [FAQ[2]] });
      expect(replaced.status).toBe(200);
      expect(replaced.body.data).toMatchObject({ name, entries: [FAQ[2]], entry_count: 1, created_at: created.body.data.created_at });
      expect(Date.parse(replaced.body.data.updated_at)).toBeGreaterThan(Date.parse(created.body.data.updated_at));

      const read = await get(name);
      expect(read.status).toBe(200);
      expect(read.body.data).toEqual(replaced.body.data);
    });

    it('gives every replace a later updated_at, even back to back', async () => {
      const name = uniqueName();
      const stamps: number[] = [];
      for (let i = 0; i < 5; i++) stamps.push(Date.parse((await put(name, { entries: FAQ }).expect(i === 0 ? 201 : 200)).body.data.updated_at));
      for (let i = 1; i < stamps.length; i++) expect(stamps[i]).toBeGreaterThan(stamps[i - 1]);
    });

    it('answers 201 to one and 200 to the other of two concurrent creates', async () => {
      const name = uniqueName();
      const statuses = (await Promise.all([put(name, { entries: FAQ }), put(name, { entries: FAQ })])).map((r) => r.status).sort();
      expect(statuses).toEqual([200, 201]);
    });

    it('refuses a malformed name with 400 INVALID_REQUEST on name', async () => {
      for (const name of ['-starts-with-dash', '.hidden', 'has%20space', 'x'.repeat(101), 'caf%C3%A9']) {
        const res = await put(name, { entries: FAQ });
        expect(res.status, name).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'name' });
      }
      expect((await put('x'.repeat(100), { entries: FAQ })).status).toBe(201);
      expect((await put('A1_b.c-d', { entries: FAQ })).status).toBe(201);
    });

    it.each([
      [{}, 'MISSING_REQUIRED_FIELD', 'entries'],
      [{ entries: null }, 'MISSING_REQUIRED_FIELD', 'entries'],
      [{ entries: 'faq' }, 'INVALID_REQUEST', 'entries'],
      [{ entries: [] }, 'INVALID_REQUEST', 'entries'],
      [{ entries: ['a question'] }, 'INVALID_REQUEST', 'entries'],
      [{ entries: [FAQ[0], { question: 'Q?' }] }, 'MISSING_REQUIRED_FIELD', 'entries[1].answer'],
      [{ entries: [FAQ[0], FAQ[1], { answer: 'A' }] }, 'MISSING_REQUIRED_FIELD', 'entries[2].question'],
      [{ entries: [FAQ[0], FAQ[1], { question: 'Q?', answer: '' }] }, 'INVALID_REQUEST', 'entries[2].answer'],
      [{ entries: [{ question: '   ', answer: 'A' }] }, 'INVALID_REQUEST', 'entries[0].question'],
      [{ entries: [{ question: 42, answer: 'A' }] }, 'INVALID_REQUEST', 'entries[0].question'],
      [{ entries: [{ question: 'q'.repeat(1001), answer: 'A' }] }, 'INVALID_REQUEST', 'entries[0].question'],
      [{ entries: [{ question: 'Q?', answer: 'a'.repeat(4001) }] }, 'INVALID_REQUEST', 'entries[0].answer'],
      [{ entries: [{ question: 'Q?', answer: 'A', id: 1 }] }, 'INVALID_REQUEST', 'entries[0].id'],
      [{ entries: FAQ, description: 'x' }, 'INVALID_REQUEST', 'description'],
    ])('refuses %j with %s on %s', async (body, code, field) => {
      const name = uniqueName('invalid');
      const res = await put(name, body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code, field });
      expect((await get(name)).status).toBe(404);
    });

    it('accepts the bounds: 1000 entries, a 1000-character question and a 4000-character answer', async () => {
      const entries = Array.from({ length: 1000 }, (_, i) => ({ question: `Question ${i}?`, answer: `Answer ${i}.` }));
      entries[0] = { question: 'q'.repeat(1000), answer: 'a'.repeat(4000) };
      const res = await put(uniqueName(), { entries });
      expect(res.status).toBe(201);
      expect(res.body.data.entry_count).toBe(1000);

      const tooMany = await put(uniqueName(), { entries: [...entries, FAQ[0]] });
      expect(tooMany.status).toBe(400);
      expect(tooMany.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'entries' });
    });
  });

  describe('GET /v1/knowledge-bases/{name} and DELETE', () => {
    it('answers 404 KNOWLEDGE_BASE_NOT_FOUND for an unknown name', async () => {
      const res = await get('does-not-exist');
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('KNOWLEDGE_BASE_NOT_FOUND');
      const del = await t.http.delete('/v1/knowledge-bases/does-not-exist').set(org.auth('full_access'));
      expect(del.status).toBe(404);
      expect(del.body.error.code).toBe('KNOWLEDGE_BASE_NOT_FOUND');
    });

    it('deletes with {message}, after which the name is free again', async () => {
      const name = uniqueName();
      await put(name, { entries: FAQ }).expect(201);
      const del = await t.http.delete(`/v1/knowledge-bases/${name}`).set(org.auth('full_access'));
      expect(del.status).toBe(200);
      expect(del.body).toEqual({ message: expect.any(String) });
      expect((await get(name)).status).toBe(404);
      expect((await put(name, { entries: FAQ })).status).toBe(201);
    });

    it('treats names as case-sensitive', async () => {
      const name = uniqueName('Faq');
      await put(name, { entries: FAQ }).expect(201);
      expect((await get(name.toLowerCase())).status).toBe(404);
    });
  });

  describe('GET /v1/knowledge-bases', () => {
    it('lists names, entry counts and timestamps newest first, without entries, with pagination', async () => {
      const lists = await createOrganization(t);
      for (const [name, count] of [['first', 1], ['second', 2], ['third', 3]] as const) {
        await put(name, { entries: FAQ.slice(0, count) }, lists).expect(201);
      }
      const res = await t.http.get('/v1/knowledge-bases').set(lists.auth('read_only'));
      expect(res.status).toBe(200);
      expect(res.body.data.map((kb: { name: string }) => kb.name)).toEqual(['third', 'second', 'first']);
      expect(res.body.data.map((kb: { entry_count: number }) => kb.entry_count)).toEqual([3, 2, 1]);
      for (const item of res.body.data) expect(Object.keys(item).sort()).toEqual(SUMMARY_KEYS);
      expect(res.body.pagination).toEqual({ page: 1, limit: 20, total: 3, pages: 1 });

      const page2 = await t.http.get('/v1/knowledge-bases').query({ page: 2, limit: 2 }).set(lists.auth('read_only'));
      expect(page2.body.data.map((kb: { name: string }) => kb.name)).toEqual(['first']);
      expect(page2.body.pagination).toEqual({ page: 2, limit: 2, total: 3, pages: 2 });

      const bad = await t.http.get('/v1/knowledge-bases').query({ limit: 101 }).set(lists.auth('read_only'));
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'limit' });
    });
  });

  describe('organization scoping', () => {
    it('keeps each organization\'s knowledge bases to itself, even under the same name', async () => {
      const name = uniqueName('shared');
      await put(name, { entries: FAQ }).expect(201);

      expect((await get(name, other)).status).toBe(404);
      expect((await get(name, other)).body.error.code).toBe('KNOWLEDGE_BASE_NOT_FOUND');
      const del = await t.http.delete(`/v1/knowledge-bases/${name}`).set(other.auth('full_access'));
      expect(del.status).toBe(404);
      const list = await t.http.get('/v1/knowledge-bases').set(other.auth('read_only'));
      expect(list.body.data.map((kb: { name: string }) => kb.name)).not.toContain(name);

      // The same name in the other organization is a creation there and leaves ours untouched.
      expect((await put(name, { entries: [FAQ[1]] }, other)).status).toBe(201);
      expect((await get(name)).body.data.entries).toEqual(FAQ);
      expect((await get(name, other)).body.data.entries).toEqual([FAQ[1]]);

      const responder = t.app.get<KnowledgeResponder>(KNOWLEDGE_RESPONDER);
      expect((await responder.answer(org.id, name, 'How can I get a refund?')).response).toBe(FAQ[2].answer);
      expect((await responder.answer(other.id, name, 'How can I get a refund?')).response).toBe(t.config.ai.fallbackResponse);
    });
  });

  it('documents PUT with 201 (created) and 200 (replaced), and the name pattern', async () => {
    const doc = (await t.http.get('/openapi.json').expect(200)).body;
    const put = doc.paths['/v1/knowledge-bases/{name}'].put;
    expect(Object.keys(put.responses)).toEqual(expect.arrayContaining(['200', '201', '400', '401', '403']));
    expect(put.parameters).toContainEqual(expect.objectContaining({ name: 'name', in: 'path', schema: expect.objectContaining({ pattern: expect.any(String) }) }));
  });

  describe('authentication and permission levels', () => {
    it('answers 401 MISSING_AUTHENTICATION on every route without a credential', async () => {
      const name = uniqueName();
      await put(name, { entries: FAQ }).expect(201);
      const responses = [
        await t.http.get('/v1/knowledge-bases'),
        await t.http.get(`/v1/knowledge-bases/${name}`),
        await t.http.put(`/v1/knowledge-bases/${name}`).send({ entries: [FAQ[0]] }),
        await t.http.delete(`/v1/knowledge-bases/${name}`),
      ];
      for (const res of responses) {
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('MISSING_AUTHENTICATION');
      }
      expect((await get(name)).body.data.entries).toEqual(FAQ);
    });

    it('lets read_only read but answers 403 on PUT and DELETE', async () => {
      const name = uniqueName();
      await put(name, { entries: FAQ }).expect(201);
      expect((await t.http.get('/v1/knowledge-bases').set(org.auth('read_only'))).status).toBe(200);
      expect((await get(name)).status).toBe(200);
      const responses = [
        await put(name, { entries: [FAQ[0]] }, org, 'read_only'),
        await put(uniqueName(), { entries: [FAQ[0]] }, org, 'read_only'),
        await t.http.delete(`/v1/knowledge-bases/${name}`).set(org.auth('read_only')),
      ];
      for (const res of responses) {
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('INSUFFICIENT_PERMISSIONS');
      }
      expect((await get(name)).body.data.entries).toEqual(FAQ);
    });

    it('lets read_write create and replace but answers 403 on DELETE; full_access deletes', async () => {
      const name = uniqueName();
      expect((await put(name, { entries: FAQ }, org, 'read_write')).status).toBe(201);
      expect((await put(name, { entries: FAQ }, org, 'read_write')).status).toBe(200);
      const del = await t.http.delete(`/v1/knowledge-bases/${name}`).set(org.auth('read_write'));
      expect(del.status).toBe(403);
      expect(del.body.error.code).toBe('INSUFFICIENT_PERMISSIONS');
      expect((await get(name)).status).toBe(200);
      expect((await t.http.delete(`/v1/knowledge-bases/${name}`).set(org.auth('full_access'))).status).toBe(200);
    });
  });

  describe('the built-in responder', () => {
    let responder: KnowledgeResponder;
    beforeAll(() => {
      responder = t.app.get<KnowledgeResponder>(KNOWLEDGE_RESPONDER);
    });

    it('answers from the best entry, with the fallback below the threshold', async () => {
      const name = uniqueName();
      await put(name, { entries: FAQ }).expect(201);
      expect(await responder.answer(org.id, name, 'How do I reset my password?')).toEqual({ response: FAQ[0].answer, confidence: 1 });
      const unrelated = await responder.answer(org.id, name, 'Is it going to rain tomorrow?');
      expect(unrelated).toEqual({ response: t.config.ai.fallbackResponse, confidence: 0 });
    });

    it('sees a replace at once (the cached index is keyed by updated_at)', async () => {
      const name = uniqueName();
      await put(name, { entries: [FAQ[0]] }).expect(201);
      expect((await responder.answer(org.id, name, 'What are your opening hours?')).response).toBe(t.config.ai.fallbackResponse);
      await put(name, { entries: FAQ }).expect(200);
      expect((await responder.answer(org.id, name, 'What are your opening hours?')).response).toBe(FAQ[1].answer);
      await put(name, { entries: [{ question: 'What are your opening hours?', answer: 'Always open.' }] }).expect(200);
      expect((await responder.answer(org.id, name, 'What are your opening hours?')).response).toBe('Always open.');
    });

    it('throws KnowledgeBaseNotFoundError for a missing or deleted knowledge base', async () => {
      await expect(responder.answer(org.id, uniqueName('missing'), 'hello')).rejects.toBeInstanceOf(KnowledgeBaseNotFoundError);
      const name = uniqueName();
      await put(name, { entries: FAQ }).expect(201);
      await responder.answer(org.id, name, 'refund');
      await t.http.delete(`/v1/knowledge-bases/${name}`).set(org.auth('full_access')).expect(200);
      await expect(responder.answer(org.id, name, 'refund')).rejects.toBeInstanceOf(KnowledgeBaseNotFoundError);
    });
  });

  describe('AI_PROVIDER=openai', () => {
    let ai: TestApp;
    let provider: FakeAiProvider;

    beforeAll(async () => {
      provider = await startFakeAiProvider({ content: 'From the fake model.' });
      // With its own workers (on a queue prefix of its own) to run executions through the provider.
      ai = await startTestApp({
        RATE_LIMITS_ENABLED: 'false',
        APP_ROLE: 'all',
        REDIS_KEY_PREFIX: `${t.config.redisKeyPrefix}:ai`,
        AI_PROVIDER: 'openai',
        AI_BASE_URL: provider.url,
        AI_API_KEY: 'test-key',
        AI_MODEL: 'fake-model',
      });
    });
    afterAll(async () => {
      await ai?.close();
      await provider?.close();
    });

    it('answers with the provider\'s text, sending the model, the question and the API key', async () => {
      const name = uniqueName('ai');
      await ai.http.put(`/v1/knowledge-bases/${name}`).set(org.auth('read_write')).send({ entries: FAQ }).expect(201);
      const responder = ai.app.get<KnowledgeResponder>(KNOWLEDGE_RESPONDER);

      const answer = await responder.answer(org.id, name, 'How can I get a refund?');
      expect(answer).toEqual({ response: 'From the fake model.', confidence: 1 });
      expect(provider.requests).toHaveLength(1);
      expect(provider.requests[0].url).toBe('/v1/chat/completions');
      expect(provider.requests[0].headers.authorization).toBe('Bearer test-key');
      expect(provider.requests[0].body).toMatchObject({ model: 'fake-model', temperature: 0 });
      expect(provider.requests[0].body?.messages).toContainEqual({ role: 'user', content: 'How can I get a refund?' });
      expect(provider.requests[0].body?.messages[0].content).toContain(FAQ[2].answer);

      provider.status = 500;
      await expect(responder.answer(org.id, name, 'How can I get a refund?')).rejects.toBeInstanceOf(AiProviderError);
      provider.status = 200;
    });

    it('an ai_response node fails only for its own reasons: a provider outage is retried, a refusal or a missing knowledge base fails it, without the provider\'s body', async () => {
      const db = ai.app.get(DataSource);
      const kb = uniqueName('node');
      await ai.http.put(`/v1/knowledge-bases/${kb}`).set(org.auth('read_write')).send({ entries: FAQ }).expect(201);
      const created = await ai.http.post('/v1/workflows').set(org.auth('read_write')).send({
        name: uniqueName('ai-flow'), channel: 'whatsapp', configuration: { nodes: [{ id: 'answer', type: 'ai_response', knowledge_base: kb }] },
      });
      expect(created.status).toBe(201);
      const workflowId = created.body.data.id;
      await ai.http.post(`/v1/workflows/${workflowId}/activate`).set(org.auth('read_write')).expect(200);
      const keyword = uniqueName('refundkw');
      await createTrigger(ai, org, workflowId, 'message', { keywords: [keyword] });
      const run = async () => {
        const res = await ai.http.post('/v1/messages').set(org.auth('read_write')).send({ channel: 'whatsapp', customer_id: uniqueName('c'), message: `${keyword} how can I get a refund?` });
        expect(res.status).toBe(202);
        const id = res.body.data.executions[0].workflow_execution_id;
        return waitFor(`execution ${id}`, async () => {
          const [e] = await db.query('SELECT status, error FROM workflow_executions WHERE id = $1', [id]);
          return e.status === 'running' ? undefined : e;
        }, 30_000);
      };

      // An outage (503, then 429) is retried with the job's back-off; the third request is answered.
      provider.requests.length = 0;
      provider.upcoming.push(503, 429);
      expect(await run()).toMatchObject({ status: 'success', error: null });
      expect(provider.requests).toHaveLength(3);

      // A refusal fails the node with the status, not the provider's body.
      provider.status = 400;
      const refused = await run();
      provider.status = 200;
      expect(refused).toMatchObject({ status: 'failed', error: { code: 'AI_RESPONSE_FAILED', message: 'AI provider refused the request (HTTP 400)', node_id: 'answer' } });
      expect(JSON.stringify(refused.error)).not.toMatch(/upstream-secret-detail|127\.0\.0\.1|test-key/);

      // Its knowledge base deleted after activation: the node fails and says which.
      await ai.http.delete(`/v1/knowledge-bases/${kb}`).set(org.auth('full_access')).expect(200);
      expect(await run()).toMatchObject({ status: 'failed', error: { code: 'KNOWLEDGE_BASE_NOT_FOUND', message: `Knowledge base "${kb}" not found`, node_id: 'answer' } });
    });
  });
});
