import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkflow, workflowBody } from '../factories/workflows.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SUMMARY_KEYS = [
  'activated_at', 'channel', 'created_at', 'deactivated_at', 'description', 'execution_count', 'id', 'name', 'status',
  'success_rate', 'updated_at', 'version',
];

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function oneNode(content: string) {
  return { nodes: [{ id: 'only', type: 'message', content }] };
}

describe('workflows', () => {
  let t: TestApp;
  let org: TestOrganization;
  let other: TestOrganization;

  beforeAll(async () => {
    // These tests create far more workflows per key than the hourly create/update allowance.
    t = await startTestApp({ RATE_LIMITS_ENABLED: 'false' });
    org = await createOrganization(t);
    other = await createOrganization(t);
  });
  afterAll(() => t?.close());

  const get = (id: string, who = org) => t.http.get(`/v1/workflows/${id}`).set(who.auth('read_only'));

  describe('authentication and permission levels', () => {
    it('answers 401 MISSING_AUTHENTICATION on every workflow route without a credential', async () => {
      const { id } = await createWorkflow(t, org);
      const responses = [
        await t.http.get('/v1/workflows'),
        await t.http.get(`/v1/workflows/${id}`),
        await t.http.post('/v1/workflows').send(workflowBody()),
        await t.http.put(`/v1/workflows/${id}`).send({ description: 'changed' }),
        await t.http.delete(`/v1/workflows/${id}`),
        await t.http.post(`/v1/workflows/${id}/activate`),
        await t.http.post(`/v1/workflows/${id}/deactivate`),
      ];
      for (const res of responses) {
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('MISSING_AUTHENTICATION');
      }
      const after = await get(id);
      expect(after.body.data).toMatchObject({ status: 'draft', description: 'Answers customer questions' });
    });

    it('lets read_only read but answers 403 INSUFFICIENT_PERMISSIONS on every write', async () => {
      const { id } = await createWorkflow(t, org);
      expect((await t.http.get('/v1/workflows').set(org.auth('read_only'))).status).toBe(200);
      expect((await get(id)).status).toBe(200);

      const before = (await get(id)).body.data;
      const responses = [
        await t.http.post('/v1/workflows').set(org.auth('read_only')).send(workflowBody()),
        await t.http.put(`/v1/workflows/${id}`).set(org.auth('read_only')).send({ description: 'changed' }),
        await t.http.delete(`/v1/workflows/${id}`).set(org.auth('read_only')),
        await t.http.post(`/v1/workflows/${id}/activate`).set(org.auth('read_only')),
        await t.http.post(`/v1/workflows/${id}/deactivate`).set(org.auth('read_only')),
      ];
      for (const res of responses) {
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('INSUFFICIENT_PERMISSIONS');
      }
      expect((await get(id)).body.data).toEqual(before);
    });

    it('lets read_write create, update, activate and deactivate, but answers 403 on delete', async () => {
      const created = await t.http.post('/v1/workflows').set(org.auth('read_write')).send(workflowBody());
      expect(created.status).toBe(201);
      const { id } = created.body.data;
      expect((await t.http.put(`/v1/workflows/${id}`).set(org.auth('read_write')).send({ description: 'changed' })).status).toBe(200);
      expect((await t.http.post(`/v1/workflows/${id}/activate`).set(org.auth('read_write'))).status).toBe(200);
      expect((await t.http.post(`/v1/workflows/${id}/deactivate`).set(org.auth('read_write'))).status).toBe(200);

      const del = await t.http.delete(`/v1/workflows/${id}`).set(org.auth('read_write'));
      expect(del.status).toBe(403);
      expect(del.body.error.code).toBe('INSUFFICIENT_PERMISSIONS');
      expect((await get(id)).status).toBe(200);
    });

    it('lets full_access delete', async () => {
      const { id } = await createWorkflow(t, org);
      const del = await t.http.delete(`/v1/workflows/${id}`).set(org.auth('full_access'));
      expect(del.status).toBe(200);
      expect((await get(id)).status).toBe(404);
    });
  });

  describe('GET /v1/workflows', () => {
    let lists: TestOrganization;
    const ids: Record<string, string> = {};

    const list = (query: Record<string, string | number> = {}) => t.http.get('/v1/workflows').query(query).set(lists.auth('read_only'));
    const names = (res: { body: { data: { name: string }[] } }) => res.body.data.map((w) => w.name);

    beforeAll(async () => {
      lists = await createOrganization(t);
      // Created in this order, so newest first is the reverse.
      const rows = [
        { name: 'Alpha support', description: 'Handles refunds', channel: 'whatsapp' },
        { name: 'Beta sales', description: 'Sells SUPPORT plans', channel: 'instagram' },
        { name: 'Gamma 50% off', description: 'Discount campaign', channel: 'voice' },
        { name: 'Delta 50 percent', description: 'No percent sign here', channel: 'whatsapp' },
        { name: 'Order_bot', description: 'Underscore in the name', channel: 'instagram' },
        { name: 'Orderxbot', description: null, channel: 'whatsapp' },
      ];
      for (const row of rows) {
        // An undefined description is left out of the JSON body, so that workflow has none.
        ids[row.name] = (await createWorkflow(t, lists, { ...row, description: row.description ?? undefined })).id;
      }
      const activate = (id: string) => t.http.post(`/v1/workflows/${id}/activate`).set(lists.auth('read_write')).expect(200);
      const deactivate = (id: string) => t.http.post(`/v1/workflows/${id}/deactivate`).set(lists.auth('read_write')).expect(200);
      await activate(ids['Beta sales']);
      await activate(ids['Orderxbot']);
      await deactivate(ids['Gamma 50% off']);
    });

    it('lists the organization\'s workflows newest first, without configuration, with pagination', async () => {
      const res = await list();
      expect(res.status).toBe(200);
      expect(names(res)).toEqual(['Orderxbot', 'Order_bot', 'Delta 50 percent', 'Gamma 50% off', 'Beta sales', 'Alpha support']);
      expect(res.body.pagination).toEqual({ page: 1, limit: 20, total: 6, pages: 1, next_cursor: null });
      for (const item of res.body.data) {
        expect(item).not.toHaveProperty('configuration');
        expect(Object.keys(item).sort()).toEqual(SUMMARY_KEYS);
      }
      expect(res.body.data[0]).toMatchObject({ id: ids['Orderxbot'], status: 'active', channel: 'whatsapp', description: null, execution_count: 0, success_rate: null });
    });

    it('pages with page and limit', async () => {
      const first = await list({ limit: 4 });
      expect(first.body.pagination).toEqual({ page: 1, limit: 4, total: 6, pages: 2, next_cursor: expect.any(String) });
      expect(names(first)).toEqual(['Orderxbot', 'Order_bot', 'Delta 50 percent', 'Gamma 50% off']);
      const second = await list({ limit: 4, page: 2 });
      expect(second.body.pagination).toEqual({ page: 2, limit: 4, total: 6, pages: 2, next_cursor: null });
      expect(names(second)).toEqual(['Beta sales', 'Alpha support']);
      const beyond = await list({ limit: 4, page: 3 });
      expect(beyond.status).toBe(200);
      expect(beyond.body).toEqual({ data: [], pagination: { page: 3, limit: 4, total: 6, pages: 2, next_cursor: null } });
      const exact = await list({ limit: 3 });
      expect(exact.body.pagination).toEqual({ page: 1, limit: 3, total: 6, pages: 2, next_cursor: expect.any(String) });
      expect((await list({ limit: 100 })).body.pagination.limit).toBe(100);
    });

    it('filters by status', async () => {
      expect(names(await list({ status: 'active' }))).toEqual(['Orderxbot', 'Beta sales']);
      expect(names(await list({ status: 'inactive' }))).toEqual(['Gamma 50% off']);
      const drafts = await list({ status: 'draft' });
      expect(names(drafts)).toEqual(['Order_bot', 'Delta 50 percent', 'Alpha support']);
      expect(drafts.body.pagination.total).toBe(3);
    });

    it('filters by channel', async () => {
      expect(names(await list({ channel: 'instagram' }))).toEqual(['Order_bot', 'Beta sales']);
      expect(names(await list({ channel: 'voice' }))).toEqual(['Gamma 50% off']);
    });

    it('searches name or description case-insensitively, combined with the other filters', async () => {
      const res = await list({ search: 'support' });
      expect(names(res)).toEqual(['Beta sales', 'Alpha support']);
      expect(res.body.pagination.total).toBe(2);
      expect(names(await list({ search: 'REFUND' }))).toEqual(['Alpha support']);
      expect(names(await list({ search: 'support', status: 'active' }))).toEqual(['Beta sales']);
      expect(names(await list({ search: 'support', channel: 'whatsapp' }))).toEqual(['Alpha support']);
      expect(names(await list({ search: 'no such thing' }))).toEqual([]);
    });

    it('matches % and _ in the search literally', async () => {
      const percent = await list({ search: '50%' });
      expect(names(percent)).toEqual(['Gamma 50% off']);
      expect(percent.body.pagination.total).toBe(1);
      expect(names(await list({ search: '%' }))).toEqual(['Gamma 50% off']);
      expect(names(await list({ search: 'r_b' }))).toEqual(['Order_bot']);
      expect(names(await list({ search: '\\' }))).toEqual([]);
    });

    it('shows only the caller\'s organization\'s workflows', async () => {
      const res = await t.http.get('/v1/workflows').query({ search: 'Alpha support' }).set(org.auth('read_only'));
      expect(res.body.data).toEqual([]);
      expect(res.body.pagination.total).toBe(0);
    });

    it('keeps the unfiltered total exact through concurrent creates, deletes, writes outside the API and an organization\'s deletion', async () => {
      const counted = await createOrganization(t);
      const db = t.app.get(DataSource);
      const total = async () => (await t.http.get('/v1/workflows').set(counted.auth('read_only')).expect(200)).body.pagination.total;
      const exact = async () => (await db.query('SELECT count(*)::int AS n FROM workflows WHERE organization_id = $1', [counted.id]))[0].n;

      const created = await Promise.all(Array.from({ length: 12 }, (_, i) => createWorkflow(t, counted, { name: `Counted ${i}` })));
      expect(await total()).toBe(12);
      await Promise.all(created.slice(0, 5).map(({ id }) => t.http.delete(`/v1/workflows/${id}`).set(counted.auth()).expect(200)));
      expect(await total()).toBe(7);
      // A refused create (name in use) changes nothing.
      await t.http.post('/v1/workflows').set(counted.auth('read_write')).send({ name: 'Counted 11' }).expect(409);
      // Rows written without the API are counted too: the count is kept by the database.
      await db.query(`INSERT INTO workflows (organization_id, name, configuration) SELECT $1, 'Direct ' || g, '{"nodes":[]}' FROM generate_series(1, 3) g`, [counted.id]);
      expect(await total()).toBe(10);
      await db.query(`DELETE FROM workflows WHERE organization_id = $1 AND name LIKE 'Direct %'`, [counted.id]);
      expect(await total()).toBe(7);
      expect(await exact()).toBe(7);
      // Filtered lists count their matches; past the end the total is still given.
      expect((await t.http.get('/v1/workflows').query({ search: 'Counted 1' }).set(counted.auth()).expect(200)).body.pagination.total).toBe(2);
      expect((await t.http.get('/v1/workflows').query({ page: 9 }).set(counted.auth()).expect(200)).body.pagination.total).toBe(7);
      // Deleting the organization cascades to its workflows without tripping over the count.
      await db.query('DELETE FROM organizations WHERE id = $1', [counted.id]);
      expect(await exact()).toBe(0);
    });

    it('answers 400 INVALID_REQUEST with the field for bad page, limit and filters', async () => {
      const cases: [Record<string, string | number>, string][] = [
        [{ page: 0 }, 'page'],
        [{ page: -1 }, 'page'],
        [{ page: 'abc' }, 'page'],
        [{ page: 1.5 }, 'page'],
        [{ limit: 0 }, 'limit'],
        [{ limit: 101 }, 'limit'],
        [{ limit: 'abc' }, 'limit'],
        [{ status: 'paused' }, 'status'],
        [{ channel: 'sms' }, 'channel'],
      ];
      for (const [query, field] of cases) {
        const res = await list(query);
        expect(res.status, JSON.stringify(query)).toBe(400);
        expect(res.body.error, JSON.stringify(query)).toMatchObject({ code: 'INVALID_REQUEST', field });
      }
    });

    it('writes each item exactly as the by-id answer without its configuration, escapes and numbers as JSON.stringify does', async () => {
      const own = await createOrganization(t);
      const tricky = [
        { name: 'Quote " backslash \\ slash / tab\tend', description: 'Line one\nline two\r\u0001\u001f\u007f' },
        { name: 'Ünïcödé ✓ 😀 \u2028 sep', description: '' },
        { name: 'No channel or description', channel: undefined, description: undefined },
        { name: 'Counted', description: 'a success rate of one in three' },
      ];
      const created: string[] = [];
      for (const body of tricky) created.push((await createWorkflow(t, own, body)).id);
      await t.http.post(`/v1/workflows/${created[3]}/activate`).set(own.auth('read_write')).expect(200);
      await t.http.post(`/v1/workflows/${created[3]}/deactivate`).set(own.auth('read_write')).expect(200);
      // A success rate that is not a round number (1/3), and one of a single success in ten million.
      const db = t.app.get(DataSource);
      await db.query('UPDATE workflows SET execution_count = 3, success_count = 1, failure_count = 2 WHERE id = $1', [created[3]]);
      await db.query('UPDATE workflows SET execution_count = 10000000, success_count = 1, failure_count = 9999999 WHERE id = $1', [created[0]]);
      const res = await t.http.get('/v1/workflows').set(own.auth('read_only')).expect(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      // Byte for byte what JSON.stringify writes for the same value.
      expect(res.text).toBe(JSON.stringify(res.body));
      expect(res.body.data.map((w: { id: string }) => w.id)).toEqual([...created].reverse());
      for (const item of res.body.data) {
        const { configuration, ...summary } = (await t.http.get(`/v1/workflows/${item.id}`).set(own.auth('read_only')).expect(200)).body.data;
        expect(configuration).toBeDefined();
        expect(JSON.stringify(item)).toBe(JSON.stringify(summary));
      }
      expect(res.body.data.find((w: { id: string }) => w.id === created[3])).toMatchObject({ success_rate: 1 / 3, status: 'inactive' });
      expect(res.body.data.find((w: { id: string }) => w.id === created[0])).toMatchObject({ success_rate: 1e-7 });
    });
  });

  describe('GET /v1/workflows/{id}', () => {
    it('returns the workflow with its configuration', async () => {
      const body = workflowBody();
      const { id } = await createWorkflow(t, org, body);
      const res = await get(id);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({
        id,
        name: body.name,
        description: body.description,
        channel: body.channel,
        status: 'draft',
        version: 1,
        execution_count: 0,
        success_rate: null,
        activated_at: null,
        deactivated_at: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        configuration: body.configuration,
      });
    });
  });

  describe('POST /v1/workflows', () => {
    const create = (body: Record<string, unknown>, who = org) => t.http.post('/v1/workflows').set(who.auth('read_write')).send(body);
    const countNamed = async (name: string) => (await t.http.get('/v1/workflows').query({ search: name }).set(org.auth())).body.pagination.total;

    it('creates a draft without echoing the configuration', async () => {
      const body = workflowBody();
      const res = await create(body);
      expect(res.status).toBe(201);
      expect(Object.keys(res.body)).toEqual(['data']);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(UUID),
        name: body.name,
        description: body.description,
        channel: body.channel,
        status: 'draft',
        version: 1,
        execution_count: 0,
        success_rate: null,
        activated_at: null,
        deactivated_at: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      expect(new Date(res.body.data.created_at).toISOString()).toBe(res.body.data.created_at);
      expect((await get(res.body.data.id)).body.data.configuration).toEqual(body.configuration);
    });

    it('creates a workflow from a name alone, with an empty node graph', async () => {
      const res = await create({ name: `Bare ${Date.now()}` });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ description: null, channel: null, status: 'draft' });
      expect((await get(res.body.data.id)).body.data.configuration).toEqual({ nodes: [] });
    });

    it('answers 400 MISSING_REQUIRED_FIELD for a missing name', async () => {
      const { name: _name, ...body } = workflowBody();
      for (const sent of [body, { ...body, name: null }]) {
        const res = await create(sent);
        expect(res.status).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'MISSING_REQUIRED_FIELD', field: 'name' });
      }
    });

    it('answers 400 INVALID_REQUEST with the field for wrong types and values', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ name: 42 }, 'name'],
        [{ name: '' }, 'name'],
        [{ name: 'x'.repeat(201) }, 'name'],
        [{ description: 7 }, 'description'],
        [{ channel: 'sms' }, 'channel'],
        [{ channel: 1 }, 'channel'],
        [{ configuration: 'nodes' }, 'configuration'],
        [{ configuration: [] }, 'configuration'],
      ];
      for (const [overrides, field] of cases) {
        const body = workflowBody(overrides);
        const res = await create(body);
        expect(res.status, JSON.stringify(overrides)).toBe(400);
        expect(res.body.error, JSON.stringify(overrides)).toMatchObject({ code: 'INVALID_REQUEST', field });
      }
    });

    it('answers 400 INVALID_REQUEST for an unknown property', async () => {
      const body = workflowBody({ status: 'active' });
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'status' });
      expect(await countNamed(body.name as string)).toBe(0);
    });

    it('refuses an invalid graph with 400 INVALID_WORKFLOW_CONFIG or 422 INVALID_NODE_CONFIG and the field', async () => {
      const cases: [unknown, number, string, string][] = [
        [{ nodes: {} }, 400, 'INVALID_WORKFLOW_CONFIG', 'configuration.nodes'],
        [{ nodes: [], extra: true }, 400, 'INVALID_WORKFLOW_CONFIG', 'configuration.extra'],
        [{ nodes: [{ id: 'a', type: 'message', content: 'x' }, { id: 'a', type: 'message', content: 'y' }] }, 400, 'INVALID_WORKFLOW_CONFIG', 'configuration.nodes[1].id'],
        [{ nodes: [{ id: 'a', type: 'message', content: 'x', next: 'b' }, { id: 'b', type: 'message', content: 'y', next: 'a' }] }, 400, 'INVALID_WORKFLOW_CONFIG', 'configuration.nodes[1].next'],
        [{ nodes: [{ id: 'a', type: 'message', content: 'x', next: 'ghost' }] }, 400, 'INVALID_WORKFLOW_CONFIG', 'configuration.nodes[0].next'],
        [{ trigger: { type: 'message', keywords: [''] }, nodes: [] }, 400, 'INVALID_WORKFLOW_CONFIG', 'configuration.trigger.keywords[0]'],
        [{ nodes: [{ id: 'a', type: 'message', content: 'x' }, { id: 'b', type: 'message' }] }, 422, 'INVALID_NODE_CONFIG', 'configuration.nodes[1].content'],
        [{ nodes: [{ id: 'a', type: 'teleport' }] }, 422, 'INVALID_NODE_CONFIG', 'configuration.nodes[0].type'],
        [{ nodes: [{ id: 'a', type: 'ai_response' }] }, 422, 'INVALID_NODE_CONFIG', 'configuration.nodes[0].knowledge_base'],
        [{ nodes: [{ id: 'a', type: 'form', fields: [] }] }, 422, 'INVALID_NODE_CONFIG', 'configuration.nodes[0].fields'],
        [{ nodes: [{ id: 'a', type: 'form', fields: [{ name: 'x', type: 'colour' }] }] }, 422, 'INVALID_NODE_CONFIG', 'configuration.nodes[0].fields[0].type'],
      ];
      for (const [configuration, status, code, field] of cases) {
        const body = workflowBody({ configuration });
        const res = await create(body);
        expect(res.status, JSON.stringify(configuration)).toBe(status);
        expect(res.body.error, JSON.stringify(configuration)).toMatchObject({ code, field });
        expect(await countNamed(body.name as string)).toBe(0);
      }
    });

    it('answers 409 WORKFLOW_ALREADY_EXISTS for a name the organization uses, and allows it in another organization', async () => {
      const body = workflowBody();
      expect((await create(body)).status).toBe(201);
      const again = await create({ ...body, description: 'another one' });
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('WORKFLOW_ALREADY_EXISTS');
      expect(await countNamed(body.name as string)).toBe(1);

      const elsewhere = await create(body, other);
      expect(elsewhere.status).toBe(201);
      expect(elsewhere.body.data.name).toBe(body.name);
    });
  });

  describe('PUT /v1/workflows/{id}', () => {
    const update = (id: string, body: Record<string, unknown>) => t.http.put(`/v1/workflows/${id}`).set(org.auth('read_write')).send(body);

    it('keeps omitted fields and moves updated_at', async () => {
      const body = workflowBody();
      const { id } = await createWorkflow(t, org, body);
      const before = (await get(id)).body.data;
      await pause(10);
      const res = await update(id, { description: 'Now with refunds' });
      expect(res.status).toBe(200);
      expect(res.body.data).not.toHaveProperty('configuration');
      expect(res.body.data).toMatchObject({ id, name: body.name, channel: body.channel, description: 'Now with refunds', status: 'draft', version: 1 });
      expect(res.body.data.created_at).toBe(before.created_at);
      expect(new Date(res.body.data.updated_at).getTime()).toBeGreaterThan(new Date(before.updated_at).getTime());

      const after = (await get(id)).body.data;
      expect(after).toEqual({ ...before, description: 'Now with refunds', updated_at: res.body.data.updated_at });

      const renamed = await update(id, { name: `${body.name} renamed`, channel: 'voice' });
      expect(renamed.body.data).toMatchObject({ name: `${body.name} renamed`, channel: 'voice', description: 'Now with refunds' });
    });

    it('raises the version for a new configuration but not for the same one', async () => {
      const body = workflowBody();
      const { id } = await createWorkflow(t, org, body);
      const same = await update(id, { configuration: body.configuration });
      expect(same.status).toBe(200);
      expect(same.body.data.version).toBe(1);

      // The same graph with its keys in another order is still the same configuration.
      const reordered = {
        nodes: body.configuration.nodes.map((node) => Object.fromEntries(Object.entries(node).reverse())),
        trigger: { keywords: ['help'], type: 'message' },
      };
      expect((await update(id, { configuration: reordered })).body.data.version).toBe(1);

      const changed = oneNode('Just one step');
      const res = await update(id, { configuration: changed });
      expect(res.status).toBe(200);
      expect(res.body.data.version).toBe(2);
      expect((await get(id)).body.data).toMatchObject({ version: 2, configuration: changed });
      expect((await update(id, { configuration: changed })).body.data.version).toBe(2);
      expect((await update(id, { name: `${body.name} v2` })).body.data.version).toBe(2);
    });

    it('stores every configuration as an immutable version', async () => {
      const body = workflowBody();
      const { id } = await createWorkflow(t, org, body);
      const second = oneNode('Second');
      const third = { nodes: [{ id: 'ask', type: 'form', fields: [{ name: 'phone', type: 'phone' }] }] };
      expect((await update(id, { configuration: second })).body.data.version).toBe(2);
      expect((await update(id, { description: 'no new version' })).body.data.version).toBe(2);
      expect((await update(id, { configuration: third })).body.data.version).toBe(3);

      const rows: { version: number; configuration: unknown }[] = await t.app
        .get(DataSource)
        .query('SELECT version, configuration FROM workflow_versions WHERE workflow_id = $1 ORDER BY version', [id]);
      expect(rows).toEqual([
        { version: 1, configuration: body.configuration },
        { version: 2, configuration: second },
        { version: 3, configuration: third },
      ]);
    });

    it('answers 409 WORKFLOW_ALREADY_EXISTS when renaming to a name in use, and allows keeping its own name', async () => {
      const taken = await createWorkflow(t, org);
      const { id, name } = await createWorkflow(t, org);
      const res = await update(id, { name: taken.name });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('WORKFLOW_ALREADY_EXISTS');
      expect((await get(id)).body.data.name).toBe(name);
      expect((await update(id, { name })).status).toBe(200);
    });

    it('validates the body and the graph, leaving the workflow unchanged', async () => {
      const body = workflowBody();
      const { id } = await createWorkflow(t, org, body);
      const before = (await get(id)).body.data;
      const cases: [Record<string, unknown>, number, string, string][] = [
        [{ status: 'active' }, 400, 'INVALID_REQUEST', 'status'],
        [{ name: 3 }, 400, 'INVALID_REQUEST', 'name'],
        [{ name: '' }, 400, 'INVALID_REQUEST', 'name'],
        // The name cannot be removed (this was a 500 from the NOT NULL column).
        [{ name: null }, 400, 'MISSING_REQUIRED_FIELD', 'name'],
        [{ channel: 'fax' }, 400, 'INVALID_REQUEST', 'channel'],
        [{ configuration: 'x' }, 400, 'INVALID_REQUEST', 'configuration'],
        [{ configuration: { nodes: [{ id: 'a', type: 'message', content: 'x', next: 'a' }] } }, 400, 'INVALID_WORKFLOW_CONFIG', 'configuration.nodes[0].next'],
        [{ description: 'ignored', configuration: { nodes: [{ id: 'a', type: 'message', content: '' }] } }, 422, 'INVALID_NODE_CONFIG', 'configuration.nodes[0].content'],
      ];
      for (const [sent, status, code, field] of cases) {
        const res = await update(id, sent);
        expect(res.status, JSON.stringify(sent)).toBe(status);
        expect(res.body.error, JSON.stringify(sent)).toMatchObject({ code, field });
      }
      expect((await get(id)).body.data).toEqual(before);
    });

    it('refuses an empty node list for an active workflow but allows it for a draft', async () => {
      const { id } = await createWorkflow(t, org);
      expect((await t.http.post(`/v1/workflows/${id}/activate`).set(org.auth('read_write'))).status).toBe(200);
      const before = (await get(id)).body.data;
      const res = await update(id, { configuration: { nodes: [] } });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_WORKFLOW_CONFIG', field: 'configuration.nodes' });
      expect((await get(id)).body.data).toEqual(before);

      const changed = await update(id, { configuration: oneNode('Still running') });
      expect(changed.status).toBe(200);
      expect(changed.body.data).toMatchObject({ status: 'active', version: 2 });

      const draft = await createWorkflow(t, org);
      const emptied = await update(draft.id, { configuration: { nodes: [] } });
      expect(emptied.status).toBe(200);
      expect(emptied.body.data).toMatchObject({ status: 'draft', version: 2 });
    });
  });

  describe('DELETE /v1/workflows/{id}', () => {
    it('deletes the workflow and its versions, then answers 404', async () => {
      const { id } = await createWorkflow(t, org);
      const res = await t.http.delete(`/v1/workflows/${id}`).set(org.auth());
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: expect.any(String) });
      expect(res.body.message.length).toBeGreaterThan(0);

      const gone = await get(id);
      expect(gone.status).toBe(404);
      expect(gone.body.error.code).toBe('WORKFLOW_NOT_FOUND');
      const again = await t.http.delete(`/v1/workflows/${id}`).set(org.auth());
      expect(again.status).toBe(404);
      expect(again.body.error.code).toBe('WORKFLOW_NOT_FOUND');
      const versions = await t.app.get(DataSource).query('SELECT 1 FROM workflow_versions WHERE workflow_id = $1', [id]);
      expect(versions).toEqual([]);
    });

    it('frees the name for a new workflow', async () => {
      const body = workflowBody();
      const { id } = await createWorkflow(t, org, body);
      expect((await t.http.delete(`/v1/workflows/${id}`).set(org.auth())).status).toBe(200);
      const res = await t.http.post('/v1/workflows').set(org.auth('read_write')).send(body);
      expect(res.status).toBe(201);
      expect(res.body.data.id).not.toBe(id);
    });
  });

  describe('activate and deactivate', () => {
    const activate = (id: string) => t.http.post(`/v1/workflows/${id}/activate`).set(org.auth('read_write'));
    const deactivate = (id: string) => t.http.post(`/v1/workflows/${id}/deactivate`).set(org.auth('read_write'));

    it('activates idempotently, keeping activated_at', async () => {
      const { id } = await createWorkflow(t, org);
      const first = await activate(id);
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ data: { id, status: 'active', activated_at: expect.any(String) } });
      expect(Number.isNaN(Date.parse(first.body.data.activated_at))).toBe(false);
      expect((await get(id)).body.data).toMatchObject({ status: 'active', activated_at: first.body.data.activated_at });

      await pause(10);
      const second = await activate(id);
      expect(second.status).toBe(200);
      expect(second.body).toEqual(first.body);
    });

    it('deactivates idempotently, keeping deactivated_at, and activates again with a new activated_at', async () => {
      const { id } = await createWorkflow(t, org);
      const activated = (await activate(id)).body.data.activated_at;
      await pause(10);
      const first = await deactivate(id);
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ data: { id, status: 'inactive', deactivated_at: expect.any(String) } });
      expect((await get(id)).body.data).toMatchObject({ status: 'inactive', deactivated_at: first.body.data.deactivated_at });

      await pause(10);
      const second = await deactivate(id);
      expect(second.body).toEqual(first.body);

      await pause(10);
      const again = await activate(id);
      expect(again.body.data.status).toBe('active');
      expect(new Date(again.body.data.activated_at).getTime()).toBeGreaterThan(new Date(activated).getTime());
    });

    it('deactivates a draft', async () => {
      const { id } = await createWorkflow(t, org);
      const res = await deactivate(id);
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id, status: 'inactive' });
    });

    it('refuses to activate a workflow with an empty node graph', async () => {
      const { id } = await createWorkflow(t, org, { configuration: { nodes: [] } });
      const res = await activate(id);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_WORKFLOW_CONFIG', field: 'configuration.nodes' });
      expect((await get(id)).body.data).toMatchObject({ status: 'draft', activated_at: null });
    });
  });

  describe('unknown, malformed and foreign ids', () => {
    /** Every route naming a workflow, each as [label, send] with full_access (the highest level). */
    const routes = (id: string, who: TestOrganization) =>
      [
        ['get', () => t.http.get(`/v1/workflows/${id}`).set(who.auth())],
        ['update', () => t.http.put(`/v1/workflows/${id}`).set(who.auth()).send({ description: 'taken over' })],
        ['delete', () => t.http.delete(`/v1/workflows/${id}`).set(who.auth())],
        ['activate', () => t.http.post(`/v1/workflows/${id}/activate`).set(who.auth())],
        ['deactivate', () => t.http.post(`/v1/workflows/${id}/deactivate`).set(who.auth())],
      ] as const;

    it('answers 404 WORKFLOW_NOT_FOUND for unknown and malformed ids', async () => {
      for (const id of [UNKNOWN_ID, 'not-a-uuid', '123', `${UNKNOWN_ID}0`]) {
        for (const [label, send] of routes(id, org)) {
          const res = await send();
          expect(res.status, `${label} ${id}`).toBe(404);
          expect(res.body.error.code).toBe('WORKFLOW_NOT_FOUND');
        }
      }
    });

    it('answers 404 to another organization on every route and leaves the workflow unchanged', async () => {
      const { id } = await createWorkflow(t, org);
      const before = (await get(id)).body.data;
      for (const [label, send] of routes(id, other)) {
        const res = await send();
        expect(res.status, label).toBe(404);
        expect(res.body.error.code).toBe('WORKFLOW_NOT_FOUND');
      }
      expect((await get(id)).body.data).toEqual(before);
      const listed = await t.http.get('/v1/workflows').query({ limit: 100 }).set(other.auth());
      expect(listed.body.data.map((w: { id: string }) => w.id)).not.toContain(id);
    });
  });

  describe('edge inputs found in review', () => {
    it('refuses a blank name on create and update', async () => {
      const created = await t.http.post('/v1/workflows').set(org.auth('read_write')).send(workflowBody({ name: '   ' }));
      expect(created.status).toBe(400);
      expect(created.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'name' });
      const { id } = await createWorkflow(t, org);
      const updated = await t.http.put(`/v1/workflows/${id}`).set(org.auth('read_write')).send({ name: ' ' });
      expect(updated.status).toBe(400);
      expect(updated.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'name' });
    });

    it('refuses a null configuration on create, as on update, and null nodes', async () => {
      const res = await t.http.post('/v1/workflows').set(org.auth('read_write')).send(workflowBody({ configuration: null }));
      expect(res.status).toBe(400);
      expect(res.body.error.field).toBe('configuration');
      const nodes = await t.http.post('/v1/workflows').set(org.auth('read_write')).send(workflowBody({ configuration: { nodes: null } }));
      expect(nodes.status).toBe(400);
      expect(nodes.body.error).toMatchObject({ code: 'INVALID_WORKFLOW_CONFIG', field: 'configuration.nodes' });
    });

    it('refuses a page beyond the maximum instead of failing in the database', async () => {
      const res = await t.http.get('/v1/workflows?page=100000000000000000000').set(org.auth('read_only'));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'page' });
    });
  });
});
