import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseIsoDate } from '../../src/common/date-range.js';
import { insertTrigger } from '../factories/executions.js';
import { createWorkflow } from '../factories/workflows.js';
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
            pagination: { page, limit, total: want.total, pages },
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

  it('another organization\'s workflow or trigger is 404 and never lists', async () => {
    const res = await read(`/v1/workflows/${otherWf}/executions`);
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 404, code: 'WORKFLOW_NOT_FOUND' });
    const tr = await read(`/v1/triggers/${otherTrigger}/executions`);
    expect({ status: tr.status, code: tr.body.error?.code }).toEqual({ status: 404, code: 'TRIGGER_NOT_FOUND' });
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
