import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseIsoDate } from '../../src/common/date-range.js';
import { foldSpansOfAll, WORKFLOW_SKETCHES } from '../../src/execution-metrics/customer-days.js';
import { SketchLoop } from '../../src/execution-metrics/sketch.loop.js';
import { RollupFolder } from '../../src/rollups/rollup-folder.js';
import { insertTrigger, insertWorkflowExecution } from '../factories/executions.js';
import { createWorkflow } from '../factories/workflows.js';
import { expectRollupsMatchRows } from '../utils/rollups.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';

/**
 * The execution lists, cursors and metrics at a history of a few hundred rows written straight to
 * the tables (as the bench seeds them), each figure compared with what raw SQL over the recorded
 * rows says: totals, every page (the deep ones are read from the list's other end), statuses that
 * change when running executions finish later.
 */

type Query = Record<string, string | number>;

const BASE = Date.parse('2025-06-01T00:00:00Z');
const HOUR = 3_600_000;

/**
 * `n` executions of the workflow and one trigger execution each (a refused firing every 9th,
 * without a workflow execution), started over about four days with some at the same instant
 * (same started_at: ordered by id), statuses cycling, and the workflow's and trigger's counters
 * moved as the engine's statements move them.
 */
async function seed(ds: DataSource, organizationId: string, workflowId: string, triggerId: string, n: number): Promise<void> {
  await ds.query(
    `WITH g AS (
       SELECT i, gen_random_uuid() AS id,
              to_timestamp($4::float8 / 1000) + ((i * 7919) % 157) * interval '37 minutes' AS started_at,
              (ARRAY['success', 'failed', 'running', 'success', 'success'])[1 + i % 5] AS status,
              (ARRAY['whatsapp', 'instagram', NULL])[1 + i % 3] AS channel,
              CASE WHEN i % 4 = 0 THEN NULL ELSE 'customer-' || (i % 23) END AS customer
         FROM generate_series(1, $5::int) i
     ), e AS (
       INSERT INTO workflow_executions (id, organization_id, workflow_id, workflow_version, trigger_id, customer_ref, channel, status, input,
                                        output, started_at, completed_at, duration_ms)
       SELECT id, $1, $2, 1, $3, customer, channel, status, jsonb_build_object('message', 'm' || i), NULL, started_at,
              CASE WHEN status <> 'running' THEN started_at + (i * 37 % 5000) * interval '1 second' END,
              CASE WHEN status <> 'running' THEN (i * 37 % 5000) * 1000 END
         FROM g WHERE i % 9 <> 0
       RETURNING id
     )
     INSERT INTO trigger_executions (organization_id, trigger_id, workflow_id, workflow_execution_id, status, input, triggered_at, completed_at, duration_ms)
     SELECT $1, $3, $2, CASE WHEN i % 9 <> 0 THEN id END, CASE WHEN i % 9 = 0 THEN 'failed' ELSE status END,
            jsonb_build_object('customer_id', customer, 'channel', channel), started_at,
            CASE WHEN i % 9 = 0 THEN started_at WHEN status <> 'running' THEN started_at + (i * 37 % 5000) * interval '1 second' END,
            CASE WHEN i % 9 = 0 THEN 0 WHEN status <> 'running' THEN (i * 37 % 5000) * 1000 END
       FROM g`,
    [organizationId, workflowId, triggerId, BASE, n],
  );
  await ds.query(
    `UPDATE workflows w SET execution_count = c.n, success_count = c.s, failure_count = c.f
       FROM (SELECT count(*)::int AS n, (count(*) FILTER (WHERE status = 'success'))::int AS s, (count(*) FILTER (WHERE status = 'failed'))::int AS f
               FROM workflow_executions WHERE workflow_id = $1) c
      WHERE w.id = $1`,
    [workflowId],
  );
  await ds.query(`UPDATE triggers SET execution_count = (SELECT count(*) FROM trigger_executions WHERE trigger_id = $1) WHERE id = $1`, [triggerId]);
}

/**
 * Running executions finishing, as the engine's commit finishes them: the execution, its trigger
 * execution and the workflow's counters in one statement; some finish hours after they started.
 */
async function finishRunning(ds: DataSource, workflowId: string, count: number): Promise<void> {
  await ds.query(
    `WITH done AS (
       UPDATE workflow_executions e
          SET status = CASE WHEN f.rn % 2 = 0 THEN 'success' ELSE 'failed' END,
              completed_at = e.started_at + f.rn * interval '95 minutes', duration_ms = (f.rn * 95 * 60000)::int, updated_at = now()
         FROM (SELECT id, row_number() OVER (ORDER BY id) AS rn FROM workflow_executions
                WHERE workflow_id = $1 AND status = 'running' ORDER BY id LIMIT $2) f
        WHERE e.id = f.id
        RETURNING e.id, e.status, e.completed_at
     ), te AS (
       UPDATE trigger_executions t SET status = d.status, completed_at = d.completed_at,
              duration_ms = GREATEST(0, (EXTRACT(EPOCH FROM (d.completed_at - t.triggered_at)) * 1000)::int)
         FROM done d WHERE t.workflow_execution_id = d.id
     )
     UPDATE workflows w SET success_count = w.success_count + c.s, failure_count = w.failure_count + c.f
       FROM (SELECT (count(*) FILTER (WHERE status = 'success'))::int AS s, (count(*) FILTER (WHERE status = 'failed'))::int AS f FROM done) c
      WHERE w.id = $1`,
    [workflowId, count],
  );
}

describe('history: execution lists', () => {
  let t: TestApp;
  let ds: DataSource;
  let org: TestOrganization;
  let other: TestOrganization;
  let wf: string;
  let trigger: string;
  let otherWf: string;
  let otherTrigger: string;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS_ENABLED: 'false', APP_ROLE: 'api' });
    ds = t.app.get(DataSource);
    org = await createOrganization(t);
    other = await createOrganization(t);
    wf = (await createWorkflow(t, org)).id;
    trigger = await insertTrigger(ds, { organizationId: org.id, workflowId: wf, name: 'History trigger' });
    otherWf = (await createWorkflow(t, other)).id;
    otherTrigger = await insertTrigger(ds, { organizationId: other.id, workflowId: otherWf, name: 'Other history trigger' });
    await seed(ds, org.id, wf, trigger, 230);
    // Another organization's history in the same tables, which must never show or count.
    await seed(ds, other.id, otherWf, otherTrigger, 40);
  });
  afterAll(() => t?.close());

  const read = (path: string, query: Query = {}) => t.http.get(path).query(query).set(org.auth('read_only'));

  /** What the recorded rows say a list page is: its ids and the number of matches. */
  async function expected(kind: 'workflow' | 'trigger', query: Query): Promise<{ ids: string[]; total: number }> {
    const [table, parent, time, id] =
      kind === 'workflow' ? ['workflow_executions', 'workflow_id', 'started_at', wf] : ['trigger_executions', 'trigger_id', 'triggered_at', trigger];
    const conditions = [`${parent} = $1`];
    const values: unknown[] = [id];
    if (query.status) conditions.push(`status = $${values.push(query.status)}`);
    // The bounds as the API reads them (a date alone as end_date is that day's last millisecond).
    if (query.start_date) conditions.push(`${time} >= $${values.push(parseIsoDate(String(query.start_date), 'start_date'))}`);
    if (query.end_date) conditions.push(`${time} <= $${values.push(parseIsoDate(String(query.end_date), 'end_date', 'end'))}`);
    const where = conditions.join(' AND ');
    const limit = Number(query.limit ?? 20);
    const offset = (Number(query.page ?? 1) - 1) * limit;
    const rows: { id: string }[] = await ds.query(
      `SELECT id FROM ${table} WHERE ${where} ORDER BY ${time} DESC, id DESC LIMIT ${limit} OFFSET ${offset}`,
      values,
    );
    const [{ total }] = await ds.query(`SELECT count(*)::int AS total FROM ${table} WHERE ${where}`, values);
    return { ids: rows.map((r) => r.id), total };
  }

  const FILTERS: Query[] = [
    {},
    { status: 'success' },
    { status: 'failed' },
    { status: 'running' },
    { start_date: '2025-06-02T06:00:00Z' },
    { end_date: '2025-06-03' },
    { start_date: '2025-06-01T12:00:00.001Z', end_date: '2025-06-03T23:00:00Z' },
    { status: 'success', start_date: '2025-06-02', end_date: '2025-06-04T01:00:00Z' },
    { status: 'running', end_date: '2025-06-02T13:30:00Z' },
  ];

  async function checkEveryPage(kind: 'workflow' | 'trigger') {
    const path = kind === 'workflow' ? `/v1/workflows/${wf}/executions` : `/v1/triggers/${trigger}/executions`;
    for (const filter of FILTERS) {
      for (const limit of [7, 20, 100]) {
        const first = await expected(kind, { ...filter, limit });
        const pages = Math.ceil(first.total / limit);
        // Every page, the last one partial, and one past the end.
        for (let page = 1; page <= pages + 1; page++) {
          const query = { ...filter, limit, page };
          const want = await expected(kind, query);
          const res = await read(path, query);
          expect(res.status).toBe(200);
          expect({ query, ids: res.body.data.map((i: { id: string }) => i.id), pagination: res.body.pagination }).toEqual({
            query,
            ids: want.ids,
            // A full page before the last one hands out the cursor of its last row.
            pagination: { page, limit, total: want.total, pages, next_cursor: page < pages ? expect.any(String) : null },
          });
        }
      }
    }
  }

  it('workflow executions: every page and total, with each filter, equal the recorded rows', async () => {
    await checkEveryPage('workflow');
  });

  it('trigger executions: every page and total, refused firings included, equal the recorded rows', async () => {
    await checkEveryPage('trigger');
  });

  it('running executions that finish later move between the status lists and totals', async () => {
    const before = await read(`/v1/workflows/${wf}/executions`, { status: 'running' });
    await finishRunning(ds, wf, 9);
    const after = await read(`/v1/workflows/${wf}/executions`, { status: 'running' });
    expect(after.body.pagination.total).toBe(before.body.pagination.total - 9);
    await checkEveryPage('workflow');
    await checkEveryPage('trigger');
  });

  it('the unfiltered total is the workflow\'s execution_count, equal to its rows', async () => {
    const list = await read(`/v1/workflows/${wf}/executions`);
    const workflow = await read(`/v1/workflows/${wf}`);
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM workflow_executions WHERE workflow_id = $1`, [wf]);
    expect([list.body.pagination.total, workflow.body.data.execution_count]).toEqual([n, n]);
  });

  /** Every id of a list walked by cursor from its first page, and the totals each page reported. */
  async function walk(path: string, filter: Query, limit: number) {
    const ids: string[] = [];
    const totals = new Set<number>();
    let after: string | null | undefined;
    for (let pages = 0; pages < 500; pages++) {
      const res = await read(path, { ...filter, limit, ...(after ? { after } : {}) });
      expect(res.status).toBe(200);
      ids.push(...res.body.data.map((i: { id: string }) => i.id));
      totals.add(res.body.pagination.total);
      after = res.body.pagination.next_cursor;
      if (after === null) return { ids, totals: [...totals] };
      expect(res.body.data).toHaveLength(limit);
    }
    throw new Error('the cursor never reached the end');
  }

  it('a cursor walk from the first page visits every matching row once, in list order', async () => {
    for (const kind of ['workflow', 'trigger'] as const) {
      const path = kind === 'workflow' ? `/v1/workflows/${wf}/executions` : `/v1/triggers/${trigger}/executions`;
      for (const filter of FILTERS) {
        for (const limit of [13, 100]) {
          const all = await expected(kind, { ...filter, limit: 100000 });
          expect({ kind, filter, limit, ...(await walk(path, filter, limit)) }).toEqual({ kind, filter, limit, ids: all.ids, totals: [all.total] });
        }
      }
    }
  }, 120_000);

  it('a cursor page is unmoved by newer executions recorded meanwhile, where an offset page shifts', async () => {
    const path = `/v1/workflows/${wf}/executions`;
    const first = await read(path, { limit: 10 });
    const second = await read(path, { limit: 10, after: first.body.pagination.next_cursor });
    const offsetSecond = await read(path, { limit: 10, page: 2 });
    const newer = [];
    for (let i = 0; i < 3; i++) {
      newer.push(await insertWorkflowExecution(ds, { organizationId: org.id, workflowId: wf, status: 'running', startedAt: new Date(Date.now() + i).toISOString() }));
    }
    const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((i) => i.id);
    expect(ids(await read(path, { limit: 10, after: first.body.pagination.next_cursor }))).toEqual(ids(second));
    const shifted = ids(await read(path, { limit: 10, page: 2 }));
    expect(shifted).toEqual([...ids(first).slice(7), ...ids(offsetSecond).slice(0, 7)]);
    expect(ids(await read(path, { limit: 3 }))).toEqual(newer.reverse());
  });

  it('refuses a cursor it did not hand out: 400 INVALID_REQUEST on after', async () => {
    for (const after of ['nope', '', 'eyJ9', Buffer.from('12:not-a-uuid').toString('base64url'), '%%%']) {
      for (const path of [`/v1/workflows/${wf}/executions`, `/v1/triggers/${trigger}/executions`, '/v1/workflows']) {
        const res = await read(path, { after });
        expect({ path, after, status: res.status, code: res.body.error?.code, field: res.body.error?.field }).toEqual({
          path, after, status: 400, code: 'INVALID_REQUEST', field: 'after',
        });
      }
    }
  });

  it('walks the workflow list by cursor, ties on created_at included, with and without filters', async () => {
    // 45 workflows created in one statement share one created_at: only the id orders them.
    await ds.query(
      `INSERT INTO workflows (organization_id, name, description, status, configuration)
       SELECT $1, 'Tied ' || i, CASE WHEN i % 2 = 0 THEN 'even refunds' END, (ARRAY['draft', 'active'])[1 + i % 2], '{"nodes":[]}'
         FROM generate_series(1, 45) i`,
      [org.id],
    );
    const queries: Query[] = [{}, { status: 'active' }, { search: 'refunds' }, { search: 'tied', status: 'draft' }];
    for (const filter of queries) {
      const conditions = ['organization_id = $1'];
      const values: unknown[] = [org.id];
      if (filter.status) conditions.push(`status = $${values.push(filter.status)}`);
      if (filter.search) conditions.push(`(name ILIKE $${values.push(`%${filter.search}%`)} OR description ILIKE $${values.length})`);
      const all: { id: string }[] = await ds.query(`SELECT id FROM workflows WHERE ${conditions.join(' AND ')} ORDER BY created_at DESC, id DESC`, values);
      for (const limit of [4, 20]) {
        expect({ filter, limit, ...(await walk('/v1/workflows', filter, limit)) }).toEqual({ filter, limit, ids: all.map((r) => r.id), totals: [all.length] });
      }
    }
  });

  it('another organization\'s workflow or trigger is 404 and never lists', async () => {
    const res = await read(`/v1/workflows/${otherWf}/executions`);
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 404, code: 'WORKFLOW_NOT_FOUND' });
    const tr = await read(`/v1/triggers/${otherTrigger}/executions`);
    expect({ status: tr.status, code: tr.body.error?.code }).toEqual({ status: 404, code: 'TRIGGER_NOT_FOUND' });
  });
});

describe('history: deep pages skip whole hours through the rollups', () => {
  let t: TestApp;
  let ds: DataSource;
  let org: TestOrganization;
  let wf: string;
  let trigger: string;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS_ENABLED: 'false', APP_ROLE: 'api' });
    ds = t.app.get(DataSource);
    org = await createOrganization(t);
    wf = (await createWorkflow(t, org)).id;
    trigger = await insertTrigger(ds, { organizationId: org.id, workflowId: wf, name: 'Deep trigger' });
    // Deeper than the offset from which the lists skip hours (2000) on both sides of the middle
    // (more than 4000 rows: deep pages walked from the newest end and from the oldest), several
    // rows per hour and many at the same instant (ordered by id across the hour's boundary).
    await seed(ds, org.id, wf, trigger, 5200);
  });
  afterAll(() => t?.close());

  it('pages past offset 2000 equal the recorded rows, unfiltered and by status, for both lists', async () => {
    for (const [path, table, parent, time, id] of [
      [`/v1/workflows/${wf}/executions`, 'workflow_executions', 'workflow_id', 'started_at', wf],
      [`/v1/triggers/${trigger}/executions`, 'trigger_executions', 'trigger_id', 'triggered_at', trigger],
    ]) {
      for (const status of [undefined, 'success', 'failed', 'running']) {
        const where = `${parent} = $1${status ? ' AND status = $2' : ''}`;
        const values = status ? [id, status] : [id];
        const [{ total }] = await ds.query(`SELECT count(*)::int AS total FROM ${table} WHERE ${where}`, values);
        // Around the middle, where the walk switches ends, each side; the last row alone; the last
        // page, partial, and one past the end.
        const middle = Math.floor(total / 2 / 20);
        const cases = [[20, 101], [100, 21], [7, 300], [20, middle], [20, middle + 1], [20, middle + 2], [1, total], [1, Math.ceil(total / 2)],
          [50, Math.ceil(total / 50)], [50, Math.ceil(total / 50) + 1], [3, 1], [13, 2]];
        for (const [limit, page] of cases) {
          const rows: { id: string }[] = await ds.query(
            `SELECT id FROM ${table} WHERE ${where} ORDER BY ${time} DESC, id DESC LIMIT ${limit} OFFSET ${(page - 1) * limit}`,
            values,
          );
          const res = await t.http.get(path).query({ limit, page, ...(status ? { status } : {}) }).set(org.auth('read_only'));
          expect({ path, status, limit, page, ids: res.body.data.map((i: { id: string }) => i.id), total: res.body.pagination.total }).toEqual({
            path, status, limit, page, ids: rows.map((r) => r.id), total,
          });
        }
      }
    }
  });
});

describe('history: workflow search through the trigram indexes', () => {
  let t: TestApp;
  let ds: DataSource;
  let org: TestOrganization;
  let other: TestOrganization;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS_ENABLED: 'false', APP_ROLE: 'api' });
    ds = t.app.get(DataSource);
    org = await createOrganization(t);
    other = await createOrganization(t);
    // 600 workflows with varied names and descriptions (some null, some with % _ \ and accents),
    // and another organization's that match the same terms.
    const insert = (organizationId: string, n: number) =>
      ds.query(
        `INSERT INTO workflows (organization_id, name, description, configuration, created_at)
         SELECT $1, (ARRAY['Order bot', 'Refund desk', 'Café ORDERS', 'Lead 50% off', 'snake_case flow', 'back\\slash'])[1 + i % 6] || ' ' || i,
                CASE WHEN i % 4 = 0 THEN NULL ELSE (ARRAY['handles refunds', 'Bookings and orders', 'support_team', 'ÉTÉ promo'])[1 + i % 4] END,
                '{"nodes":[]}', now() - i * interval '1 second'
           FROM generate_series(1, $2::int) i`,
        [organizationId, n],
      );
    await insert(org.id, 600);
    await insert(other.id, 200);
    await ds.query(`ANALYZE workflows`);
  });
  afterAll(() => t?.close());

  /** The rows a search names, by the same ILIKE without any index (the expressions defeat them). */
  async function expected(term: string, limit: number, page: number) {
    const pattern = `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const where = `organization_id = $1 AND ((name || '') ILIKE $2 OR (description || '') ILIKE $2)`;
    const rows: { id: string }[] = await ds.query(
      `SELECT id FROM workflows WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${(page - 1) * limit}`,
      [org.id, pattern],
    );
    const [{ total }] = await ds.query(`SELECT count(*)::int AS total FROM workflows WHERE ${where}`, [org.id, pattern]);
    return { ids: rows.map((r) => r.id), total };
  }

  it('finds the same rows, in the same order and with the same total, as the unindexed match', async () => {
    const terms = ['order', 'ORDERS', 'refund', 'café', 'été', '50%', '%', '_', 'e_c', '\\', 'o', 'de', 'Lead 50', 'nothing like this', 'k 1'];
    for (const term of terms) {
      for (const [limit, page] of [[20, 1], [7, 3], [100, 2], [50, 40]]) {
        const want = await expected(term, limit, page);
        const res = await t.http.get('/v1/workflows').query({ search: term, limit, page }).set(org.auth('read_only'));
        expect(res.status).toBe(200);
        expect({ term, limit, page, ids: res.body.data.map((w: { id: string }) => w.id), total: res.body.pagination.total }).toEqual({
          term, limit, page, ...want,
        });
      }
    }
  });

  it('combines search with status and channel', async () => {
    const res = await t.http.get('/v1/workflows').query({ search: 'refund', status: 'draft', limit: 5 }).set(org.auth('read_only'));
    const want = await expected('refund', 5, 1);
    expect([res.body.data.map((w: { id: string }) => w.id), res.body.pagination.total]).toEqual([want.ids, want.total]);
    const none = await t.http.get('/v1/workflows').query({ search: 'refund', status: 'active' }).set(org.auth('read_only'));
    expect(none.body.pagination.total).toBe(0);
  });
});

describe('history: workflow list deep pages and remembered totals', () => {
  let t: TestApp;
  let ds: DataSource;
  let org: TestOrganization;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS_ENABLED: 'false', APP_ROLE: 'api' });
    ds = t.app.get(DataSource);
    org = await createOrganization(t);
    // More than twice the offset (1000) from which deep pages are served from the nearer end, three
    // workflows per instant (ordered by id).
    await ds.query(
      `INSERT INTO workflows (organization_id, name, description, status, configuration, created_at)
       SELECT $1, 'Deep ' || i || (ARRAY[' refund', ' order', ''])[1 + i % 3], CASE WHEN i % 5 = 0 THEN 'refund desk' END,
              (ARRAY['draft', 'active', 'inactive'])[1 + i % 3], '{"nodes":[]}', now() - (i / 3) * interval '1 second'
         FROM generate_series(1, 2600) i`,
      [org.id],
    );
  });
  afterAll(() => t?.close());

  const list = (query: Query) => t.http.get('/v1/workflows').query(query).set(org.auth('read_only'));

  async function recorded(where: string, values: unknown[], limit: number, page: number) {
    const rows: { id: string }[] = await ds.query(
      `SELECT id FROM workflows WHERE organization_id = $1${where} ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${(page - 1) * limit}`,
      [org.id, ...values],
    );
    const [{ total }] = await ds.query(`SELECT count(*)::int AS total FROM workflows WHERE organization_id = $1${where}`, [org.id, ...values]);
    return { ids: rows.map((r) => r.id), total };
  }

  it('every deep page, from either end, is exactly what OFFSET gives, and hands out the cursor of its last row', async () => {
    const total = 2600;
    const middle = Math.floor(total / 2 / 20);
    const cases = [[20, 50], [20, 51], [7, 143], [7, 144], [100, 11], [20, middle], [20, middle + 1], [20, middle + 2], [1, 1300], [1, 1301],
      [1, total], [50, 52], [50, 53], [100, 26], [100, 27], [13, 150]];
    for (const [limit, page] of cases) {
      const want = await recorded('', [], limit, page);
      const res = await list({ limit, page });
      expect(res.status).toBe(200);
      const more = page * limit < total;
      expect({ limit, page, ids: res.body.data.map((w: { id: string }) => w.id), pagination: res.body.pagination }).toEqual({
        limit, page, ids: want.ids, pagination: { page, limit, total, pages: Math.ceil(total / limit), next_cursor: more ? expect.any(String) : null },
      });
      if (more) {
        // The cursor continues exactly where the next offset page starts, with the same items.
        const next = await list({ limit, after: res.body.pagination.next_cursor });
        expect(next.body.data.map((w: { id: string }) => w.id)).toEqual((await recorded('', [], limit, page + 1)).ids);
        expect(next.body.data).toEqual((await list({ limit, page: page + 1 })).body.data);
      }
    }
  });

  it('filtered and search items, first counted and remembered, are the same objects the unfiltered list gives', async () => {
    const all = (await list({ limit: 100 })).body.data as { id: string; version: number }[];
    const byId = new Map(all.map((w) => [w.id, w]));
    expect(all[0].version).toEqual(expect.any(Number));
    for (const query of [{ search: 'Deep 7' }, { search: 'deep 1' }, { status: 'draft' }, { status: 'active', search: 'refund' }] as Query[]) {
      for (const round of ['counted', 'remembered']) {
        const items = (await list({ ...query, limit: 100 })).body.data as { id: string }[];
        const known = items.filter((w) => byId.has(w.id));
        expect(known.length, JSON.stringify(query)).toBeGreaterThan(0);
        for (const item of known) expect({ query, round, item }).toEqual({ query, round, item: byId.get(item.id) });
      }
    }
  });

  it('a search and a filter walked by cursor visit every match once, in list order, each page with the exact total', async () => {
    for (const [query, where] of [
      [{ search: 'refund' }, ` AND (name ILIKE '%refund%' OR description ILIKE '%refund%')`],
      [{ status: 'inactive' }, ` AND status = 'inactive'`],
    ] as [Query, string][]) {
      const want = await recorded(where, [], 10_000, 1);
      const seen: string[] = [];
      let after: string | undefined;
      do {
        const res = await list({ ...query, limit: 100, ...(after ? { after } : {}) });
        expect({ query, total: res.body.pagination.total }).toEqual({ query, total: want.total });
        seen.push(...res.body.data.map((w: { id: string }) => w.id));
        after = res.body.pagination.next_cursor ?? undefined;
      } while (after);
      expect(seen).toEqual(want.ids);
    }
  });

  it('a search\'s and a filter\'s total, remembered between requests, follows every change of the matching workflows', async () => {
    const check = async (step: string) => {
      for (const [query, where, values] of [
        [{ search: 'refund' }, ` AND (name ILIKE '%refund%' OR description ILIKE '%refund%')`, []],
        [{ search: 'refund', status: 'draft' }, ` AND (name ILIKE '%refund%' OR description ILIKE '%refund%') AND status = 'draft'`, []],
        [{ status: 'active' }, ` AND status = 'active'`, []],
      ] as [Query, string, unknown[]][]) {
        for (const [limit, page] of [[20, 1], [20, 3], [100, 9]]) {
          const want = await recorded(where, values, limit, page);
          const res = await list({ ...query, limit, page });
          expect({ step, query, page, ids: res.body.data.map((w: { id: string }) => w.id), total: res.body.pagination.total }).toEqual({
            step, query, page, ...want,
          });
        }
      }
    };
    await check('first');
    await check('again (remembered)');
    const created = await createWorkflow(t, org, { name: 'Refund helper' });
    await check('created through the API');
    await t.http.put(`/v1/workflows/${created.id}`).set(org.auth('read_write')).send({ name: 'Plain helper' }).expect(200);
    await check('renamed through the API');
    await t.http.put(`/v1/workflows/${created.id}`).set(org.auth('read_write')).send({ description: 'Refund requests' }).expect(200);
    await check('described through the API');
    await t.http.delete(`/v1/workflows/${created.id}`).set(org.auth()).expect(200);
    await check('deleted through the API');
    await ds.query(`UPDATE workflows SET status = 'active' WHERE organization_id = $1 AND name LIKE 'Deep 1%'`, [org.id]);
    await check('status changed in SQL');
    await ds.query(`UPDATE workflows SET description = 'no match' WHERE organization_id = $1 AND name LIKE 'Deep 2%' AND description IS NOT NULL`, [org.id]);
    await check('descriptions changed in SQL');
    await ds.query(`INSERT INTO workflows (organization_id, name, status, configuration) SELECT $1, 'Refund direct ' || g, 'active', '{"nodes":[]}' FROM generate_series(1, 30) g`, [org.id]);
    await check('inserted in SQL');
    await ds.query(`DELETE FROM workflows WHERE organization_id = $1 AND name LIKE 'Deep 3%'`, [org.id]);
    await check('deleted in SQL');
    // Counters the engine keeps change nothing a filter matches: the remembered total stays valid.
    const [{ workflows_version: before }] = await ds.query(`SELECT workflows_version::text FROM organizations WHERE id = $1`, [org.id]);
    await ds.query(`UPDATE workflows SET execution_count = execution_count + 1 WHERE organization_id = $1`, [org.id]);
    const [{ workflows_version: after }] = await ds.query(`SELECT workflows_version::text FROM organizations WHERE id = $1`, [org.id]);
    expect(after).toBe(before);
    await check('counters moved');
  });
});

/**
 * What the recorded rows say the metrics are: the per-execution SQL the service ran before the
 * rollups (every execution started or fired in the period, its messages by execution id).
 */
async function rawMetrics(ds: DataSource, kind: 'workflow' | 'trigger', id: string, start: Date, end: Date, granularity: string) {
  const e =
    kind === 'workflow'
      ? `SELECT we.id, we.status, we.duration_ms, we.customer_ref AS customer, COALESCE(we.channel, 'unknown') AS channel,
                date_trunc($4, we.started_at AT TIME ZONE 'UTC') AS bucket
           FROM workflow_executions we WHERE we.workflow_id = $1 AND we.started_at BETWEEN $2 AND $3`
      : `SELECT te.id, te.status, te.duration_ms, te.input->>'customer_id' AS customer, COALESCE(te.input->>'channel', 'unknown') AS channel,
                date_trunc($4, te.triggered_at AT TIME ZONE 'UTC') AS bucket
           FROM trigger_executions te WHERE te.trigger_id = $1 AND te.triggered_at BETWEEN $2 AND $3`;
  const rows: {
    all_buckets: number; all_channels: number; bucket: Date | null; channel: string | null; executions: number; successful: number; failed: number;
    success_rate: number | null; average_duration_ms: number | null; unique_customers: number; messages_sent: number; messages_received: number;
  }[] = await ds.query(
    `WITH e AS (${e}), m AS (
       SELECT msg.execution_id, count(*) FILTER (WHERE msg.direction = 'outbound') AS sent, count(*) FILTER (WHERE msg.direction = 'inbound') AS received
         FROM messages msg JOIN e ON e.id = msg.execution_id GROUP BY msg.execution_id
     )
     SELECT GROUPING(e.bucket)::int AS all_buckets, GROUPING(e.channel)::int AS all_channels, e.bucket AT TIME ZONE 'UTC' AS bucket, e.channel,
            count(*)::int AS executions, (count(*) FILTER (WHERE e.status = 'success'))::int AS successful,
            (count(*) FILTER (WHERE e.status = 'failed'))::int AS failed,
            (count(*) FILTER (WHERE e.status = 'success'))::float8 / NULLIF(count(*) FILTER (WHERE e.status IN ('success', 'failed')), 0) AS success_rate,
            round(avg(e.duration_ms) FILTER (WHERE e.status IN ('success', 'failed')))::int AS average_duration_ms,
            count(DISTINCT e.customer)::int AS unique_customers,
            COALESCE(sum(m.sent), 0)::int AS messages_sent, COALESCE(sum(m.received), 0)::int AS messages_received
       FROM e LEFT JOIN m ON m.execution_id = e.id
      GROUP BY GROUPING SETS ((e.bucket), (e.channel), ())
      ORDER BY e.bucket`,
    [id, start, end, granularity],
  );
  const metrics: Record<string, unknown> = {
    total_executions: 0, successful_executions: 0, failed_executions: 0, success_rate: null, average_duration_ms: null, unique_customers: 0,
    channel_breakdown: {} as Record<string, number>,
  };
  if (kind === 'workflow') Object.assign(metrics, { total_messages_sent: 0, total_messages_received: 0 });
  const daily: Record<string, unknown>[] = [];
  for (const r of rows) {
    if (r.all_buckets === 1 && r.all_channels === 1) {
      Object.assign(metrics, {
        total_executions: r.executions, successful_executions: r.successful, failed_executions: r.failed, success_rate: r.success_rate,
        average_duration_ms: r.average_duration_ms, unique_customers: r.unique_customers,
      });
      if (kind === 'workflow') Object.assign(metrics, { total_messages_sent: r.messages_sent, total_messages_received: r.messages_received });
    } else if (r.all_buckets === 1) (metrics.channel_breakdown as Record<string, number>)[r.channel as string] = r.executions;
    else {
      const b: Record<string, unknown> = { date: (r.bucket as Date).toISOString(), executions: r.executions, success_rate: r.success_rate, average_duration_ms: r.average_duration_ms };
      if (kind === 'workflow') Object.assign(b, { messages_sent: r.messages_sent, messages_received: r.messages_received, unique_customers: r.unique_customers });
      daily.push(b);
    }
  }
  return { metrics, daily_metrics: daily };
}

describe('history: metrics from the hourly rollups equal the recorded rows', () => {
  let t: TestApp;
  let ds: DataSource;
  let org: TestOrganization;
  let wf: string;
  let trigger: string;
  let customerId: string;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS_ENABLED: 'false', APP_ROLE: 'api' });
    ds = t.app.get(DataSource);
    org = await createOrganization(t);
    wf = (await createWorkflow(t, org)).id;
    trigger = await insertTrigger(ds, { organizationId: org.id, workflowId: wf, name: 'Metrics trigger' });
    await seed(ds, org.id, wf, trigger, 260);
    [{ id: customerId }] = await ds.query(
      `INSERT INTO customers (organization_id, external_id, first_seen_at, last_seen_at) VALUES ($1, 'metrics-customer', now(), now()) RETURNING id`,
      [org.id],
    );
    // Months of history before: whole days and whole months of executions, some customers
    // returning across days and months (their distinct counts come from day and month sketches).
    await ds.query(
      `WITH g AS (
         SELECT i, uuid_v7() AS id, timestamptz '2025-01-03' + i * interval '9 hours 13 minutes' AS started_at,
                (ARRAY['success', 'failed', 'running'])[1 + i % 3] AS status, (ARRAY['whatsapp', NULL])[1 + i % 2] AS channel,
                CASE WHEN i % 5 = 0 THEN NULL ELSE 'old-customer-' || (i % 97) END AS customer
           FROM generate_series(1, 400) i
       ), e AS (
         INSERT INTO workflow_executions (id, organization_id, workflow_id, workflow_version, trigger_id, customer_ref, channel, status, input, started_at, completed_at, duration_ms)
         SELECT id, $1, $2, 1, $3, customer, channel, status, '{}', started_at,
                CASE WHEN status <> 'running' THEN started_at + i * interval '1 second' END, CASE WHEN status <> 'running' THEN i * 1000 END
           FROM g RETURNING id
       )
       INSERT INTO trigger_executions (organization_id, trigger_id, workflow_id, workflow_execution_id, status, input, triggered_at, completed_at, duration_ms)
       SELECT $1, $3, $2, id, status, jsonb_build_object('customer_id', customer, 'channel', channel), started_at,
              CASE WHEN status <> 'running' THEN started_at + i * interval '1 second' END, CASE WHEN status <> 'running' THEN i * 1000 END
         FROM g`,
      [org.id, wf, trigger],
    );
    // Messages of about half the executions, in both directions, some written hours later.
    await addMessages(0);
  });
  afterAll(() => t?.close());

  async function addMessages(salt: number) {
    await ds.query(
      `INSERT INTO messages (organization_id, customer_id, channel, direction, content, execution_id, created_at)
       SELECT $1, $2, 'whatsapp', CASE WHEN g % 3 = 0 THEN 'inbound' ELSE 'outbound' END, 'm', e.id, e.started_at + g * interval '41 minutes'
         FROM (SELECT id, started_at, row_number() OVER (ORDER BY id) AS rn FROM workflow_executions WHERE workflow_id = $3) e
         CROSS JOIN generate_series(1, 1 + (e.rn::int + $4) % 3) g
        WHERE (e.rn + $4) % 2 = 0`,
      [org.id, customerId, wf, salt],
    );
  }

  const PERIODS: [string, string][] = [
    ['2025-06-01', '2025-06-05'],
    ['2025-06-01T03:17:05.123Z', '2025-06-04T18:42:09.876Z'],
    ['2025-06-02T00:00:00Z', '2025-06-03T00:00:00Z'],
    ['2025-06-02T05:10:00Z', '2025-06-02T05:50:00Z'],
    ['2025-06-02T05:10:00Z', '2025-06-02T06:20:00Z'],
    ['2025-06-02T06:00:00Z', '2025-06-02T06:59:59.999Z'],
    ['2025-05-20', '2025-06-30'],
    ['2025-06-03T12:00:00.001Z', '2025-06-03T12:00:00.001Z'],
    ['2024-06-01', '2025-06-01'],
    ['2025-01-01', '2025-06-30'],
    ['2025-01-15T07:30:00Z', '2025-04-30'],
    ['2025-02-01', '2025-02-28T23:59:59.999Z'],
    ['2025-02-03', '2025-03-09'],
  ];

  async function compareAll() {
    await expectRollupsMatchRows(ds, org.id);
    for (const [start_date, end_date] of PERIODS) {
      for (const granularity of ['hour', 'day', 'week', 'month']) {
        for (const kind of ['workflow', 'trigger'] as const) {
          const path = kind === 'workflow' ? `/v1/workflows/${wf}/metrics` : `/v1/triggers/${trigger}/metrics`;
          const res = await t.http.get(path).query({ start_date, end_date, granularity }).set(org.auth('read_only'));
          expect(res.status).toBe(200);
          const start = new Date(res.body.data.period.start_date);
          const end = new Date(res.body.data.period.end_date);
          const want = await rawMetrics(ds, kind, kind === 'workflow' ? wf : trigger, start, end, granularity);
          expect({ kind, start_date, end_date, granularity, metrics: res.body.data.metrics, daily: res.body.data.daily_metrics }).toEqual({
            kind, start_date, end_date, granularity, metrics: want.metrics, daily: want.daily_metrics,
          });
        }
      }
    }
  }

  it('for periods on and off hour boundaries, at every granularity', async () => {
    await compareAll();
  });

  it('after running executions finish hours after they started, and messages arrive later', async () => {
    await finishRunning(ds, wf, 20);
    await addMessages(1);
    await compareAll();
  });

  it('after executions and messages are deleted', async () => {
    await ds.query(`DELETE FROM messages WHERE execution_id IN (SELECT id FROM workflow_executions WHERE workflow_id = $1 ORDER BY id LIMIT 15)`, [wf]);
    await ds.query(`DELETE FROM workflow_executions WHERE id IN (SELECT id FROM workflow_executions WHERE workflow_id = $1 ORDER BY started_at LIMIT 12)`, [wf]);
    await ds.query(`DELETE FROM trigger_executions WHERE id IN (SELECT id FROM trigger_executions WHERE trigger_id = $1 ORDER BY id LIMIT 12)`, [trigger]);
    await compareAll();
  });

  it('after a customer is added to, moved within and removed from past whole days and months (their sketches folded anew)', async () => {
    await ds.query(
      `INSERT INTO workflow_executions (organization_id, workflow_id, workflow_version, customer_ref, channel, status, input, started_at)
       VALUES ($1, $2, 1, 'late-customer', 'whatsapp', 'running', '{}', '2025-02-10T10:00:00Z')`,
      [org.id, wf],
    );
    await ds.query(`UPDATE workflow_executions SET customer_ref = 'moved-customer' WHERE workflow_id = $1 AND customer_ref = 'old-customer-7'`, [wf]);
    await ds.query(`UPDATE trigger_executions SET input = input || '{"customer_id": "moved-customer"}' WHERE trigger_id = $1 AND input->>'customer_id' = 'old-customer-8'`, [trigger]);
    await ds.query(`DELETE FROM workflow_executions WHERE workflow_id = $1 AND customer_ref = 'old-customer-9'`, [wf]);
    await compareAll();
  });

  it('estimates unique customers of dense sketches within three standard errors; every other figure exact', async () => {
    const dense = (await createWorkflow(t, org)).id;
    const denseTrigger = await insertTrigger(ds, { organizationId: org.id, workflowId: dense, name: 'Dense trigger' });
    // 12,000 executions over three days of March, 9,000 customers: every day sketch dense.
    await ds.query(
      `WITH g AS (
         SELECT i, uuid_v7() AS id, timestamptz '2025-03-10' + i * interval '21 seconds' AS started_at, 'dense-' || (i * 7 % 9000) AS customer
           FROM generate_series(1, 12000) i
       ), e AS (
         INSERT INTO workflow_executions (id, organization_id, workflow_id, workflow_version, customer_ref, channel, status, input, started_at, completed_at, duration_ms)
         SELECT id, $1, $2, 1, customer, 'whatsapp', 'success', '{}', started_at, started_at + interval '1 second', 1000 FROM g RETURNING id
       )
       INSERT INTO trigger_executions (organization_id, trigger_id, workflow_id, workflow_execution_id, status, input, triggered_at, completed_at, duration_ms)
       SELECT $1, $3, $2, id, 'success', jsonb_build_object('customer_id', customer, 'channel', 'whatsapp'), started_at, started_at + interval '1 second', 1000
         FROM g`,
      [org.id, dense, denseTrigger],
    );
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM workflow_customer_sketches WHERE workflow_id = $1`, [dense]);
    expect(n).toBe(0);
    for (const [start_date, end_date, granularity] of [['2025-03-01', '2025-03-31', 'day'], ['2025-01-01', '2025-06-30', 'month'], ['2025-03-11', '2025-03-11', 'hour']]) {
      for (const kind of ['workflow', 'trigger'] as const) {
        const path = kind === 'workflow' ? `/v1/workflows/${dense}/metrics` : `/v1/triggers/${denseTrigger}/metrics`;
        const res = await t.http.get(path).query({ start_date, end_date, granularity }).set(org.auth('read_only'));
        expect(res.status).toBe(200);
        const want = await rawMetrics(ds, kind, kind === 'workflow' ? dense : denseTrigger, new Date(res.body.data.period.start_date), new Date(res.body.data.period.end_date), granularity);
        const { unique_customers: got, ...rest } = res.body.data.metrics;
        const { unique_customers: exact, ...wantRest } = want.metrics;
        expect(rest).toEqual(wantRest);
        expect(exact).toBeGreaterThan(2048);
        expect(Math.abs(got - (exact as number)) / (exact as number)).toBeLessThan(3 * 0.0082);
        // Per bucket too (workflow buckets carry unique customers).
        expect(res.body.data.daily_metrics.length).toBe(want.daily_metrics.length);
        res.body.data.daily_metrics.forEach((b: Record<string, number>, i: number) => {
          const w = want.daily_metrics[i] as Record<string, number>;
          expect({ ...b, unique_customers: 0 }).toEqual({ ...w, unique_customers: 0 });
          if (kind === 'workflow') expect(Math.abs(b.unique_customers - w.unique_customers)).toBeLessThanOrEqual(Math.max(0, 3 * 0.0082 * w.unique_customers));
        });
      }
    }
    // The days and the month read were folded once and stored, dense.
    const stored = await ds.query(`SELECT span, length(sketch) AS bytes FROM workflow_customer_sketches WHERE workflow_id = $1 ORDER BY span, start`, [dense]);
    expect(stored).toEqual([
      { span: 'day', bytes: 16385 }, { span: 'day', bytes: 16385 }, { span: 'day', bytes: 16385 }, { span: 'month', bytes: 16385 },
    ]);
  });

  it('the workers keep every closed day and month of the last year sketched, so that a year read folds none; a span changed later is folded again', async () => {
    const ahead = (await createWorkflow(t, org)).id;
    // The two UTC months before this one: 40 executions on the 10th of each, 30 customers a month, 10 in both.
    const now = new Date();
    const months = [2, 1].map((back) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1)));
    const insert = (count: number, customer: string, workflowId = ahead) =>
      ds.query(
        `INSERT INTO workflow_executions (id, organization_id, workflow_id, workflow_version, customer_ref, channel, status, input, started_at, completed_at, duration_ms)
         SELECT uuid_v7(), $1, $2, 1, ${customer}, 'whatsapp', 'success', '{}', m.start + interval '9 days' + i * interval '1 minute',
                m.start + interval '9 days' + i * interval '1 minute' + interval '1 second', 1000
           FROM unnest($3::timestamptz[]) WITH ORDINALITY AS m(start, k), generate_series(1, $4::int) i`,
        [org.id, workflowId, months.slice(0, count === 1 ? 1 : 2), count],
      );
    await insert(40, `'ahead-' || (m.k * 20 + i % 30)`);
    // Another workflow with customers on the same days, so that the passes page over two parents.
    const beside = (await createWorkflow(t, org)).id;
    await insert(40, `'beside-' || (i % 7)`, beside);
    const sketches = () =>
      ds.query(`SELECT span, start, customers, xmin::text AS version FROM workflow_customer_sketches WHERE workflow_id = $1 ORDER BY span, start`, [ahead]) as Promise<
        { span: string; start: Date; customers: number; version: string }[]
      >;
    expect(await sketches()).toEqual([]);
    // The workers' loop (this app serves the API only), on the same database.
    const loop = new SketchLoop(ds, t.app.get(RollupFolder));
    const first = await loop.pass(now, 366);
    expect(first.ran).toBe(true);
    expect(first.folded.day).toBeGreaterThanOrEqual(2);
    expect(first.folded.month).toBeGreaterThanOrEqual(2);
    const tenth = months.map((m) => new Date(m.getTime() + 9 * 86_400_000));
    const stored = await sketches();
    expect(stored.map((s) => [s.span, s.start.getTime(), s.customers])).toEqual([
      ...tenth.map((d) => ['day', d.getTime(), 30]),
      ...months.map((m) => ['month', m.getTime(), 30]),
    ]);

    // A pass finds them current and folds none again; a year's read, by day and by month, merges them and folds none either.
    await loop.pass(now, 366);
    for (const granularity of ['day', 'month']) {
      const year = await t.http.get(`/v1/workflows/${ahead}/metrics`).query({ start_date: months[0].toISOString(), granularity }).set(org.auth('read_only'));
      expect(year.status).toBe(200);
      expect(year.body.data.metrics.unique_customers).toBe(50);
    }
    expect(await sketches()).toEqual(stored);

    // A late execution of a new customer on the older month's 10th: its day's and month's checksums move, and the next pass folds both again.
    await insert(1, `'ahead-late'`);
    await loop.pass(now, 366);
    const late = (await sketches()).map((s) => s.customers);
    expect(late).toEqual([31, 30, 31, 30]);

    // Page by page (one span a page) over both workflows, from nothing: the same sketches.
    const besideSketches = () => ds.query(`SELECT span, start, customers FROM workflow_customer_sketches WHERE workflow_id = $1 ORDER BY span, start`, [beside]);
    const besideStored = await besideSketches();
    expect(besideStored.map((r: { customers: number }) => r.customers)).toEqual([7, 7, 7, 7]);
    await ds.query(`DELETE FROM workflow_customer_sketches WHERE workflow_id = ANY($1::uuid[])`, [[ahead, beside]]);
    const query = (sql: string, values: unknown[]) => ds.query(sql, values) as Promise<Record<string, unknown>[]>;
    const from = months[0];
    const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    expect(await foldSpansOfAll(query, WORKFLOW_SKETCHES, 'day', from, to, 1)).toBeGreaterThanOrEqual(4);
    expect(await foldSpansOfAll(query, WORKFLOW_SKETCHES, 'month', from, to, 1)).toBeGreaterThanOrEqual(4);
    expect((await sketches()).map((s) => s.customers)).toEqual(late);
    expect(await besideSketches()).toEqual(besideStored);
  });

  it('reads whole hours from the rollup rows, which hold every execution of the workflow', async () => {
    const [rollup] = await ds.query(`SELECT sum(executions)::int AS n FROM workflow_execution_hours WHERE workflow_id = $1`, [wf]);
    const [rows] = await ds.query(`SELECT count(*)::int AS n FROM workflow_executions WHERE workflow_id = $1`, [wf]);
    expect(rollup.n).toBe(rows.n);
    // A period of whole hours is answered by the rollups alone: changing an execution's row
    // behind the triggers' back shows in the raw figures only, not in the rollup-backed ones.
    await ds.query(`ALTER TABLE workflow_executions DISABLE TRIGGER workflow_executions_rollup_update`);
    try {
      await ds.query(`UPDATE workflow_executions SET status = 'failed' WHERE workflow_id = $1 AND status = 'success' AND started_at < '2025-06-03'`, [wf]);
      const res = await t.http.get(`/v1/workflows/${wf}/metrics`).query({ start_date: '2025-06-01', end_date: '2025-06-02T23:59:59.999Z' }).set(org.auth());
      const want = await rawMetrics(ds, 'workflow', wf, new Date('2025-06-01'), new Date('2025-06-02T23:59:59.999Z'), 'day');
      expect(res.body.data.metrics.failed_executions).toBeLessThan(want.metrics.failed_executions as number);
    } finally {
      await ds.query(`ALTER TABLE workflow_executions ENABLE TRIGGER workflow_executions_rollup_update`);
    }
  });
});
