import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MIGRATIONS } from '../../migrations/index.js';
import { dataSourceOptions } from '../../src/database/data-source.options.js';
import { ExecutionRetention, TRIM_BATCH, type RetentionReport } from '../../src/executions/retention/execution-retention.service.js';
import { insertTrigger } from '../factories/executions.js';
import { createWorkflow, SURVEY_FORM } from '../factories/workflows.js';
import { foldRollups } from '../utils/rollups.js';
import { requireBuiltCli, runCli } from '../utils/cli.js';
import { createOrganization, startTestApp, testConfig, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { TEST_POSTGRES_URL } from '../utils/test-env.js';

const DAY = 86_400_000;

const cli = (...args: string[]) => runCli(testConfig(), args);

/** A UUIDv7 of the time `at` (SQL expression), made unique by `n`: the keys the engine writes, back-dated. */
const V7_AT = (at: string, n: string) => `(substr(uuid_v7_floor(${at})::text, 1, 14) || '7000-8000-' || lpad(to_hex(${n}), 12, '0'))::uuid`;

/**
 * A year of firings of one trigger (two a day, a customer of twelve, finished), plus one still running
 * 200 days ago and one 40 days ago, keyed with the UUIDv7 of their time as the engine writes them.
 */
async function seedYear(ds: DataSource, organizationId: string, workflowId: string, triggerId: string, now: number, keyOffset = 0): Promise<void> {
  await ds.query(
    `INSERT INTO trigger_executions (id, organization_id, trigger_id, workflow_id, status, input, triggered_at, completed_at, duration_ms)
     SELECT ${V7_AT('at', 'i + $5')}, $1, $3, $2, CASE WHEN i IN (400, 80) THEN 'running' WHEN i % 5 = 0 THEN 'failed' ELSE 'success' END,
            jsonb_build_object('customer_id', 'customer-' || (i % 12), 'channel', (ARRAY['whatsapp', 'instagram'])[1 + i % 2]), at,
            CASE WHEN i NOT IN (400, 80) THEN at + interval '3 seconds' END, CASE WHEN i NOT IN (400, 80) THEN 3000 + i END
       FROM generate_series(1, 730) i, LATERAL (SELECT to_timestamp($4::float8 / 1000) - i * interval '12 hours' - interval '7 minutes' AS at) x`,
    [organizationId, workflowId, triggerId, now, keyOffset],
  );
  await ds.query(`UPDATE triggers SET execution_count = (SELECT count(*) FROM trigger_executions WHERE trigger_id = $1) WHERE id = $1`, [triggerId]);
}

/**
 * A year of executions of the survey workflow (two a day, a customer of twelve), each with its welcome
 * step and, once finished, its survey step with answers; one still waiting 200 days ago and one running
 * 40 days ago (their welcome step only), one in five failed. Keyed with the UUIDv7 of their start.
 */
async function seedExecutions(ds: DataSource, organizationId: string, workflowId: string, now: number): Promise<void> {
  await ds.query(
    `INSERT INTO workflow_executions (id, organization_id, workflow_id, workflow_version, customer_ref, channel, status, waiting, input, state, error,
                                      started_at, completed_at, duration_ms, created_at, updated_at)
     SELECT ${V7_AT('at', 'i + 50000')}, $1, $2, 1, CASE WHEN i > 100 AND i % 3 = 0 THEN 'customer-' || (12 + i % 7) ELSE 'customer-' || (i % 12) END,
            (ARRAY['whatsapp', 'instagram'])[1 + i % 2],
            CASE WHEN i IN (400, 80) THEN 'running' WHEN i % 5 = 0 THEN 'failed' ELSE 'success' END, i = 400, '{}', '{}',
            CASE WHEN i % 5 = 0 AND i NOT IN (400, 80) THEN jsonb_build_object('code', 'NODE_FAILED', 'message', 'x') END,
            at, CASE WHEN i NOT IN (400, 80) THEN at + interval '4 seconds' END, CASE WHEN i NOT IN (400, 80) THEN 4000 + i END, at, now()
       FROM generate_series(1, 730) i, LATERAL (SELECT to_timestamp($3::float8 / 1000) - i * interval '12 hours' - interval '11 minutes' AS at) x`,
    [organizationId, workflowId, now],
  );
  await ds.query(
    `INSERT INTO execution_steps (execution_id, node_id, type, status, started_at, completed_at, duration_ms, output)
     SELECT id, 'welcome', 'message', 'completed', started_at, started_at + interval '1 second', 1000, '{}' FROM workflow_executions WHERE workflow_id = $1`,
    [workflowId],
  );
  await ds.query(
    `INSERT INTO execution_steps (execution_id, node_id, type, status, started_at, completed_at, duration_ms, output)
     SELECT id, 'survey', 'form', CASE WHEN status = 'failed' THEN 'failed' ELSE 'completed' END, started_at + interval '1 second', started_at + interval '3 seconds', 2000,
            jsonb_build_object('answers', jsonb_build_object('score', 1 + duration_ms % 5, 'recommend', duration_ms % 11))
       FROM workflow_executions WHERE workflow_id = $1 AND status <> 'running'`,
    [workflowId],
  );
  await ds.query(
    `UPDATE workflows w SET execution_count = c.n, success_count = c.ok, failure_count = c.failed
       FROM (SELECT count(*) AS n, count(*) FILTER (WHERE status = 'success') AS ok, count(*) FILTER (WHERE status = 'failed') AS failed
               FROM workflow_executions WHERE workflow_id = $1) c
      WHERE w.id = $1`,
    [workflowId],
  );
}

/**
 * The conversation of each of those executions: the customer's message at its start and the reply 2 s
 * later, through a channel account (provider ids recorded as the inbound statement and the sender do),
 * the reply's delivery delivered. Keyed with the UUIDv7 of their time.
 */
async function seedMessages(ds: DataSource, organizationId: string, workflowId: string, accountId: string): Promise<void> {
  await ds.query(
    `INSERT INTO customers (organization_id, external_id, channel, first_seen_at, last_seen_at, created_at, updated_at)
     SELECT $1::uuid, 'customer-' || g, 'whatsapp', now() - interval '400 days', now() - interval '400 days', now() - interval '400 days', now() - interval '400 days'
       FROM generate_series(0, 18) g
     ON CONFLICT DO NOTHING`,
    [organizationId],
  );
  await ds.query(
    `INSERT INTO messages (id, organization_id, customer_id, channel, direction, content, metadata, execution_id, node_id, created_at, channel_account_id, provider_message_id)
     SELECT ${V7_AT('e.started_at + d.off', 'e.r * 2 + d.n + 90000')}, e.organization_id, c.id, e.channel, d.direction, 'hello', '{}', e.id,
            CASE WHEN d.direction = 'outbound' THEN 'welcome' END, e.started_at + d.off, $3::uuid, 'wamid.' || (e.r * 2 + d.n)
       FROM (SELECT x.*, row_number() OVER (ORDER BY x.id) AS r FROM workflow_executions x WHERE x.organization_id = $1 AND x.workflow_id = $2) e
       JOIN customers c ON c.organization_id = e.organization_id AND c.external_id = e.customer_ref
      CROSS JOIN (VALUES ('inbound', interval '0', 0), ('outbound', interval '2 seconds', 1)) d(direction, off, n)`,
    [organizationId, workflowId, accountId],
  );
  await ds.query(
    `INSERT INTO message_provider_ids (channel_account_id, provider_message_id, message_id)
     SELECT channel_account_id, provider_message_id, id FROM messages WHERE channel_account_id = $1 ORDER BY id`,
    [accountId],
  );
  await ds.query(
    `INSERT INTO message_deliveries (message_id, organization_id, channel_account_id, customer_id, execution_id, workflow_id, channel, started_at, kind, queued_at)
     SELECT m.id, m.organization_id, m.channel_account_id, m.customer_id, m.execution_id, e.workflow_id, m.channel, e.started_at, 'text', m.created_at
       FROM messages m JOIN workflow_executions e ON e.id = m.execution_id WHERE m.channel_account_id = $1 AND m.direction = 'outbound'`,
    [accountId],
  );
  await ds.query(
    `UPDATE message_deliveries SET status = 'delivered', attempts = 1, sent_at = queued_at + interval '1 second', delivered_at = queued_at + interval '3 seconds'
      WHERE channel_account_id = $1`,
    [accountId],
  );
}

/**
 * A year of webhook deliveries (two a day), each with two attempts an hour and two after it (so an attempt
 * of a month's last delivery is keyed in the next month); one still pending 150 days ago. Keyed with the
 * UUIDv7 of their time. The webhook is inactive: nothing here sends.
 */
async function seedWebhookDeliveries(ds: DataSource, organizationId: string, now: number): Promise<string> {
  const [{ id: webhookId }] = await ds.query(
    `INSERT INTO webhooks (organization_id, name, url, events, secret_encrypted, active) VALUES ($1, 'retention', 'https://example.com/hook', '{workflow.completed}', 'x', false)
     RETURNING id`,
    [organizationId],
  );
  await ds.query(
    `INSERT INTO webhook_deliveries (id, organization_id, webhook_id, event_id, event_type, event_timestamp, data, status, attempts, created_at, completed_at)
     SELECT ${V7_AT('at', 'i + 70000')}, $1, $2, gen_random_uuid(), 'workflow.completed', at, '{}', CASE WHEN i = 300 THEN 'pending' ELSE 'delivered' END,
            2, at, CASE WHEN i <> 300 THEN at + interval '2 hours' END
       FROM generate_series(1, 730) i, LATERAL (SELECT to_timestamp($3::float8 / 1000) - i * interval '12 hours' - interval '13 minutes' AS at) x`,
    [organizationId, webhookId, now],
  );
  await ds.query(
    `INSERT INTO webhook_delivery_attempts (id, organization_id, webhook_id, delivery_id, event_type, attempt, status, response_code, delivered_at)
     SELECT ${V7_AT("d.created_at + n * interval '1 hour'", '(row_number() OVER ())::int * 2 + n + 80000')}, d.organization_id, d.webhook_id, d.id, d.event_type, n,
            CASE WHEN n = 1 THEN 'retrying' ELSE 'delivered' END, CASE WHEN n = 1 THEN 500 ELSE 200 END, d.created_at + n * interval '1 hour'
       FROM webhook_deliveries d, generate_series(1, 2) n WHERE d.webhook_id = $1`,
    [webhookId],
  );
  return webhookId;
}

const partitions = async (ds: DataSource, table = 'trigger_executions'): Promise<string[]> =>
  (await ds.query(`SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass ORDER BY 1`, [table])).map(
    (r: { relname: string }) => r.relname,
  );
const monthName = (ms: number, table = 'trigger_executions') => `${table}_p${new Date(ms).toISOString().slice(0, 7).replace('-', '')}`;
const EXECUTION_TABLES = ['workflow_executions', 'execution_steps', 'execution_answers'];
const MESSAGE_TABLES = ['messages', 'message_deliveries'];
const WEBHOOK_TABLES = ['webhook_deliveries', 'webhook_delivery_attempts'];

describe('execution data retention (executions, steps, answers and firings by monthly partitions)', { timeout: 180_000 }, () => {
  let t: TestApp;
  let ds: DataSource;
  let org: TestOrganization;
  let wf: string;
  let survey: string;
  let trigger: string;
  /** A failed execution 300 days ago and its retry (made through the API). */
  let retried: { original: string; retry: string };
  /** The channel account of the seeded conversations. */
  let account: string;
  /** The webhook of the seeded deliveries. */
  let webhook: string;
  const now = Date.now();
  const retention = (value: string) => new ExecutionRetention(ds, testConfig({ EXECUTION_RETENTION: value }));
  /**
   * Passes until one leaves nothing to trim (as the service schedules them, TRIM_PAUSE_MS apart), with the
   * given trim budget; their reports, and what they did together.
   */
  const pruneAll = async (value: string, budgetMs?: number) => {
    const passes: RetentionReport[] = [];
    do passes.push(await retention(value).prune(now, budgetMs));
    while (passes.at(-1)!.unfinished && passes.length < 1_000);
    return { passes, dropped: passes.flatMap((p) => p.dropped), trimmed: passes.reduce((n, p) => n + p.trimmed, 0), unfinished: passes.at(-1)!.unfinished };
  };

  /** Every analytics figure of the trigger and its workflow over the seeded year, as the API answers them. */
  const analytics = async () => {
    const start = new Date(now - 380 * DAY).toISOString().slice(0, 10);
    const end = new Date(now).toISOString().slice(0, 10);
    const figures: Record<string, unknown> = {};
    for (const granularity of ['day', 'week', 'month']) {
      for (const path of [`/v1/triggers/${trigger}/metrics`, `/v1/workflows/${wf}/metrics`]) {
        const res = await t.http.get(path).query({ start_date: start, end_date: end, granularity }).set(org.auth('read_only'));
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        figures[`${path} ${granularity}`] = res.body.data;
      }
    }
    figures.trigger = (await t.http.get(`/v1/triggers/${trigger}`).set(org.auth('read_only')).expect(200)).body.data.execution_count;
    // The analytics API over the survey workflow's year (at most 366 days a period). Not `group_by`: its
    // breakdowns by channel, trigger and status are computed from the executions' rows (docs/DECISIONS.md).
    const year = { start_date: new Date(now - 365 * DAY).toISOString().slice(0, 10), end_date: end };
    const reads: [string, Record<string, unknown>][] = [
      ['/v1/analytics/workflows', year],
      [`/v1/analytics/workflows/${survey}`, { ...year, granularity: 'month' }],
      [`/v1/analytics/workflows/${survey}`, { ...year, granularity: 'week' }],
      [`/v1/analytics/workflows/${survey}/performance`, { ...year, include_nodes: true, include_channels: true }],
      ['/v1/analytics/customers/engagement', year],
      ['/v1/analytics/customers/journey', { ...year, include_dropoffs: true }],
      [`/v1/workflows/${survey}/metrics`, { ...year, granularity: 'month' }],
      [
        `/v1/analytics/workflows/${survey}`,
        { ...year, metrics: 'total_messages_sent,total_messages_received,messages_delivered,messages_read,delivery_rate,read_rate,unique_customers' },
      ],
    ];
    for (const [path, query] of reads) {
      const res = await t.http.get(path).query(query).set(org.auth('read_only'));
      expect(res.status, `${path} ${JSON.stringify(res.body)}`).toBe(200);
      figures[`${path} ${JSON.stringify(query)}`] = res.body.data;
    }
    figures.survey = (await t.http.get(`/v1/workflows/${survey}`).set(org.auth('read_only')).expect(200)).body.data.execution_count ?? null;
    return figures;
  };

  beforeAll(async () => {
    requireBuiltCli();
    t = await startTestApp({ RATE_LIMITS_ENABLED: 'false', APP_ROLE: 'api' });
    ds = t.app.get(DataSource);
    org = await createOrganization(t);
    wf = (await createWorkflow(t, org)).id;
    trigger = await insertTrigger(ds, { organizationId: org.id, workflowId: wf, name: 'Retention trigger' });
    // A database in service for a year: the retention loop created each month's partition ahead of it.
    for (const table of ['trigger_executions', ...EXECUTION_TABLES, ...MESSAGE_TABLES, ...WEBHOOK_TABLES]) {
      await ds.query(`SELECT retention_partitions_ensure($1, now() - interval '13 months', now())`, [table]);
    }
    await seedYear(ds, org.id, wf, trigger, now);
    survey = (
      await createWorkflow(t, org, {
        configuration: { trigger: { type: 'message', keywords: ['rate'] }, nodes: [{ id: 'welcome', type: 'message', content: 'Hi', next: 'survey' }, SURVEY_FORM] },
      })
    ).id;
    await seedExecutions(ds, org.id, survey, now);
    account = randomUUID();
    await seedMessages(ds, org.id, survey, account);
    webhook = await seedWebhookDeliveries(ds, org.id, now);
    // A failed execution 300 days ago, retried through the API (the retry is now's, running: no worker here).
    const [{ original }] = await ds.query(
      `SELECT id AS original FROM workflow_executions WHERE workflow_id = $1 AND status = 'failed' AND started_at < now() - interval '290 days' ORDER BY id DESC LIMIT 1`,
      [survey],
    );
    const res = await t.http.post(`/v1/workflows/${survey}/executions/${original}/retry`).set(org.auth('read_write'));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    retried = { original, retry: res.body.data.id };
    expect(res.body.data.retry_of).toBe(original);
    await foldRollups(ds);
  });
  afterAll(() => t?.close());

  it('with retention off (the default) keeps everything and only creates the months ahead', async () => {
    const before = await partitions(ds);
    const report = await retention('off').prune(now);
    expect(report).toMatchObject({ ran: true, dropped: [], trimmed: 0 });
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM trigger_executions`);
    expect(n).toBe(730);
    const after = await partitions(ds);
    expect(after).toEqual(expect.arrayContaining(before));
    expect(after).toContain(monthName(Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth() + 2, 1)));
    // Every month of the firings, those made ahead too, has the partial index of running firings the drop's check reads.
    const [{ partitions: firingMonths, indexed }] = await ds.query(
      `SELECT count(*)::int AS partitions, count(x.indexrelid)::int AS indexed
         FROM pg_inherits i
         LEFT JOIN pg_index x ON x.indrelid = i.inhrelid AND pg_get_expr(x.indpred, x.indrelid) LIKE '%running%'
        WHERE i.inhparent = 'trigger_executions'::regclass`,
    );
    expect(firingMonths).toBeGreaterThan(12);
    expect(indexed).toBe(firingMonths);
  });

  it('prunes a seeded year to 30 days: whole months dropped, the edge trimmed, running firings kept, analytics unchanged', async () => {
    const figures = await analytics();
    // The year's conversations are in the figures (so that their removal would show).
    const messageFigures = Object.entries(figures).find(([key]) => key.includes('total_messages_sent'))?.[1] as { metrics: Record<string, number> };
    // All the replies of the period's days: 730, or 729 when the oldest fell on the day before (the test run in the
    // first minutes of a UTC day).
    const [{ sent }] = await ds.query(
      `SELECT count(*)::int AS sent FROM messages WHERE organization_id = $1 AND direction = 'outbound' AND created_at >= $2::date AND created_at < $3::date + 1`,
      [org.id, new Date(now - 365 * DAY).toISOString().slice(0, 10), new Date(now).toISOString().slice(0, 10)],
    );
    expect(sent).toBeGreaterThanOrEqual(729);
    expect(messageFigures.metrics.total_messages_sent).toBe(sent);
    expect(messageFigures.metrics.messages_delivered).toBeGreaterThan(700);
    const cutoff = now - 30 * DAY;
    const [{ recent }] = await ds.query(`SELECT count(*)::int AS recent FROM trigger_executions WHERE id >= uuid_v7_floor(to_timestamp($1::float8 / 1000))`, [cutoff]);
    const [{ executionsRecent, stepsRecent, answersRecent }] = await ds.query(
      `SELECT (SELECT count(*) FROM workflow_executions WHERE workflow_id = $2 AND id >= uuid_v7_floor(to_timestamp($1::float8 / 1000)))::int AS "executionsRecent",
              (SELECT count(*) FROM execution_steps WHERE execution_id >= uuid_v7_floor(to_timestamp($1::float8 / 1000)))::int AS "stepsRecent",
              (SELECT count(*) FROM execution_answers WHERE execution_id >= uuid_v7_floor(to_timestamp($1::float8 / 1000)))::int AS "answersRecent"`,
      [cutoff, survey],
    );
    const messageCounts = async () =>
      (
        await ds.query(
          `SELECT (SELECT count(*) FROM messages WHERE id >= uuid_v7_floor(to_timestamp($1::float8 / 1000)))::int AS messages,
                  (SELECT count(*) FROM message_deliveries WHERE message_id >= uuid_v7_floor(to_timestamp($1::float8 / 1000)))::int AS deliveries,
                  (SELECT count(*) FROM message_provider_ids WHERE message_id >= uuid_v7_floor(to_timestamp($1::float8 / 1000)))::int AS "providerIds"`,
          [cutoff],
        )
      )[0];
    const messagesRecent = await messageCounts();
    const webhookCounts = async () =>
      (
        await ds.query(
          `SELECT (SELECT count(*) FROM webhook_deliveries WHERE id >= uuid_v7_floor(to_timestamp($1::float8 / 1000)))::int AS deliveries,
                  (SELECT count(*) FROM webhook_delivery_attempts WHERE delivery_id >= uuid_v7_floor(to_timestamp($1::float8 / 1000)))::int AS attempts`,
          [cutoff],
        )
      )[0];
    const webhooksRecent = await webhookCounts();
    expect(webhooksRecent.attempts).toBe(webhooksRecent.deliveries * 2);
    const [{ deliveryChangesBefore }] = await ds.query(`SELECT count(*)::int AS "deliveryChangesBefore" FROM message_delivery_changes`);
    expect(messagesRecent.messages).toBeGreaterThan(0);
    // The retried original is a year old: a second retry is refused while it is there.
    expect((await t.http.post(`/v1/workflows/${survey}/executions/${retried.original}/retry`).set(org.auth('read_write'))).body.error?.code).toBe('EXECUTION_NOT_RETRYABLE');

    // No trim budget: each pass makes one trim statement (at most TRIM_BATCH rows), and says when rows are left.
    const report = await pruneAll('30d', 0);
    expect(report.unfinished).toBe(false);
    expect(report.passes.length).toBeGreaterThan(1);
    expect(report.passes.slice(0, -1).every((p) => p.unfinished)).toBe(true);
    expect(Math.max(...report.passes.map((p) => p.trimmed))).toBeLessThanOrEqual(TRIM_BATCH);
    // The month drops are not budgeted: every one is made by the first pass.
    expect(report.passes.slice(1).flatMap((p) => p.dropped)).toEqual([]);

    // Months wholly before the cutoff are gone, but for those holding a firing or execution still running
    // (200 and 40 days ago); a month of executions goes with its steps and answers.
    for (const table of ['trigger_executions', ...EXECUTION_TABLES, ...MESSAGE_TABLES, ...WEBHOOK_TABLES]) {
      const holder = table === 'trigger_executions' ? table : MESSAGE_TABLES.includes(table) ? 'messages' : WEBHOOK_TABLES.includes(table) ? 'webhook_deliveries' : 'workflow_executions';
      const runningMonths = WEBHOOK_TABLES.includes(table)
        ? [monthName(now - 150 * DAY - 13 * 60_000, holder)]
        : [monthName(now - 200 * DAY - 11 * 60_000, holder), monthName(now - 40 * DAY - 11 * 60_000, holder), monthName(now - 200 * DAY - 7 * 60_000, holder), monthName(now - 40 * DAY - 7 * 60_000, holder)];
      const left = await partitions(ds, table);
      for (let m = 1; m <= 12; m++) {
        const monthStart = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth() - m, 1);
        const monthEnd = Date.UTC(new Date(monthStart).getUTCFullYear(), new Date(monthStart).getUTCMonth() + 1, 1);
        const name = monthName(monthStart, table);
        if (monthEnd <= cutoff && !runningMonths.includes(monthName(monthStart, holder))) {
          expect(left, name).not.toContain(name);
          expect(report.dropped).toContain(name);
        }
      }
      expect(left).toContain(monthName(WEBHOOK_TABLES.includes(table) ? now - 150 * DAY - 13 * 60_000 : now - 200 * DAY - 11 * 60_000, table));
      expect(left).toContain(monthName(cutoff, table));
    }
    expect(report.dropped.length).toBeGreaterThanOrEqual(80);
    expect(report.trimmed).toBeGreaterThan(0);
    const edgeMonth = monthName(cutoff);

    // Executions older than 30 days: only the waiting and the running one, with their steps; no step or answer is left without its execution.
    const oldExecutions = await ds.query(
      `SELECT status, waiting FROM workflow_executions WHERE id < uuid_v7_floor(to_timestamp($1::float8 / 1000)) ORDER BY id`,
      [cutoff],
    );
    expect(oldExecutions).toEqual([
      { status: 'running', waiting: true },
      { status: 'running', waiting: false },
    ]);
    const [{ orphanSteps, orphanAnswers, oldSteps }] = await ds.query(
      `SELECT (SELECT count(*) FROM execution_steps s WHERE NOT EXISTS (SELECT 1 FROM workflow_executions e WHERE e.id = s.execution_id))::int AS "orphanSteps",
              (SELECT count(*) FROM execution_answers a WHERE NOT EXISTS (SELECT 1 FROM workflow_executions e WHERE e.id = a.execution_id))::int AS "orphanAnswers",
              (SELECT count(*) FROM execution_steps WHERE execution_id < uuid_v7_floor(to_timestamp($1::float8 / 1000)))::int AS "oldSteps"`,
      [cutoff],
    );
    expect({ orphanSteps, orphanAnswers, oldSteps }).toEqual({ orphanSteps: 0, orphanAnswers: 0, oldSteps: 2 });
    const [{ recentExecutions, recentSteps, recentAnswers }] = await ds.query(
      `SELECT (SELECT count(*) FROM workflow_executions WHERE workflow_id = $2 AND id >= uuid_v7_floor(to_timestamp($1::float8 / 1000)))::int AS "recentExecutions",
              (SELECT count(*) FROM execution_steps WHERE execution_id >= uuid_v7_floor(to_timestamp($1::float8 / 1000)))::int AS "recentSteps",
              (SELECT count(*) FROM execution_answers WHERE execution_id >= uuid_v7_floor(to_timestamp($1::float8 / 1000)))::int AS "recentAnswers"`,
      [cutoff, survey],
    );
    expect(recentExecutions).toBe(executionsRecent);
    expect(recentSteps).toBe(stepsRecent);
    expect(recentAnswers).toBe(answersRecent);
    expect(recentAnswers).toBeGreaterThan(0);

    // Messages older than 30 days: only the conversations of the waiting and the running execution, with their
    // deliveries and provider ids; nothing points at a removed message.
    const oldMessages = await ds.query(
      `SELECT m.direction, e.status FROM messages m LEFT JOIN workflow_executions e ON e.id = m.execution_id
        WHERE m.id < uuid_v7_floor(to_timestamp($1::float8 / 1000)) ORDER BY m.id`,
      [cutoff],
    );
    expect(oldMessages).toEqual([
      { direction: 'inbound', status: 'running' },
      { direction: 'outbound', status: 'running' },
      { direction: 'inbound', status: 'running' },
      { direction: 'outbound', status: 'running' },
    ]);
    const [{ orphanDeliveries, orphanProviderIds }] = await ds.query(
      `SELECT (SELECT count(*) FROM message_deliveries d WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = d.message_id))::int AS "orphanDeliveries",
              (SELECT count(*) FROM message_provider_ids p WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = p.message_id))::int AS "orphanProviderIds"`,
    );
    expect({ orphanDeliveries, orphanProviderIds }).toEqual({ orphanDeliveries: 0, orphanProviderIds: 0 });
    expect(await messageCounts()).toEqual(messagesRecent);

    // Webhook deliveries older than 30 days: only the pending one, with its attempts; no attempt without its delivery.
    const oldDeliveries = await ds.query(`SELECT status FROM webhook_deliveries WHERE id < uuid_v7_floor(to_timestamp($1::float8 / 1000))`, [cutoff]);
    expect(oldDeliveries).toEqual([{ status: 'pending' }]);
    const [{ orphanAttempts, oldAttempts }] = await ds.query(
      `SELECT (SELECT count(*) FROM webhook_delivery_attempts a WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = a.delivery_id))::int AS "orphanAttempts",
              (SELECT count(*) FROM webhook_delivery_attempts WHERE delivery_id < uuid_v7_floor(to_timestamp($1::float8 / 1000)))::int AS "oldAttempts"`,
      [cutoff],
    );
    expect({ orphanAttempts, oldAttempts }).toEqual({ orphanAttempts: 0, oldAttempts: 2 });
    expect(await webhookCounts()).toEqual(webhooksRecent);
    const attemptsApi = await t.http.get(`/v1/webhooks/${webhook}/logs`).query({ limit: 1 }).set(org.auth('read_only'));
    expect(attemptsApi.status, JSON.stringify(attemptsApi.body)).toBe(200);
    expect(attemptsApi.body.pagination.total).toBe(webhooksRecent.attempts + 2);

    // The retry outlives its original: it still reads, naming it; the original is gone (404), so is its claim.
    const retry = await t.http.get(`/v1/workflows/${survey}/executions/${retried.retry}`).set(org.auth('read_only')).expect(200);
    expect(retry.body.data.retry_of).toBe(retried.original);
    await t.http.get(`/v1/workflows/${survey}/executions/${retried.original}`).set(org.auth('read_only')).expect(404);
    expect((await t.http.post(`/v1/workflows/${survey}/executions/${retried.original}/retry`).set(org.auth('read_write'))).status).toBe(404);
    const [{ claims }] = await ds.query(`SELECT count(*)::int AS claims FROM workflow_execution_retries WHERE retry_of = $1`, [retried.original]);
    expect(claims).toBe(0);

    // Older than 30 days: only the running firings; the retained period is whole.
    const old = await ds.query(`SELECT status FROM trigger_executions WHERE id < uuid_v7_floor(to_timestamp($1::float8 / 1000)) ORDER BY id`, [cutoff]);
    expect(old).toEqual([{ status: 'running' }, { status: 'running' }]);
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM trigger_executions`);
    expect(n).toBe(recent + 2);
    // The edge partition was trimmed (not dropped): it keeps its rows after the cutoff only.
    const [{ edgeOld, edgeNew }] = await ds.query(
      `SELECT (count(*) FILTER (WHERE id < uuid_v7_floor(to_timestamp($1::float8 / 1000)) AND status <> 'running'))::int AS "edgeOld",
              (count(*) FILTER (WHERE id >= uuid_v7_floor(to_timestamp($1::float8 / 1000))))::int AS "edgeNew"
         FROM ONLY ${edgeMonth}`,
      [cutoff],
    );
    expect(edgeOld).toBe(0);
    if (new Date(cutoff).getUTCDate() > 1) expect(edgeNew).toBeGreaterThan(0);

    // Nothing was logged against the rollups: every figure of the year is as before.
    const [{ deliveryChanges }] = await ds.query(`SELECT count(*)::int AS "deliveryChanges" FROM message_delivery_changes`);
    expect(deliveryChanges).toBe(deliveryChangesBefore);
    for (const log of ['trigger_execution_changes', 'workflow_execution_changes', 'execution_step_changes', 'message_changes']) {
      const [{ pending }] = await ds.query(`SELECT count(*)::int AS pending FROM ${log} WHERE sign = -1`);
      expect(pending, log).toBe(0);
    }
    await foldRollups(ds);
    expect(await analytics()).toEqual(figures);

    // A second pass finds nothing more to remove.
    expect(await retention('30d').prune(now)).toMatchObject({ dropped: [], trimmed: 0 });
  });

  it('an organization override (CLI org:settings, shown by GET /v1/me) keeps or trims its own firings', async () => {
    const other = await createOrganization(t);
    const otherWf = (await createWorkflow(t, other)).id;
    const otherTrigger = await insertTrigger(ds, { organizationId: other.id, workflowId: otherWf, name: 'Kept trigger' });
    await seedYear(ds, other.id, otherWf, otherTrigger, now, 10_000);

    const bad = await cli('org:settings', '--org', other.id, '--execution-retention', '2h');
    expect(bad.code).toBe(2);
    const set = await cli('org:settings', '--org', other.id, '--execution-retention', 'off');
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ organization_id: other.id, execution_retention: 'off' });
    const me = await t.http.get('/v1/me').set(other.auth('read_only')).expect(200);
    expect(me.body.data.organization).toMatchObject({ id: other.id, execution_retention: 'off' });
    expect((await t.http.get('/v1/me').set(org.auth('read_only')).expect(200)).body.data.organization).toMatchObject({ id: org.id, execution_retention: null });

    // The service keeps 30 days; this organization keeps everything: no partition can go, nothing of its is trimmed.
    const before = await partitions(ds);
    const report = await pruneAll('30d');
    expect(report.dropped).toEqual([]);
    expect(await partitions(ds)).toEqual(before);
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM trigger_executions WHERE organization_id = $1`, [other.id]);
    expect(n).toBe(730);

    // A shorter override (90 days) under a service that keeps everything: only this organization's older firings go.
    expect((await cli('org:settings', '--org', other.id, '--execution-retention', '90d')).code).toBe(0);
    expect((await t.http.get('/v1/me').set(other.auth('read_only')).expect(200)).body.data.organization.execution_retention).toBe('90d');
    const [{ mine }] = await ds.query(`SELECT count(*)::int AS mine FROM trigger_executions WHERE organization_id = $1`, [org.id]);
    await pruneAll('off');
    const rows = await ds.query(
      `SELECT count(*)::int AS n, (count(*) FILTER (WHERE id < uuid_v7_floor(to_timestamp($2::float8 / 1000)) AND status <> 'running'))::int AS old
         FROM trigger_executions WHERE organization_id = $1`,
      [other.id, now - 90 * DAY],
    );
    expect(rows[0].old).toBe(0);
    expect(rows[0].n).toBeGreaterThanOrEqual(178);
    expect(rows[0].n).toBeLessThan(200);
    const [{ still }] = await ds.query(`SELECT count(*)::int AS still FROM trigger_executions WHERE organization_id = $1`, [org.id]);
    expect(still).toBe(mine);

    // Back to the service's setting.
    expect(JSON.parse((await cli('org:settings', '--org', other.id, '--execution-retention', 'default')).stdout).execution_retention).toBeNull();
  });

  it('a drop whose tables are in use waits briefly, tries again within the pass, and never holds one table while waiting for another', async () => {
    // A finished execution with its step in a month of its own, long past any retention.
    const at = now - 500 * DAY;
    const month = new Date(at).toISOString().slice(0, 7).replace('-', '');
    for (const table of ['workflow_executions', 'execution_steps', 'execution_answers']) {
      await ds.query(`SELECT retention_partitions_ensure($1, to_timestamp($2::float8 / 1000), to_timestamp($2::float8 / 1000))`, [table, at]);
    }
    const [{ id }] = await ds.query(
      `INSERT INTO workflow_executions (id, organization_id, workflow_id, workflow_version, customer_ref, channel, status, input, state, started_at, completed_at, duration_ms)
       VALUES (${V7_AT('to_timestamp($3::float8 / 1000)', '777777')}, $1, $2, 1, 'customer-old', 'whatsapp', 'success', '{}', '{}', to_timestamp($3::float8 / 1000),
               to_timestamp($3::float8 / 1000) + interval '1 second', 1000)
       RETURNING id`,
      [org.id, wf, at],
    );
    await ds.query(`INSERT INTO execution_steps (execution_id, node_id, type, status, started_at, completed_at, duration_ms, output) VALUES ($1, 'welcome', 'message', 'completed', now(), now(), 1, '{}')`, [id]);

    // Another session reads the executions in an open transaction, then (while the pass waits) the steps,
    // as the engine's statements do. A drop that detached the steps' month first, then waited for the
    // executions, would deadlock with it.
    const other = new Client({ connectionString: testConfig().databaseUrl });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT count(*) FROM workflow_executions WHERE id = $1', [id]);
      const pass = retention('30d').prune(now);
      await new Promise((r) => setTimeout(r, 600));
      const started = Date.now();
      await other.query('SELECT count(*) FROM execution_steps WHERE execution_id = $1', [id]);
      // Waited at most for one of the drop's lock tries (400 ms), never for a deadlock check.
      expect(Date.now() - started).toBeLessThan(900);
      // Held past the first tries of the drop (and past the 2 s a single try could wait).
      await new Promise((r) => setTimeout(r, 1_800));
      await other.query('COMMIT');
      const report = await pass;
      expect(report.dropped).toEqual(expect.arrayContaining([`workflow_executions_p${month}`, `execution_steps_p${month}`, `execution_answers_p${month}`]));
      expect(await ds.query(`SELECT 1 FROM workflow_executions WHERE id = $1`, [id])).toEqual([]);
    } finally {
      await other.query('ROLLBACK').catch(() => undefined);
      await other.end();
    }
  });

  it('a drop locks none of the tables its rows refer to (customers, workflows, organizations), which every run writes', async () => {
    const at = now - 470 * DAY;
    const month = new Date(at).toISOString().slice(0, 7).replace('-', '');
    for (const table of ['workflow_executions', 'execution_steps', 'execution_answers']) {
      await ds.query(`SELECT retention_partitions_ensure($1, to_timestamp($2::float8 / 1000), to_timestamp($2::float8 / 1000))`, [table, at]);
    }
    await ds.query(
      `INSERT INTO workflow_executions (id, organization_id, workflow_id, workflow_version, customer_ref, channel, status, input, state, started_at, completed_at, duration_ms)
       VALUES (${V7_AT('to_timestamp($3::float8 / 1000)', '888888')}, $1, $2, 1, 'customer-old', 'whatsapp', 'success', '{}', '{}', to_timestamp($3::float8 / 1000),
               to_timestamp($3::float8 / 1000) + interval '1 second', 1000)`,
      [org.id, wf, at],
    );
    // Another session writes them (an inbound message's customer, a run's counters) in a transaction held
    // over the whole pass: a month detached before its drop would wait for it (its copies of the foreign keys).
    const other = new Client({ connectionString: testConfig().databaseUrl });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('LOCK TABLE customers, workflows, organizations IN ROW EXCLUSIVE MODE');
      const report = await retention('30d').prune(now);
      expect(report.dropped).toEqual(expect.arrayContaining([`workflow_executions_p${month}`, `execution_steps_p${month}`, `execution_answers_p${month}`]));
      expect(report.phasesMs.locks).toBeLessThan(400);
      // Paced: it rested nine times as long as its checks and its drop took.
      const { checks, locks, drops, files, rests } = report.phasesMs;
      expect(rests).toBeGreaterThanOrEqual(9 * (checks + locks + drops + files));
      await other.query('COMMIT');
    } finally {
      await other.query('ROLLBACK').catch(() => undefined);
      await other.end();
    }
  });
});

describe('migration ExecutionRetention on a database holding data', { timeout: 120_000 }, () => {
  const databaseName = `${inject('testRunId')}_retention_${randomBytes(3).toString('hex')}`;
  const admin = new Client({ connectionString: `${TEST_POSTGRES_URL}/postgres` });
  const mine = MIGRATIONS.findIndex((m) => m.name === 'ExecutionRetention1771000000000');
  let db: DataSource;

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE "${databaseName}"`);
    db = new DataSource({ ...dataSourceOptions({ databaseUrl: `${TEST_POSTGRES_URL}/${databaseName}` }), migrations: MIGRATIONS.slice(0, mine) });
    await db.initialize();
    await db.runMigrations({ transaction: 'each' });
  });
  afterAll(async () => {
    if (db?.isInitialized) await db.destroy();
    await admin.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await admin.end();
  });

  it('moves the firings into monthly partitions (random keys to the default one), keeps names, rollups and triggers', async () => {
    expect(mine).toBeGreaterThan(0);
    const [o] = await db.query(`INSERT INTO organizations (name) VALUES ('m') RETURNING id`);
    const [w] = await db.query(`INSERT INTO workflows (organization_id, name, configuration) VALUES ($1, 'w', '{"nodes":[]}') RETURNING id`, [o.id]);
    const [tr] = await db.query(`INSERT INTO triggers (organization_id, workflow_id, name, type, configuration) VALUES ($1, $2, 't', 'api', '{}') RETURNING id`, [o.id, w.id]);
    // Ninety days of firings keyed by their time, and ten with random keys (written before UuidV7Keys).
    await db.query(
      `INSERT INTO trigger_executions (id, organization_id, trigger_id, workflow_id, status, input, triggered_at, completed_at, duration_ms)
       SELECT CASE WHEN i % 10 = 0 THEN gen_random_uuid()
                   ELSE (substr(lpad(to_hex(floor(EXTRACT(EPOCH FROM at) * 1000)::bigint), 12, '0'), 1, 8) || '-' || substr(lpad(to_hex(floor(EXTRACT(EPOCH FROM at) * 1000)::bigint), 12, '0'), 9, 4)
                         || '-7000-8000-' || lpad(to_hex(i), 12, '0'))::uuid END,
              $1, $3, $2, CASE WHEN i % 4 = 0 THEN 'failed' ELSE 'success' END, jsonb_build_object('customer_id', 'c' || (i % 5)), at, at, i
         FROM generate_series(1, 100) i, LATERAL (SELECT now() - i * interval '22 hours' AS at) x`,
      [o.id, w.id, tr.id],
    );
    await db.query('SELECT rollups_fold(1000000)');
    const snapshot = async () => ({
      rows: (await db.query(`SELECT md5(string_agg(t::text, ',' ORDER BY id)) AS h, count(*)::int AS n FROM trigger_executions t`))[0],
      days: await db.query(`SELECT day, channel, executions, successful, failed, duration_sum::text, customer_checksum::text FROM trigger_execution_days ORDER BY 1, 2`),
    });
    const before = await snapshot();
    expect(before.rows.n).toBe(100);

    await db.destroy();
    db = new DataSource({ ...dataSourceOptions({ databaseUrl: `${TEST_POSTGRES_URL}/${databaseName}` }), migrations: MIGRATIONS.slice(0, mine + 1) });
    await db.initialize();
    await db.runMigrations({ transaction: 'each' });

    const [{ relkind }] = await db.query(`SELECT relkind FROM pg_class WHERE relname = 'trigger_executions'`);
    expect(relkind).toBe('p');
    await db.query('SELECT rollups_fold(1000000)');
    expect(await snapshot()).toEqual(before);
    const [{ inDefault }] = await db.query(`SELECT count(*)::int AS "inDefault" FROM ONLY trigger_executions_default`);
    expect(inDefault).toBe(10);
    const parts = await db.query(`SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'trigger_executions'::regclass`);
    expect(parts[0].n).toBeGreaterThanOrEqual(5);
    const names = async () => ({
      constraints: (await db.query(`SELECT conname FROM pg_constraint WHERE conrelid = 'trigger_executions'::regclass ORDER BY 1`)).map((r: { conname: string }) => r.conname),
      triggers: (await db.query(`SELECT tgname FROM pg_trigger WHERE tgrelid = 'trigger_executions'::regclass AND NOT tgisinternal ORDER BY 1`)).map((r: { tgname: string }) => r.tgname),
      indexes: (await db.query(`SELECT indexname FROM pg_indexes WHERE tablename = 'trigger_executions' ORDER BY 1`)).map((r: { indexname: string }) => r.indexname),
    });
    expect(await names()).toEqual({
      constraints: ['trigger_executions_organization_id_fkey', 'trigger_executions_pkey', 'trigger_executions_trigger_id_fkey', 'trigger_executions_workflow_execution_id_fkey'],
      triggers: ['trigger_executions_rollup_delete', 'trigger_executions_rollup_insert', 'trigger_executions_rollup_update'],
      indexes: ['idx_trigger_executions_trigger_status_triggered', 'idx_trigger_executions_trigger_triggered', 'idx_trigger_executions_workflow_execution', 'trigger_executions_pkey'],
    });
    // The rollup triggers still log through the parent: a new firing counts.
    await db.query(
      `INSERT INTO trigger_executions (organization_id, trigger_id, workflow_id, status, input, triggered_at, completed_at, duration_ms)
       SELECT organization_id, trigger_id, workflow_id, 'success', '{}', now(), now(), 1 FROM trigger_executions LIMIT 1`,
    );
    await db.query('SELECT rollups_fold(1000000)');
    const [{ total }] = await db.query(`SELECT sum(executions)::int AS total FROM trigger_execution_days`);
    expect(total).toBe(101);

    // Undone: a plain table again, with every row.
    await db.undoLastMigration({ transaction: 'each' });
    const [{ relkind: plain }] = await db.query(`SELECT relkind FROM pg_class WHERE relname = 'trigger_executions'`);
    expect(plain).toBe('r');
    expect((await db.query(`SELECT count(*)::int AS n FROM trigger_executions`))[0].n).toBe(101);
    expect(await names()).toEqual({
      constraints: ['trigger_executions_organization_id_fkey', 'trigger_executions_pkey', 'trigger_executions_trigger_id_fkey', 'trigger_executions_workflow_execution_id_fkey'],
      triggers: ['trigger_executions_rollup_delete', 'trigger_executions_rollup_insert', 'trigger_executions_rollup_update'],
      indexes: ['idx_trigger_executions_trigger_status_triggered', 'idx_trigger_executions_trigger_triggered', 'idx_trigger_executions_workflow_execution', 'trigger_executions_pkey'],
    });
  });
});

describe('migration ExecutionsPartitioned on a database holding data', { timeout: 120_000 }, () => {
  const databaseName = `${inject('testRunId')}_executions_${randomBytes(3).toString('hex')}`;
  const admin = new Client({ connectionString: `${TEST_POSTGRES_URL}/postgres` });
  const mine = MIGRATIONS.findIndex((m) => m.name === 'ExecutionsPartitioned1771200000000');
  let db: DataSource;

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE "${databaseName}"`);
    db = new DataSource({ ...dataSourceOptions({ databaseUrl: `${TEST_POSTGRES_URL}/${databaseName}` }), migrations: MIGRATIONS.slice(0, mine) });
    await db.initialize();
    await db.runMigrations({ transaction: 'each' });
  });
  afterAll(async () => {
    if (db?.isInitialized) await db.destroy();
    await admin.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await admin.end();
  });

  it('moves executions, steps and answers into aligned monthly partitions, keeps every row, rollup and retry, and undoes', async () => {
    expect(mine).toBeGreaterThan(0);
    const [o] = await db.query(`INSERT INTO organizations (name) VALUES ('m') RETURNING id`);
    const configuration = { nodes: [{ id: 'welcome', type: 'message', content: 'Hi', next: 'survey' }, SURVEY_FORM] };
    const [w] = await db.query(`INSERT INTO workflows (organization_id, name, configuration) VALUES ($1, 'w', $2) RETURNING id`, [o.id, configuration]);
    await db.query(`INSERT INTO workflow_versions (workflow_id, version, configuration) VALUES ($1, 1, $2) ON CONFLICT DO NOTHING`, [w.id, configuration]);
    // Ninety days of executions keyed by their time, ten with random keys (written before UuidV7Keys), each with two steps.
    await db.query(
      `INSERT INTO workflow_executions (id, organization_id, workflow_id, workflow_version, customer_ref, channel, status, started_at, completed_at, duration_ms)
       SELECT CASE WHEN i % 10 = 0 THEN gen_random_uuid() ELSE ${V7_AT('at', 'i')} END,
              $1, $2, 1, 'c' || (i % 5), 'whatsapp', CASE WHEN i % 4 = 0 THEN 'failed' ELSE 'success' END, at, at, i
         FROM generate_series(1, 100) i, LATERAL (SELECT now() - i * interval '22 hours' AS at) x`,
      [o.id, w.id],
    );
    await db.query(
      `INSERT INTO execution_steps (execution_id, node_id, type, status, started_at, completed_at, duration_ms, output)
       SELECT id, n.node, n.type, 'completed', started_at, started_at, 10, jsonb_build_object('answers', jsonb_build_object('score', 1 + duration_ms % 5))
         FROM workflow_executions, (VALUES ('welcome', 'message'), ('survey', 'form')) n(node, type)`,
    );
    // A retry of a failed one (as the retry statement left it before this migration).
    const [failed] = await db.query(`SELECT id FROM workflow_executions WHERE status = 'failed' ORDER BY id LIMIT 1`);
    await db.query(
      `INSERT INTO workflow_executions (organization_id, workflow_id, workflow_version, status, started_at, retry_of) VALUES ($1, $2, 1, 'running', now(), $3)`,
      [o.id, w.id, failed.id],
    );
    await db.query('SELECT rollups_fold(1000000)');
    const snapshot = async () => ({
      executions: (await db.query(`SELECT md5(string_agg(t::text, ',' ORDER BY id)) AS h, count(*)::int AS n FROM workflow_executions t`))[0],
      steps: (await db.query(`SELECT md5(string_agg(t::text, ',' ORDER BY id)) AS h, count(*)::int AS n FROM execution_steps t`))[0],
      answers: (await db.query(`SELECT md5(string_agg(t::text, ',' ORDER BY execution_id)) AS h, count(*)::int AS n FROM execution_answers t`))[0],
      hours: await db.query(`SELECT hour, channel, executions, successful, failed, duration_sum::text FROM workflow_execution_hours ORDER BY 1, 2`),
      nodes: await db.query(`SELECT * FROM workflow_node_days ORDER BY 1, 2, 3`),
      answerDays: await db.query(`SELECT * FROM workflow_answer_days ORDER BY 1, 2`),
    });
    const before = await snapshot();
    expect(before.executions.n).toBe(101);
    expect(before.answers.n).toBe(100);

    await db.destroy();
    db = new DataSource({ ...dataSourceOptions({ databaseUrl: `${TEST_POSTGRES_URL}/${databaseName}` }), migrations: MIGRATIONS.slice(0, mine + 1) });
    await db.initialize();
    await db.runMigrations({ transaction: 'each' });

    for (const table of EXECUTION_TABLES) {
      const [{ relkind }] = await db.query(`SELECT relkind FROM pg_class WHERE relname = $1`, [table]);
      expect(relkind, table).toBe('p');
      expect((await partitions(db, table)).length, table).toBeGreaterThanOrEqual(5);
    }
    await db.query('SELECT rollups_fold(1000000)');
    expect(await snapshot()).toEqual(before);
    const [{ inDefault, stepsInDefault }] = await db.query(
      `SELECT (SELECT count(*) FROM ONLY workflow_executions_default)::int AS "inDefault", (SELECT count(*) FROM ONLY execution_steps_default)::int AS "stepsInDefault"`,
    );
    expect({ inDefault, stepsInDefault }).toEqual({ inDefault: 10, stepsInDefault: 20 });
    expect(await db.query(`SELECT retry_of FROM workflow_execution_retries`)).toEqual([{ retry_of: failed.id }]);
    const [{ fks }] = await db.query(`SELECT count(*)::int AS fks FROM pg_constraint WHERE contype = 'f' AND confrelid = 'workflow_executions'::regclass`);
    expect(fks).toBe(0);

    // A DELETE through the parent (a workflow deleted) still removes the steps and answers and takes them off the rollups.
    await db.query(`DELETE FROM workflows WHERE id = $1`, [w.id]);
    const [{ steps, answers, claims }] = await db.query(
      `SELECT (SELECT count(*) FROM execution_steps)::int AS steps, (SELECT count(*) FROM execution_answers)::int AS answers,
              (SELECT count(*) FROM workflow_execution_retries)::int AS claims`,
    );
    expect({ steps, answers, claims }).toEqual({ steps: 0, answers: 0, claims: 0 });

    // Undone: plain tables, the foreign keys and the unique retry index back.
    await db.undoLastMigration({ transaction: 'each' });
    for (const table of EXECUTION_TABLES) {
      const [{ relkind }] = await db.query(`SELECT relkind FROM pg_class WHERE relname = $1`, [table]);
      expect(relkind, table).toBe('r');
    }
    const [{ back }] = await db.query(`SELECT count(*)::int AS back FROM pg_constraint WHERE contype = 'f' AND confrelid = 'workflow_executions'::regclass AND conparentid = 0`);
    expect(back).toBe(4);
    expect((await db.query(`SELECT indexname FROM pg_indexes WHERE indexname = 'uq_workflow_executions_retry_of'`)).length).toBe(1);
  });
});

describe('migration MessagesPartitioned on a database holding data', { timeout: 120_000 }, () => {
  const databaseName = `${inject('testRunId')}_messages_${randomBytes(3).toString('hex')}`;
  const admin = new Client({ connectionString: `${TEST_POSTGRES_URL}/postgres` });
  const mine = MIGRATIONS.findIndex((m) => m.name === 'MessagesPartitioned1771200000001');
  let db: DataSource;

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE "${databaseName}"`);
    db = new DataSource({ ...dataSourceOptions({ databaseUrl: `${TEST_POSTGRES_URL}/${databaseName}` }), migrations: MIGRATIONS.slice(0, mine) });
    await db.initialize();
    await db.runMigrations({ transaction: 'each' });
  });
  afterAll(async () => {
    if (db?.isInitialized) await db.destroy();
    await admin.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await admin.end();
  });

  it('moves messages and deliveries into aligned monthly partitions, the provider ids to their table, and undoes', async () => {
    expect(mine).toBeGreaterThan(0);
    const account = randomUUID();
    const [o] = await db.query(`INSERT INTO organizations (name) VALUES ('m') RETURNING id`);
    const [c] = await db.query(`INSERT INTO customers (organization_id, external_id, first_seen_at, last_seen_at) VALUES ($1, 'c', now(), now()) RETURNING id`, [o.id]);
    // Ninety days of messages keyed by their time (ten with random keys), each with a provider id; the outbound ones with a delivery.
    await db.query(
      `INSERT INTO messages (id, organization_id, customer_id, channel, direction, content, created_at, channel_account_id, provider_message_id)
       SELECT CASE WHEN i % 10 = 0 THEN gen_random_uuid() ELSE ${V7_AT('at', 'i')} END,
              $1, $2, 'whatsapp', CASE WHEN i % 2 = 0 THEN 'inbound' ELSE 'outbound' END, 'm' || i, at, $3, 'wamid.' || i
         FROM generate_series(1, 100) i, LATERAL (SELECT now() - i * interval '22 hours' AS at) x`,
      [o.id, c.id, account],
    );
    await db.query(
      `INSERT INTO message_deliveries (message_id, organization_id, channel_account_id, customer_id, channel, started_at, queued_at)
       SELECT id, organization_id, channel_account_id, customer_id, channel, created_at, created_at FROM messages WHERE direction = 'outbound'`,
    );
    const snapshot = async () => ({
      messages: (await db.query(`SELECT md5(string_agg(t::text, ',' ORDER BY id)) AS h, count(*)::int AS n FROM messages t`))[0],
      deliveries: (await db.query(`SELECT md5(string_agg(t::text, ',' ORDER BY message_id)) AS h, count(*)::int AS n FROM message_deliveries t`))[0],
    });
    const before = await snapshot();
    expect(before.messages.n).toBe(100);

    await db.destroy();
    db = new DataSource({ ...dataSourceOptions({ databaseUrl: `${TEST_POSTGRES_URL}/${databaseName}` }), migrations: MIGRATIONS.slice(0, mine + 1) });
    await db.initialize();
    await db.runMigrations({ transaction: 'each' });

    for (const table of MESSAGE_TABLES) {
      const [{ relkind }] = await db.query(`SELECT relkind FROM pg_class WHERE relname = $1`, [table]);
      expect(relkind, table).toBe('p');
      expect((await partitions(db, table)).length, table).toBeGreaterThanOrEqual(5);
    }
    expect(await snapshot()).toEqual(before);
    const [{ ids }] = await db.query(`SELECT count(*)::int AS ids FROM message_provider_ids p JOIN messages m ON m.id = p.message_id AND m.provider_message_id = p.provider_message_id`);
    expect(ids).toBe(100);
    // A redelivered provider id is refused by its table; a DELETE through the parent (a customer deleted) takes deliveries and ids with it.
    await expect(
      db.query(`INSERT INTO message_provider_ids (channel_account_id, provider_message_id, message_id) VALUES ($1, 'wamid.1', gen_random_uuid())`, [account]),
    ).rejects.toThrow(/duplicate key/);
    await db.query(`DELETE FROM customers WHERE id = $1`, [c.id]);
    const [{ deliveries, left }] = await db.query(
      `SELECT (SELECT count(*) FROM message_deliveries)::int AS deliveries, (SELECT count(*) FROM message_provider_ids)::int AS left`,
    );
    expect({ deliveries, left }).toEqual({ deliveries: 0, left: 0 });

    await db.undoLastMigration({ transaction: 'each' });
    for (const table of MESSAGE_TABLES) {
      const [{ relkind }] = await db.query(`SELECT relkind FROM pg_class WHERE relname = $1`, [table]);
      expect(relkind, table).toBe('r');
    }
    expect((await db.query(`SELECT indexname FROM pg_indexes WHERE indexname = 'uq_messages_account_provider_id'`)).length).toBe(1);
    const [{ fk }] = await db.query(`SELECT count(*)::int AS fk FROM pg_constraint WHERE conname = 'message_deliveries_message_id_fkey'`);
    expect(fk).toBe(1);
  });
});

describe('migration WebhookDeliveriesPartitioned on a database holding data', { timeout: 120_000 }, () => {
  const databaseName = `${inject('testRunId')}_webhooks_${randomBytes(3).toString('hex')}`;
  const admin = new Client({ connectionString: `${TEST_POSTGRES_URL}/postgres` });
  const mine = MIGRATIONS.findIndex((m) => m.name === 'WebhookDeliveriesPartitioned1771200000002');
  let db: DataSource;

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE "${databaseName}"`);
    db = new DataSource({ ...dataSourceOptions({ databaseUrl: `${TEST_POSTGRES_URL}/${databaseName}` }), migrations: MIGRATIONS.slice(0, mine) });
    await db.initialize();
    await db.runMigrations({ transaction: 'each' });
  });
  afterAll(async () => {
    if (db?.isInitialized) await db.destroy();
    await admin.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await admin.end();
  });

  it('moves deliveries and attempts into aligned monthly partitions and undoes', async () => {
    expect(mine).toBeGreaterThan(0);
    const [o] = await db.query(`INSERT INTO organizations (name) VALUES ('m') RETURNING id`);
    const webhookId = await seedWebhookDeliveries(db, o.id, Date.now());
    const snapshot = async () => ({
      deliveries: (await db.query(`SELECT md5(string_agg(t::text, ',' ORDER BY id)) AS h, count(*)::int AS n FROM webhook_deliveries t`))[0],
      attempts: (await db.query(`SELECT md5(string_agg(t::text, ',' ORDER BY id)) AS h, count(*)::int AS n FROM webhook_delivery_attempts t`))[0],
    });
    const before = await snapshot();
    expect(before.attempts.n).toBe(1460);

    await db.destroy();
    db = new DataSource({ ...dataSourceOptions({ databaseUrl: `${TEST_POSTGRES_URL}/${databaseName}` }), migrations: MIGRATIONS.slice(0, mine + 1) });
    await db.initialize();
    await db.runMigrations({ transaction: 'each' });

    for (const table of WEBHOOK_TABLES) {
      const [{ relkind }] = await db.query(`SELECT relkind FROM pg_class WHERE relname = $1`, [table]);
      expect(relkind, table).toBe('p');
      expect((await partitions(db, table)).length, table).toBeGreaterThanOrEqual(13);
    }
    expect(await snapshot()).toEqual(before);
    // Each attempt sits in its delivery's month, whatever its own key's.
    const [{ misplaced }] = await db.query(
      `SELECT count(*)::int AS misplaced FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
        WHERE substr(a.tableoid::regclass::text, length('webhook_delivery_attempts') + 1) <> substr(d.tableoid::regclass::text, length('webhook_deliveries') + 1)`,
    );
    expect(misplaced).toBe(0);
    // A DELETE through the parent (a delivery deleted with its webhook) takes the attempts with it.
    await db.query(`DELETE FROM webhooks WHERE id = $1`, [webhookId]);
    expect((await db.query(`SELECT count(*)::int AS n FROM webhook_delivery_attempts`))[0].n).toBe(0);

    await db.undoLastMigration({ transaction: 'each' });
    for (const table of WEBHOOK_TABLES) {
      const [{ relkind }] = await db.query(`SELECT relkind FROM pg_class WHERE relname = $1`, [table]);
      expect(relkind, table).toBe('r');
    }
    const [{ fk }] = await db.query(`SELECT count(*)::int AS fk FROM pg_constraint WHERE conname = 'webhook_delivery_attempts_delivery_id_fkey'`);
    expect(fk).toBe(1);
  });
});
