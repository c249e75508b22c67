import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKFLOW_VERSIONS_PAGE } from '../../src/workflows/workflow-versions.repository.js';
import { createWorkflow } from '../factories/workflows.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

function oneNode(content: string) {
  return { nodes: [{ id: 'only', type: 'message', content }] };
}

/** A workflow's history: `GET /v1/workflows/{workflow_id}/versions` and `…/versions/{version}`. */
describe('workflow versions', () => {
  let t: TestApp;
  let org: TestOrganization;
  let other: TestOrganization;
  let db: DataSource;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS_ENABLED: 'false' });
    db = t.app.get(DataSource);
    org = await createOrganization(t);
    other = await createOrganization(t);
  });
  afterAll(() => t?.close());

  const versions = (id: string, query: Record<string, string | number> = {}, who = org) => t.http.get(`/v1/workflows/${id}/versions`).query(query).set(who.auth('read_only'));
  const version = (id: string, n: string | number, who = org) => t.http.get(`/v1/workflows/${id}/versions/${n}`).set(who.auth('read_only'));
  const update = (id: string, body: Record<string, unknown>) => t.http.put(`/v1/workflows/${id}`).set(org.auth('read_write')).send(body);
  const apiKeyId = async (level: 'read_write' | 'full_access') =>
    (await t.http.get('/v1/me').set(org.auth(level))).body.data.credential_id as string;

  it('writes version 1 on create and one more with every new configuration, with the name, description, channel and credential of then', async () => {
    const created = await createWorkflow(t, org, { name: `History ${Date.now()}`, description: 'first', channel: 'whatsapp', configuration: oneNode('one') });
    const writer = await apiKeyId('read_write');
    let list = await versions(created.id);
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).toEqual({
      version: 1,
      name: created.name,
      description: 'first',
      channel: 'whatsapp',
      created_by: { credential_type: 'api_key', credential_id: writer, user_id: null },
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });

    // A new configuration (with a new name): version 2, written by the full_access key this time.
    const changed = await t.http.put(`/v1/workflows/${created.id}`).set(org.auth('full_access')).send({ name: `${created.name} v2`, configuration: oneNode('two') });
    expect(changed.status).toBe(200);
    expect(changed.body.data.version).toBe(2);
    // A rename alone, the same configuration again, and refused updates: no version.
    expect((await update(created.id, { description: 'renamed only' })).body.data.version).toBe(2);
    expect((await update(created.id, { configuration: oneNode('two') })).body.data.version).toBe(2);
    const invalid = await update(created.id, { configuration: { nodes: [{ id: 'x', type: 'message' }] } });
    expect(invalid.status).toBe(422);
    const cyclic = await update(created.id, { configuration: { nodes: [{ id: 'a', type: 'message', content: 'a', next: 'a' }] } });
    expect(cyclic.status).toBe(400);
    const taken = await createWorkflow(t, org);
    expect((await update(created.id, { name: taken.name, configuration: oneNode('never stored') })).status).toBe(409);
    expect((await update(created.id, { configuration: oneNode('three') })).body.data.version).toBe(3);

    list = await versions(created.id);
    expect(list.body.data.map((v: { version: number; name: string; description: string }) => [v.version, v.name, v.description])).toEqual([
      [3, `${created.name} v2`, 'renamed only'],
      [2, `${created.name} v2`, 'first'],
      [1, created.name, 'first'],
    ]);
    expect(list.body.data[1].created_by.credential_id).toBe(await apiKeyId('full_access'));
    expect(list.body.pagination).toEqual({ page: 1, limit: 20, total: 3, pages: 1, next_cursor: null });
    const stored = await db.query(`SELECT version, configuration FROM workflow_versions WHERE workflow_id = $1 ORDER BY version`, [created.id]);
    expect(stored.map((r: { configuration: { nodes: { content: string }[] } }) => r.configuration.nodes[0]!.content)).toEqual(['one', 'two', 'three']);

    // Each version with the configuration it pins.
    const old = await version(created.id, 1);
    expect(old.status).toBe(200);
    expect(old.body.data).toMatchObject({ version: 1, workflow_id: created.id, name: created.name, configuration: oneNode('one') });
    expect((await version(created.id, 3)).body.data.configuration).toEqual(oneNode('three'));
  });

  it('pages newest first by page and by cursor, the same versions either way', async () => {
    const { id } = await createWorkflow(t, org, { configuration: oneNode('v1') });
    for (let n = 2; n <= 7; n++) expect((await update(id, { configuration: oneNode(`v${n}`) })).body.data.version).toBe(n);
    const numbers = (res: { body: { data: { version: number }[] } }) => res.body.data.map((v) => v.version);

    const first = await versions(id, { limit: 3 });
    expect(numbers(first)).toEqual([7, 6, 5]);
    expect(first.body.pagination).toMatchObject({ page: 1, limit: 3, total: 7, pages: 3 });
    expect(first.body.pagination.next_cursor).toEqual(expect.any(String));
    const second = await versions(id, { limit: 3, after: first.body.pagination.next_cursor });
    expect(numbers(second)).toEqual([4, 3, 2]);
    const third = await versions(id, { limit: 3, after: second.body.pagination.next_cursor });
    expect(numbers(third)).toEqual([1]);
    expect(third.body.pagination.next_cursor).toBeNull();
    expect(numbers(await versions(id, { limit: 3, page: 2 }))).toEqual([4, 3, 2]);
    // A page past the end: empty, the total still known.
    const past = await versions(id, { limit: 3, page: 4 });
    expect(past.status).toBe(200);
    expect(past.body).toEqual({ data: [], pagination: { page: 4, limit: 3, total: 7, pages: 3, next_cursor: null } });

    // Another workflow's cursor, or anything else, is no cursor of this list.
    const elsewhere = await createWorkflow(t, org, { configuration: oneNode('a') });
    await update(elsewhere.id, { configuration: oneNode('b') });
    const foreign = (await versions(elsewhere.id, { limit: 1 })).body.pagination.next_cursor as string;
    for (const after of [foreign, 'not-a-cursor', '']) {
      const res = await versions(id, { after });
      expect(res.status, after).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'after' });
    }
    for (const [query, field] of [[{ limit: 0 }, 'limit'], [{ limit: 101 }, 'limit'], [{ page: 0 }, 'page'], [{ page: 'x' }, 'page']] as const) {
      const res = await versions(id, query);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', field });
    }
  });

  it("answers another organization's workflow as the workflow route does, and bad versions with the error envelope", async () => {
    const { id } = await createWorkflow(t, org, { configuration: oneNode('mine') });
    for (const res of [await t.http.get(`/v1/workflows/${id}`).set(other.auth('read_only')), await versions(id, {}, other), await version(id, 1, other)]) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('WORKFLOW_NOT_FOUND');
    }
    for (const missing of [UNKNOWN_ID, 'not-a-uuid']) {
      expect((await versions(missing)).body.error.code).toBe('WORKFLOW_NOT_FOUND');
      expect((await version(missing, 1)).body.error.code).toBe('WORKFLOW_NOT_FOUND');
    }
    const absent = await version(id, 2);
    expect(absent.status).toBe(404);
    expect(absent.body.error.code).toBe('WORKFLOW_VERSION_NOT_FOUND');
    for (const bad of ['0', '-1', 'x', '1.5', '01', '2147483648', '99999999999']) {
      const res = await version(id, bad);
      expect(res.status, bad).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'version' });
    }
    expect((await version(id, 2147483647)).body.error.code).toBe('WORKFLOW_VERSION_NOT_FOUND');
    // Without a credential, 401; the versions need workflows:read like the workflow.
    expect((await t.http.get(`/v1/workflows/${id}/versions`)).status).toBe(401);
    expect((await t.http.get(`/v1/workflows/${id}/versions/1`)).status).toBe(401);
  });

  it('deletes the versions with their workflow', async () => {
    const { id } = await createWorkflow(t, org, { configuration: oneNode('a') });
    await update(id, { configuration: oneNode('b') });
    expect((await t.http.delete(`/v1/workflows/${id}`).set(org.auth('full_access'))).status).toBe(200);
    expect((await versions(id)).body.error.code).toBe('WORKFLOW_NOT_FOUND');
    expect(await db.query(`SELECT 1 FROM workflow_versions WHERE workflow_id = $1`, [id])).toEqual([]);
  });

  it('reads a page of a long history through the (workflow_id, version) index, without reading the other versions', async () => {
    const { id } = await createWorkflow(t, org, { configuration: oneNode('a') });
    // 2,000 versions of one workflow and 50,000 of others, written as the service writes them.
    await db.query(
      `INSERT INTO workflow_versions (organization_id, workflow_id, version, configuration, name)
       SELECT $1, $2, v, '{"nodes":[]}', 'bulk' FROM generate_series(2, 2000) v`,
      [org.id, id],
    );
    await db.query(`UPDATE workflows SET version = 2000 WHERE id = $1`, [id]);
    const others = await db.query(
      `INSERT INTO workflows (organization_id, name, configuration, version) SELECT $1, 'bulk-' || g || '-' || gen_random_uuid(), '{"nodes":[]}', 100 FROM generate_series(1, 500) g RETURNING id`,
      [other.id],
    );
    await db.query(
      `INSERT INTO workflow_versions (organization_id, workflow_id, version, configuration) SELECT $1, w, v, '{"nodes":[]}' FROM unnest($2::uuid[]) w, generate_series(1, 100) v`,
      [other.id, others.map((r: { id: string }) => r.id)],
    );
    await db.query('ANALYZE workflow_versions');
    const res = await versions(id, { limit: 20, after: (await versions(id, { limit: 20 })).body.pagination.next_cursor });
    expect(res.body.data.map((v: { version: number }) => v.version)).toEqual(Array.from({ length: 20 }, (_, i) => 1980 - i));
    const [{ 'QUERY PLAN': [plan] }] = await db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${WORKFLOW_VERSIONS_PAGE.text}`, [id, org.id, 1981, 20, 0]);
    const nodes: { 'Node Type': string; 'Index Name'?: string; 'Relation Name'?: string; 'Actual Rows': number; 'Scan Direction'?: string }[] = [];
    const walk = (n: Record<string, unknown>) => {
      nodes.push(n as never);
      for (const c of (n.Plans as Record<string, unknown>[] | undefined) ?? []) walk(c);
    };
    walk(plan.Plan);
    const onVersions = nodes.filter((n) => n['Relation Name'] === 'workflow_versions' || n['Index Name']?.startsWith('uq_workflow_versions'));
    // Never a scan of the table: the page is a backward walk of the index from the cursor (20 rows), the
    // total a count of this workflow's entries of the same index (index-only once vacuumed, else a bitmap).
    expect(nodes.some((n) => n['Node Type'] === 'Seq Scan')).toBe(false);
    expect(onVersions.filter((n) => n['Index Name'] !== undefined).every((n) => n['Index Name'] === 'uq_workflow_versions_workflow_version')).toBe(true);
    expect(onVersions.find((n) => n['Node Type'] === 'Index Scan')).toMatchObject({ 'Scan Direction': 'Backward', 'Actual Rows': 20 });
    expect(Math.max(...onVersions.map((n) => n['Actual Rows']))).toBe(2000);
  });
});
