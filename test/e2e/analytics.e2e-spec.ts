import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertCustomer, insertMessage, insertStep, insertTrigger, insertWorkflowExecution } from '../factories/executions.js';
import { FileGenerator } from '../../src/analytics/files/file-generator.service.js';
import { WorkflowAnalyticsRepository } from '../../src/analytics/workflow-analytics.repository.js';
import { halfway } from '../../src/analytics/analytics.service.js';
import { hourSplit } from '../../src/common/period-split.js';
import { createTrigger } from '../factories/triggers.js';
import { createWorkflow } from '../factories/workflows.js';
import { waitFor } from '../utils/wait-for.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';

/**
 * Analytics on a week of known executions, steps, messages and form answers written straight to
 * the tables (2025-06-01 .. 2025-06-07 UTC), another organization's rows beside them, and one
 * conversation run through the real inbound path for the realtime figures. Every number asserted
 * is worked out by hand in the comments from the seed.
 */

const SURVEY_NODES = [
  { id: 'welcome', type: 'message', content: 'Hello!', next: 'survey' },
  {
    id: 'survey',
    type: 'form',
    fields: [
      { name: 'score', type: 'rating', required: true, label: 'Rate us 1-5' },
      { name: 'recommend', type: 'nps', required: true, label: 'Would you recommend us (0-10)?' },
    ],
    next: 'bye',
  },
  { id: 'bye', type: 'message', content: 'Thanks!' },
];

const PERIOD = { start_date: '2025-06-01', end_date: '2025-06-07' };

describe('analytics', () => {
  let t: TestApp;
  let ds: DataSource;
  let org: TestOrganization;
  let other: TestOrganization;
  let wf: string;
  let wf2: string;
  let otherWf: string;
  let trigger: string;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS_ENABLED: 'false', APP_ROLE: 'api' });
    ds = t.app.get(DataSource);
    org = await createOrganization(t);
    other = await createOrganization(t);
    wf = (await createWorkflow(t, org, { configuration: { nodes: SURVEY_NODES } })).id;
    wf2 = (await createWorkflow(t, org)).id;
    otherWf = (await createWorkflow(t, other, { configuration: { nodes: SURVEY_NODES } })).id;
    trigger = await insertTrigger(ds, { organizationId: org.id, workflowId: wf, name: 'Analytics trigger' });

    const customer = (externalId: string, createdAt: string, organizationId = org.id) => insertCustomer(ds, { organizationId, externalId, createdAt });
    const c1 = await customer('c1', '2025-05-01T00:00:00Z'); // returning
    const c2 = await customer('c2', '2025-06-01T23:00:00Z'); // new
    const c3 = await customer('c3', '2025-06-05T00:00:00Z'); // new, no messages
    const c4 = await customer('c4', '2025-06-05T00:00:00Z'); // new, no messages

    const run = (startedAt: string, status: 'success' | 'failed' | 'running', durationMs: number | null, channel: string | null, cust: [string, string], extra: Record<string, unknown> = {}) =>
      insertWorkflowExecution(ds, {
        organizationId: org.id, workflowId: wf, status, startedAt, durationMs, channel, customerRef: cust[0], customerId: cust[1], ...extra,
      });
    const e1 = await run('2025-06-01T10:00:00Z', 'success', 1000, 'whatsapp', ['c1', c1], { triggerId: trigger });
    const e2 = await run('2025-06-01T23:30:00Z', 'failed', 3000, 'whatsapp', ['c2', c2], { error: { code: 'NODE_FAILED', message: 'x', node_id: 'bye' } });
    const e3 = await run('2025-06-03T12:00:00Z', 'success', 2000, 'instagram', ['c1', c1]);
    const e4 = await run('2025-06-05T08:00:00Z', 'failed', 4000, null, ['c3', c3], {
      error: { code: 'CONVERSATION_TIMEOUT', message: 'x', node_id: 'survey' },
    });
    const e5 = await run('2025-06-05T09:00:00Z', 'running', null, 'whatsapp', ['c4', c4]);
    const e6 = await run('2025-06-05T09:30:00Z', 'success', 6000, 'whatsapp', ['c2', c2]);
    await ds.query(`UPDATE workflow_executions SET state = '{"cursor":"survey"}', waiting = true WHERE id = $1`, [e5]);

    const step = (id: string, nodeId: string, type: string, at: string, durationMs: number, extra: Record<string, unknown> = {}) =>
      insertStep(ds, id, { nodeId, type, startedAt: at, durationMs, ...extra });
    const answers = (score: number, recommend: number) => ({ output: { answers: { score, recommend } } });
    await step(e1, 'welcome', 'message', '2025-06-01T10:00:00Z', 100);
    await step(e1, 'survey', 'form', '2025-06-01T10:00:01Z', 500, answers(4, 10));
    await step(e1, 'bye', 'message', '2025-06-01T10:00:02Z', 100);
    await step(e2, 'welcome', 'message', '2025-06-01T23:30:00Z', 100);
    await step(e2, 'survey', 'form', '2025-06-01T23:30:01Z', 500, { output: { answers: { score: null, recommend: null } } });
    await step(e2, 'bye', 'message', '2025-06-01T23:30:02Z', 50, { status: 'failed' });
    await step(e3, 'welcome', 'message', '2025-06-03T12:00:00Z', 100);
    await step(e3, 'survey', 'form', '2025-06-03T12:00:01Z', 700, answers(2, 6));
    await step(e3, 'bye', 'message', '2025-06-03T12:00:02Z', 100);
    await step(e4, 'welcome', 'message', '2025-06-05T08:00:00Z', 100);
    await step(e5, 'welcome', 'message', '2025-06-05T09:00:00Z', 100);
    await step(e6, 'welcome', 'message', '2025-06-05T09:30:00Z', 100);
    await step(e6, 'survey', 'form', '2025-06-05T09:30:01Z', 300, answers(5, 9));
    await step(e6, 'bye', 'message', '2025-06-05T09:30:02Z', 100);

    const msg = (customerId: string, channel: string, direction: 'inbound' | 'outbound', createdAt: string, executionId: string | null = null) =>
      insertMessage(ds, { organizationId: org.id, customerId, channel, direction, content: 'm', createdAt, executionId });
    // c1 on whatsapp: one session of 10 minutes, 3 messages (e1: 1 in, 2 out); on instagram: one message.
    await msg(c1, 'whatsapp', 'inbound', '2025-06-01T10:00:00Z', e1);
    await msg(c1, 'whatsapp', 'outbound', '2025-06-01T10:00:05Z', e1);
    await msg(c1, 'whatsapp', 'outbound', '2025-06-01T10:10:00Z', e1);
    await msg(c1, 'instagram', 'inbound', '2025-06-03T12:00:00Z');
    // c2 on whatsapp: a 29-minute session of 2 messages (e6: 1 in, 1 out), then after 41 minutes one more.
    await msg(c2, 'whatsapp', 'inbound', '2025-06-05T09:30:00Z', e6);
    await msg(c2, 'whatsapp', 'outbound', '2025-06-05T09:59:00Z', e6);
    await msg(c2, 'whatsapp', 'inbound', '2025-06-05T10:40:00Z');
    // Outside the period.
    await msg(c1, 'whatsapp', 'inbound', '2025-06-08T00:00:01Z');

    // A second workflow: two successes.
    for (const at of ['2025-06-02T10:00:00Z', '2025-06-06T10:00:00Z']) {
      await insertWorkflowExecution(ds, { organizationId: org.id, workflowId: wf2, status: 'success', startedAt: at, durationMs: 10, customerRef: 'c9' });
    }
    // Another organization in the same tables and period: never counted.
    const foreign = await customer('c1', '2025-05-01T00:00:00Z', other.id);
    for (const at of ['2025-06-01T10:30:00Z', '2025-06-05T09:15:00Z']) {
      const id = await insertWorkflowExecution(ds, {
        organizationId: other.id, workflowId: otherWf, status: 'failed', startedAt: at, durationMs: 99_000, channel: 'whatsapp', customerRef: 'c1',
        customerId: foreign, error: { code: 'NODE_FAILED', message: 'x', node_id: 'welcome' },
      });
      await insertStep(ds, id, { nodeId: 'survey', type: 'form', startedAt: at, durationMs: 1, output: { answers: { score: 1, recommend: 0 } } });
      await insertMessage(ds, { organizationId: other.id, customerId: foreign, channel: 'whatsapp', direction: 'inbound', content: 'x', createdAt: at, executionId: id });
    }
  });
  afterAll(() => t?.close());

  const get = (path: string, query: Record<string, unknown> = {}, who: TestOrganization = org) => t.http.get(path).query(query).set(who.auth('read_only'));

  describe('GET /v1/analytics/workflows/{id}', () => {
    it('counts, rates, averages, messages, customers, satisfaction and channels of the period', async () => {
      const res = await get(`/v1/analytics/workflows/${wf}`, PERIOD);
      expect(res.status).toBe(200);
      const d = res.body.data;
      expect(d.workflow_id).toBe(wf);
      expect(d.period).toEqual({ start_date: '2025-06-01T00:00:00.000Z', end_date: '2025-06-07T23:59:59.999Z', timezone: 'UTC' });
      expect(d.metrics).toEqual({
        total_executions: 6,
        successful_executions: 3,
        failed_executions: 2,
        success_rate: 0.6, // 3 / 5 finished
        average_duration_ms: 3200, // (1000 + 3000 + 2000 + 4000 + 6000) / 5
        total_messages_sent: 3,
        total_messages_received: 2,
        unique_customers: 4,
        customer_satisfaction: 11 / 3, // ratings 4, 2, 5 (e2 answered nothing)
        channel_breakdown: { whatsapp: 4, instagram: 1, unknown: 1 },
        // Nothing of this workflow went through a channel account.
        messages_delivered: null,
        messages_read: null,
        delivery_rate: null,
        read_rate: null,
        // No execution of the period was ended by a handoff.
        handoff_rate: 0,
      });
      // Halves split at 2025-06-04T12:00: 3 and 3 executions; success 2/3 then 1/2; mean duration 2000 then 5000.
      expect(d.trends).toEqual({ execution_trend: 'stable', success_rate_trend: 'decreasing', duration_trend: 'increasing' });
    });

    it('has every day of the period, empty ones with zeros and null rates', async () => {
      const d = (await get(`/v1/analytics/workflows/${wf}`, PERIOD)).body.data;
      const empty = { executions: 0, success_rate: null, average_duration_ms: null, messages_sent: 0, messages_received: 0, unique_customers: 0 };
      expect(d.daily_metrics).toEqual([
        { date: '2025-06-01T00:00:00.000Z', executions: 2, success_rate: 0.5, average_duration_ms: 2000, messages_sent: 2, messages_received: 1, unique_customers: 2 },
        { date: '2025-06-02T00:00:00.000Z', ...empty },
        { date: '2025-06-03T00:00:00.000Z', executions: 1, success_rate: 1, average_duration_ms: 2000, messages_sent: 0, messages_received: 0, unique_customers: 1 },
        { date: '2025-06-04T00:00:00.000Z', ...empty },
        { date: '2025-06-05T00:00:00.000Z', executions: 3, success_rate: 0.5, average_duration_ms: 5000, messages_sent: 1, messages_received: 1, unique_customers: 3 },
        { date: '2025-06-06T00:00:00.000Z', ...empty },
        { date: '2025-06-07T00:00:00.000Z', ...empty },
      ]);
    });

    it('buckets in the request\'s timezone: at UTC+9, 23:30 UTC on June 1 is June 2', async () => {
      const d = (await get(`/v1/analytics/workflows/${wf}`, { ...PERIOD, timezone: 'Asia/Tokyo' })).body.data;
      expect(d.period).toEqual({ start_date: '2025-06-01T00:00:00.000+09:00', end_date: '2025-06-07T23:59:59.999+09:00', timezone: 'Asia/Tokyo' });
      expect(d.metrics.total_executions).toBe(6);
      expect(d.daily_metrics.map((b: { date: string; executions: number }) => [b.date, b.executions])).toEqual([
        ['2025-06-01T00:00:00.000+09:00', 1],
        ['2025-06-02T00:00:00.000+09:00', 1],
        ['2025-06-03T00:00:00.000+09:00', 1],
        ['2025-06-04T00:00:00.000+09:00', 0],
        ['2025-06-05T00:00:00.000+09:00', 3],
        ['2025-06-06T00:00:00.000+09:00', 0],
        ['2025-06-07T00:00:00.000+09:00', 0],
      ]);
      expect(d.daily_metrics[1]).toMatchObject({ success_rate: 0, average_duration_ms: 3000 });
      // June 1 local: at UTC-4 both 10:00 and 23:30 UTC fall in it; at UTC+9 only 10:00 UTC (23:30 UTC is June 2, 08:30).
      const ny = (await get(`/v1/analytics/workflows/${wf}`, { start_date: '2025-06-01', end_date: '2025-06-01', timezone: 'America/New_York' })).body.data;
      expect(ny.metrics.total_executions).toBe(2);
      const tokyo = (await get(`/v1/analytics/workflows/${wf}`, { start_date: '2025-06-01', end_date: '2025-06-01', timezone: 'Asia/Tokyo' })).body.data;
      expect(tokyo.metrics.total_executions).toBe(1);
    });

    it('the same figures from the hourly rollups as from the executions, and through a zone with a half-hour offset', async () => {
      const repository = new WorkflowAnalyticsRepository(ds);
      const [start, end] = [new Date('2025-05-31T00:00:00Z'), new Date('2025-06-08T12:34:56.789Z')];
      for (const granularity of ['hour', 'day', 'week']) {
        for (const tz of ['UTC', 'America/New_York']) {
          const middle = halfway({ start, end });
          const split = hourSplit(start, end);
          expect(split.hoursTo.getTime()).toBeGreaterThan(split.hoursFrom.getTime());
          const fromRollups = await repository.workflowCounts(org.id, wf, split, tz, granularity, middle);
          const fromRows = await repository.workflowCounts(org.id, wf, { rawFrom: start, rawTo: start, rawFrom2: start, rawTo2: end, hoursFrom: start, hoursTo: start }, tz, granularity, middle);
          const sorted = (rows: { kind: string; key: string | null }[]) => [...rows].sort((x, y) => `${x.kind}${x.key}`.localeCompare(`${y.kind}${y.key}`));
          expect(sorted(fromRollups)).toEqual(sorted(fromRows));
          expect(fromRollups.find((r) => r.kind === 'total')).toMatchObject({ executions: 6, messages_sent: 3, messages_received: 2, average_duration_ms: 3200 });
        }
      }
      // Asia/Kolkata (+05:30) is served from the executions: the same totals, and 23:30 UTC on June 1 is 05:00 on June 2.
      const kolkata = (await get(`/v1/analytics/workflows/${wf}`, { start_date: '2025-05-31', end_date: '2025-06-08', timezone: 'Asia/Kolkata' })).body.data;
      const utc = (await get(`/v1/analytics/workflows/${wf}`, { start_date: '2025-05-31', end_date: '2025-06-08' })).body.data;
      expect(kolkata.metrics).toEqual(utc.metrics);
      expect(kolkata.daily_metrics.slice(1, 4).map((b: { date: string; executions: number }) => [b.date, b.executions])).toEqual([
        ['2025-06-01T00:00:00.000+05:30', 1],
        ['2025-06-02T00:00:00.000+05:30', 1],
        ['2025-06-03T00:00:00.000+05:30', 1],
      ]);
    });

    it('hour, week and month buckets', async () => {
      const hours = (await get(`/v1/analytics/workflows/${wf}`, { start_date: '2025-06-05T08:00:00Z', end_date: '2025-06-05T10:59:59Z', granularity: 'hour' })).body.data;
      expect(hours.daily_metrics.map((b: { executions: number }) => b.executions)).toEqual([1, 2, 0]);
      const weeks = (await get(`/v1/analytics/workflows/${wf}`, { ...PERIOD, granularity: 'week' })).body.data;
      // 2025-06-01 is a Sunday: its ISO week starts on May 26.
      expect(weeks.daily_metrics.map((b: { date: string; executions: number }) => [b.date, b.executions])).toEqual([
        ['2025-05-26T00:00:00.000Z', 2],
        ['2025-06-02T00:00:00.000Z', 4],
      ]);
      const months = (await get(`/v1/analytics/workflows/${wf}`, { start_date: '2025-04-15', end_date: '2025-06-30', granularity: 'month' })).body.data;
      expect(months.daily_metrics.map((b: { executions: number }) => b.executions)).toEqual([0, 0, 6]);
    });

    it('selects metrics (comma-separated or repeated) and groups by channel, trigger and status', async () => {
      const comma = (await get(`/v1/analytics/workflows/${wf}`, { ...PERIOD, metrics: 'success_rate,total_executions' })).body.data;
      expect(comma.metrics).toEqual({ success_rate: 0.6, total_executions: 6 });
      const repeated = await t.http
        .get(`/v1/analytics/workflows/${wf}?start_date=2025-06-01&end_date=2025-06-07&metrics=unique_customers&metrics=channel_breakdown`)
        .set(org.auth('read_only'));
      expect(repeated.body.data.metrics).toEqual({ unique_customers: 4, channel_breakdown: { whatsapp: 4, instagram: 1, unknown: 1 } });

      const grouped = (await get(`/v1/analytics/workflows/${wf}`, { ...PERIOD, group_by: 'channel,trigger,status' })).body.data;
      expect(grouped.groups.channel.whatsapp).toEqual({
        executions: 4, successful_executions: 2, failed_executions: 1, success_rate: 2 / 3, average_duration_ms: 3333, unique_customers: 3,
      });
      expect(grouped.groups.channel.unknown.executions).toBe(1);
      expect(grouped.groups.trigger).toEqual({
        [trigger]: { executions: 1, successful_executions: 1, failed_executions: 0, success_rate: 1, average_duration_ms: 1000, unique_customers: 1 },
        none: { executions: 5, successful_executions: 2, failed_executions: 2, success_rate: 0.5, average_duration_ms: 3750, unique_customers: 4 },
      });
      expect(Object.keys(grouped.groups.status).sort()).toEqual(['failed', 'running', 'success']);
      expect(grouped.groups.status.running).toEqual({
        executions: 1, successful_executions: 0, failed_executions: 0, success_rate: null, average_duration_ms: null, unique_customers: 1,
      });
    });

    it('refuses unknown metrics, bad granularity, bad ranges and zones; 404 for foreign, unknown and malformed ids', async () => {
      const path = `/v1/analytics/workflows/${wf}`;
      const bad = await get(path, { ...PERIOD, metrics: 'total_executions,bogus' });
      expect([bad.status, bad.body.error.code, bad.body.error.field]).toEqual([400, 'INVALID_METRICS', 'metrics']);
      const gran = await get(path, { ...PERIOD, granularity: 'minute' });
      expect([gran.status, gran.body.error.code]).toEqual([422, 'INVALID_GRANULARITY']);
      for (const range of [
        { start_date: '2025-06-07', end_date: '2025-06-01' },
        { start_date: '2024-01-01', end_date: '2025-06-01' },
        { start_date: new Date(Date.now() + 86_400_000).toISOString() },
      ]) {
        const r = await get(path, range);
        expect([r.status, r.body.error.code, r.body.error.field]).toEqual([400, 'INVALID_DATE_RANGE', 'end_date']);
      }
      // 366 days is allowed.
      expect((await get(path, { start_date: '2024-06-01', end_date: '2025-06-01' })).status).toBe(200);
      for (const zone of ['Mars/Olympus', '+05:00', 'posix/Europe/Berlin']) {
        const z = await get(path, { ...PERIOD, timezone: zone });
        expect([z.status, z.body.error.code, z.body.error.field]).toEqual([400, 'INVALID_REQUEST', 'timezone']);
      }
      for (const id of [otherWf, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
        const r = await get(`/v1/analytics/workflows/${id}`, PERIOD);
        expect([r.status, r.body.error.code]).toEqual([404, 'WORKFLOW_NOT_FOUND']);
        const p = await get(`/v1/analytics/workflows/${id}/performance`, PERIOD);
        expect([p.status, p.body.error.code]).toEqual([404, 'WORKFLOW_NOT_FOUND']);
      }
      expect((await t.http.get(path)).status).toBe(401);
    });
  });

  describe('POST /v1/analytics/reports: the metric names of the workflow analytics', () => {
    /** Requests a report and makes its file here (this app runs no worker); answers the report's JSON rows, or the CSV text. */
    async function report(body: Record<string, unknown>): Promise<{ report: Record<string, unknown>; rows: Record<string, unknown>[] } & { text: string }> {
      const res = await t.http.post('/v1/analytics/reports').set(org.auth('read_write')).send({ name: 'Same names', ...body });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const id = res.body.data.report_id as string;
      expect(await t.app.get(FileGenerator).generate(id)).toBe(true);
      const done = await get(`/v1/analytics/reports/${id}`);
      expect(done.body.data.status).toBe('completed');
      const file = await t.http.get(`/v1/analytics/reports/${id}/download`).set(org.auth('read_only')).buffer(true).parse((r, cb) => {
        let text = '';
        r.on('data', (p: Buffer) => (text += p.toString('utf8')));
        r.on('end', () => cb(null, text));
      });
      expect(file.status).toBe(200);
      const text = file.body as string;
      return body.format === 'json' ? { ...JSON.parse(text), text } : { report: {}, rows: [], text };
    }

    it('accepts the names GET /v1/analytics/workflows/{id} answers, and its figures are the same, customers and satisfaction included', async () => {
      const analytics = (await get(`/v1/analytics/workflows/${wf}`, PERIOD)).body.data.metrics as Record<string, unknown>;
      const { channel_breakdown: _channels, ...scalar } = analytics;
      const names = Object.keys(scalar);
      expect(names).toEqual(expect.arrayContaining(['total_executions', 'total_messages_sent', 'total_messages_received', 'unique_customers', 'customer_satisfaction']));
      const whole = await report({ format: 'json', metrics: names, granularity: 'month', filters: { ...PERIOD, workflow_ids: [wf] } });
      expect(whole.report.metrics).toEqual(names);
      expect(whole.rows).toEqual([{ bucket: '2025-06-01T00:00:00.000Z', ...scalar }]);

      // Per day and channel, from the seed: Jun 1 whatsapp e1 (c1, rating 4) and e2 (c2, no answer); Jun 3 instagram e3 (c1, rating 2);
      // Jun 5 no channel e4 (c3), whatsapp e5 (c4) and e6 (c2, rating 5).
      const byChannel = await report({ format: 'json', metrics: ['unique_customers', 'customer_satisfaction', 'total_executions'], group_by: ['channel'], filters: { ...PERIOD, workflow_ids: [wf] } });
      expect(byChannel.rows.map((r) => [String(r.bucket).slice(0, 10), r.channel, r.total_executions, r.unique_customers, r.customer_satisfaction])).toEqual([
        ['2025-06-01', 'whatsapp', 2, 2, 4],
        ['2025-06-03', 'instagram', 1, 1, 2],
        ['2025-06-05', 'unknown', 1, 1, null],
        ['2025-06-05', 'whatsapp', 2, 2, 5],
      ]);
      // Every bucket of the period without grouping; over both workflows, a customer counts once per bucket (c9 ran wf2 on Jun 2 and Jun 6).
      const daily = await report({ format: 'json', metrics: ['unique_customers', 'customer_satisfaction'], filters: PERIOD });
      expect(daily.rows.map((r) => [String(r.bucket).slice(0, 10), r.unique_customers, r.customer_satisfaction])).toEqual([
        ['2025-06-01', 2, 4],
        ['2025-06-02', 1, null],
        ['2025-06-03', 1, 2],
        ['2025-06-04', 0, null],
        ['2025-06-05', 3, 5],
        ['2025-06-06', 1, null],
        ['2025-06-07', 0, null],
      ]);
      const byWorkflow = await report({ format: 'json', metrics: ['unique_customers'], granularity: 'month', group_by: ['workflow'], filters: PERIOD });
      expect(Object.fromEntries(byWorkflow.rows.map((r) => [r.workflow_id, r.unique_customers]))).toEqual({ [wf]: 4, [wf2]: 1 });
    });

    it('keeps the short names as aliases of the analytics names; the file uses the analytics names', async () => {
      const csv = await report({ metrics: ['messages_received', 'executions', 'success_rate', 'messages_sent'], granularity: 'month', filters: { ...PERIOD, workflow_ids: [wf] } });
      const [header, row] = csv.text.split('\r\n');
      expect(header).toBe('bucket,total_executions,success_rate,total_messages_sent,total_messages_received');
      expect(row).toBe('2025-06-01T00:00:00.000Z,6,0.6,3,2');
      // An alias and its name together are one column.
      const both = await report({ format: 'json', metrics: ['executions', 'total_executions'], granularity: 'month', filters: { ...PERIOD, workflow_ids: [wf] } });
      expect(both.rows).toEqual([{ bucket: '2025-06-01T00:00:00.000Z', total_executions: 6 }]);
      const all = await report({ format: 'json', granularity: 'month', filters: { ...PERIOD, workflow_ids: [wf] } });
      expect(Object.keys(all.rows[0])).toEqual(['bucket', 'total_executions', 'successful_executions', 'failed_executions', 'success_rate', 'average_duration_ms', 'total_messages_sent', 'total_messages_received', 'unique_customers', 'customer_satisfaction']);
      for (const metrics of [['channel_breakdown'], ['total_executions', 'bogus'], []]) {
        const res = await t.http.post('/v1/analytics/reports').set(org.auth('read_write')).send({ name: 'x', metrics });
        expect([res.status, res.body.error.code, res.body.error.field], JSON.stringify(metrics)).toEqual([400, 'INVALID_METRICS', 'metrics']);
      }
    });
  });

  describe('GET /v1/analytics/workflows/{id}/performance', () => {
    it('exact percentiles, throughput with the peak hour, error rates by code, nodes and channels', async () => {
      const res = await get(`/v1/analytics/workflows/${wf}/performance`, { ...PERIOD, include_nodes: 'true', include_channels: 'true' });
      expect(res.status).toBe(200);
      const p = res.body.data.performance;
      // Finished durations 1000, 2000, 3000, 4000, 6000: exact mean; the period is whole UTC days, so the
      // percentiles come from the duration histogram, within 0.9901 % of percentile_cont's 3000, 5600, 5920.
      expect(p.execution_time.average_ms).toBe(3200);
      for (const [name, exact] of [['median_ms', 3000], ['p95_ms', 5600], ['p99_ms', 5920]] as const) {
        expect(Math.abs(p.execution_time[name] - exact) / exact, name).toBeLessThanOrEqual(0.02 / 2.02);
      }
      // A period without a whole UTC day reads the executions: exact.
      const partial = (await get(`/v1/analytics/workflows/${wf}/performance`, { start_date: '2025-06-01T09:00:00Z', end_date: '2025-06-01T23:59:00Z' })).body.data.performance;
      // Durations 1000 and 3000.
      expect(partial.execution_time).toEqual({ average_ms: 2000, median_ms: 2000, p95_ms: 2900, p99_ms: 2980 });
      expect(p.throughput.executions_per_hour).toBeCloseTo(6 / 168, 12);
      expect(p.throughput).toMatchObject({ peak_executions_per_hour: 2, peak_hour: '09:00' });
      expect(p.error_rate).toEqual({ overall: 0.4, by_error_type: { NODE_FAILED: 0.2, CONVERSATION_TIMEOUT: 0.2 } });
      expect(p.node_performance).toEqual([
        { node_id: 'bye', type: 'message', execution_count: 4, success_rate: 0.75, average_duration_ms: 88, error_count: 1 },
        { node_id: 'survey', type: 'form', execution_count: 4, success_rate: 1, average_duration_ms: 500, error_count: 0 },
        { node_id: 'welcome', type: 'message', execution_count: 6, success_rate: 1, average_duration_ms: 100, error_count: 0 },
      ]);
      expect(p.channel_performance).toEqual({
        instagram: { executions: 1, success_rate: 1, average_duration_ms: 2000 },
        unknown: { executions: 1, success_rate: 0, average_duration_ms: 4000 },
        whatsapp: { executions: 4, success_rate: 2 / 3, average_duration_ms: 3333 },
      });
      // The peak hour is local: 09:00 UTC is 18:00 in Tokyo.
      const tokyo = (await get(`/v1/analytics/workflows/${wf}/performance`, { ...PERIOD, timezone: 'Asia/Tokyo' })).body.data.performance;
      expect(tokyo.throughput.peak_hour).toBe('18:00');
      expect(tokyo.node_performance).toBeUndefined();
      expect(tokyo.channel_performance).toBeUndefined();
    });

    it('null figures without finished executions', async () => {
      const p = (await get(`/v1/analytics/workflows/${wf}/performance`, { start_date: '2025-05-01', end_date: '2025-05-02' })).body.data.performance;
      expect(p.execution_time).toEqual({ average_ms: null, median_ms: null, p95_ms: null, p99_ms: null });
      expect(p.throughput).toEqual({ executions_per_hour: 0, peak_executions_per_hour: 0, peak_hour: null });
      expect(p.error_rate).toEqual({ overall: null, by_error_type: {} });
    });
  });

  describe('GET /v1/analytics/customers/engagement', () => {
    it('customers, sessions, satisfaction, NPS and channels', async () => {
      const res = await get('/v1/analytics/customers/engagement', PERIOD);
      expect(res.status).toBe(200);
      expect(res.body.data.engagement).toEqual({
        total_customers: 4,
        active_customers: 2,
        new_customers: 1,
        returning_customers: 1,
        // Sessions: c1 10 min (3 messages) and 0 (1); c2 29 min (2) and 0 (1).
        average_session_duration: (600_000 + 1_740_000) / 4,
        average_messages_per_session: 7 / 4,
        customer_satisfaction: 11 / 3,
        net_promoter_score: ((2 - 1) * 100) / 3, // 10 and 9 promote, 6 detracts
        engagement_by_channel: {
          whatsapp: { customers: 2, average_session_duration: (600_000 + 1_740_000) / 3, satisfaction: 4.5 },
          instagram: { customers: 1, average_session_duration: 0, satisfaction: 2 },
        },
      });
      // Halves: 1 and 1 active customers; 4 then 3 messages; ratings 4, 2 then 5.
      expect(res.body.data.trends).toEqual({ customer_growth: 'stable', engagement_trend: 'decreasing', satisfaction_trend: 'increasing' });
    });

    it('segments and channel filter', async () => {
      const fresh = (await get('/v1/analytics/customers/engagement', { ...PERIOD, customer_segment: 'new' })).body.data.engagement;
      expect(fresh).toMatchObject({
        total_customers: 3, active_customers: 1, new_customers: 1, returning_customers: 0, average_session_duration: 870_000, customer_satisfaction: 5, net_promoter_score: 100,
      });
      const back = (await get('/v1/analytics/customers/engagement', { ...PERIOD, customer_segment: 'returning' })).body.data.engagement;
      expect(back).toMatchObject({ total_customers: 1, active_customers: 1, new_customers: 0, returning_customers: 1, customer_satisfaction: 3, net_promoter_score: 0 });
      const insta = (await get('/v1/analytics/customers/engagement', { ...PERIOD, channel: 'instagram' })).body.data.engagement;
      expect(insta).toMatchObject({ total_customers: 1, active_customers: 1, average_session_duration: 0, customer_satisfaction: 2, net_promoter_score: -100 });
      const none = (await get('/v1/analytics/customers/engagement', { start_date: '2025-01-01', end_date: '2025-01-02' })).body.data;
      expect(none.engagement).toMatchObject({ active_customers: 0, average_session_duration: null, customer_satisfaction: null, net_promoter_score: null, engagement_by_channel: {} });
      const bad = await get('/v1/analytics/customers/engagement', { customer_segment: 'vip' });
      expect([bad.status, bad.body.error.code, bad.body.error.field]).toEqual([400, 'INVALID_REQUEST', 'customer_segment']);
      const zone = await get('/v1/analytics/customers/engagement', { timezone: 'Nowhere/City' });
      expect([zone.status, zone.body.error.field]).toEqual([400, 'timezone']);
    });
  });

  describe('GET /v1/analytics/customers/journey', () => {
    it('steps along the node order, completion and drop-offs with reasons', async () => {
      const res = await get('/v1/analytics/customers/journey', { ...PERIOD, journey_type: wf });
      expect(res.status).toBe(200);
      expect(res.body.data.journey).toEqual({
        workflow_id: wf,
        total_journeys: 6,
        completed_journeys: 3,
        completion_rate: 0.5,
        average_journey_duration: 3000, // (1000 + 2000 + 6000) / 3
        journey_steps: [
          { step: 1, name: 'welcome', customers: 6, completion_rate: 1, average_duration_ms: 100 },
          // e4 timed out and e5 waits here without a step row.
          { step: 2, name: 'survey', customers: 6, completion_rate: 4 / 6, average_duration_ms: 500 },
          { step: 3, name: 'bye', customers: 4, completion_rate: 0.75, average_duration_ms: 88 },
        ],
        drop_off_points: [
          { step: 2, name: 'survey', drop_off_count: 1, drop_off_rate: 1 / 6, common_reasons: ['no reply before the conversation expired'] },
          { step: 3, name: 'bye', drop_off_count: 1, drop_off_rate: 0.25, common_reasons: ['NODE_FAILED'] },
        ],
      });
      // `all` follows the most-executed workflow of the period; include_dropoffs=false leaves them out.
      const all = (await get('/v1/analytics/customers/journey', { ...PERIOD, include_dropoffs: 'false' })).body.data.journey;
      expect(all.workflow_id).toBe(wf);
      expect(all.drop_off_points).toBeUndefined();
      for (const id of [otherWf, 'nope']) {
        const r = await get('/v1/analytics/customers/journey', { ...PERIOD, journey_type: id });
        expect([r.status, r.body.error.code]).toEqual([404, 'WORKFLOW_NOT_FOUND']);
      }
    });
    it('a local period cuts UTC days: whole days from the rollups, the partial ends from the rows', async () => {
      // June 2..7 in Tokyo = 2025-06-01T15:00Z .. 2025-06-07T14:59:59.999Z: e1 (June 1, 10:00 UTC) is out.
      const tokyo = { start_date: '2025-06-02', end_date: '2025-06-07', timezone: 'Asia/Tokyo' };
      const res = await get('/v1/analytics/customers/journey', { ...tokyo, journey_type: 'all' });
      expect(res.status).toBe(200);
      expect(res.body.data.journey).toEqual({
        workflow_id: wf, // 5 executions against wf2's 2
        total_journeys: 5,
        completed_journeys: 2,
        completion_rate: 0.4,
        average_journey_duration: 4000, // (2000 + 6000) / 2
        journey_steps: [
          { step: 1, name: 'welcome', customers: 5, completion_rate: 1, average_duration_ms: 100 },
          // Steps of e2, e3, e6; e4 expired and e5 waits here.
          { step: 2, name: 'survey', customers: 5, completion_rate: 0.6, average_duration_ms: 500 },
          { step: 3, name: 'bye', customers: 3, completion_rate: 2 / 3, average_duration_ms: 83 }, // (50 + 100 + 100) / 3
        ],
        drop_off_points: [
          { step: 2, name: 'survey', drop_off_count: 1, drop_off_rate: 0.2, common_reasons: ['no reply before the conversation expired'] },
          { step: 3, name: 'bye', drop_off_count: 1, drop_off_rate: 1 / 3, common_reasons: ['NODE_FAILED'] },
        ],
      });
      const p = (await get(`/v1/analytics/workflows/${wf}/performance`, { ...tokyo, include_nodes: 'true' })).body.data.performance;
      expect(p.node_performance).toEqual([
        { node_id: 'bye', type: 'message', execution_count: 3, success_rate: 2 / 3, average_duration_ms: 83, error_count: 1 },
        { node_id: 'survey', type: 'form', execution_count: 3, success_rate: 1, average_duration_ms: 500, error_count: 0 },
        { node_id: 'welcome', type: 'message', execution_count: 5, success_rate: 1, average_duration_ms: 100, error_count: 0 },
      ]);
      // No execution in the period: no workflow.
      const empty = (await get('/v1/analytics/customers/journey', { start_date: '2025-01-01', end_date: '2025-01-31' })).body.data.journey;
      expect(empty).toEqual({
        workflow_id: null, total_journeys: 0, completed_journeys: 0, completion_rate: null, average_journey_duration: null, journey_steps: [], drop_off_points: [],
      });
    });
  });

  describe('GET /v1/analytics/workflows', () => {
    it('per-workflow summaries, sorted and paginated', async () => {
      const byExecutions = (await get('/v1/analytics/workflows', PERIOD)).body;
      expect(byExecutions.pagination).toEqual({ page: 1, limit: 20, total: 2, pages: 1 });
      expect(byExecutions.data.map((w: { workflow_id: string; total_executions: number }) => [w.workflow_id, w.total_executions])).toEqual([
        [wf, 6],
        [wf2, 2],
      ]);
      expect(byExecutions.data[1]).toMatchObject({ successful_executions: 2, failed_executions: 0, success_rate: 1, average_duration_ms: 10, unique_customers: 1 });
      const byRate = (await get('/v1/analytics/workflows', { ...PERIOD, sort_by: 'success_rate', order: 'asc' })).body;
      expect(byRate.data.map((w: { success_rate: number }) => w.success_rate)).toEqual([0.6, 1]);
      const page2 = (await get('/v1/analytics/workflows', { ...PERIOD, limit: 1, page: 2 })).body;
      expect(page2.pagination).toEqual({ page: 2, limit: 1, total: 2, pages: 2 });
      expect(page2.data.map((w: { workflow_id: string }) => w.workflow_id)).toEqual([wf2]);
      const empty = (await get('/v1/analytics/workflows', { start_date: '2025-01-01', end_date: '2025-01-02' })).body;
      expect(empty.data.every((w: { total_executions: number; success_rate: null }) => w.total_executions === 0 && w.success_rate === null)).toBe(true);
    });
  });
});

describe('analytics: realtime over the real inbound path', () => {
  let t: TestApp;
  let ds: DataSource;
  let org: TestOrganization;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS_ENABLED: 'false', APP_ROLE: 'all' });
    ds = t.app.get(DataSource);
    org = await createOrganization(t);
  });
  afterAll(() => t?.close());

  const get = (path: string, query: Record<string, unknown> = {}) => t.http.get(path).query(query).set(org.auth('read_only'));
  const send = (customer: string, message: string) =>
    t.http.post('/v1/messages').set(org.auth('read_write')).send({ channel: 'whatsapp', customer_id: customer, message });

  it('running executions, last-hour messages, system readings; then satisfaction and NPS from the answers', async () => {
    const created = await createWorkflow(t, org, { configuration: { nodes: [SURVEY_NODES[1]].map(({ next: _next, ...n }) => n) } });
    expect((await t.http.post(`/v1/workflows/${created.id}/activate`).set(org.auth('read_write'))).status).toBe(200);
    await createTrigger(t, org, created.id, 'message', { keywords: ['survey'] });

    const first = await send('rt-1', 'survey please');
    expect(first.status).toBe(202);
    const id = first.body.data.executions[0].workflow_execution_id;
    await waitFor('the first question', async () => (await ds.query('SELECT waiting FROM workflow_executions WHERE id = $1', [id]))[0].waiting);

    const live = (await get('/v1/analytics/realtime')).body.data;
    expect(live.current_metrics).toEqual({
      active_workflows: 1, active_executions: 1, messages_in_last_hour: 2, average_response_time_ms: null, system_health: 'healthy',
    });
    // The message that started the execution is not routed to it (no execution_id): the workflow counts its prompt only.
    expect(live.workflow_metrics).toEqual([
      { workflow_id: created.id, name: created.name, active_executions: 1, messages_in_last_hour: 1, average_response_time_ms: null },
    ]);
    expect(live.channel_metrics).toEqual({ whatsapp: { active_conversations: 1, messages_in_last_hour: 2 } });
    for (const k of ['cpu_usage', 'memory_usage'] as const) {
      expect(live.system_metrics[k]).toBeGreaterThanOrEqual(0);
      expect(live.system_metrics[k]).toBeLessThanOrEqual(1);
    }
    expect(live.system_metrics.memory_usage).toBeGreaterThan(0);
    expect(live.system_metrics.api_response_time_ms).toBeGreaterThan(0);
    expect(Date.parse(live.timestamp)).toBeGreaterThan(Date.now() - 60_000);

    const filtered = (await get('/v1/analytics/realtime', { channel: 'instagram', include_system: 'false' })).body.data;
    expect(filtered.current_metrics).toMatchObject({ active_executions: 0, messages_in_last_hour: 0 });
    expect(filtered.system_metrics).toBeUndefined();
    const otherWorkflow = (await get('/v1/analytics/realtime', { workflow_id: '00000000-0000-4000-8000-000000000000' })).body.data;
    expect(otherWorkflow.current_metrics).toMatchObject({ active_workflows: 0, active_executions: 0, messages_in_last_hour: 0 });

    await send('rt-1', '4');
    await waitFor('the second question', async () => (await ds.query(`SELECT count(*)::int AS n FROM messages WHERE execution_id = $1`, [id]))[0].n === 3);
    await send('rt-1', '10');
    const done = await waitFor('the end', async () => {
      const [e] = await ds.query('SELECT status, duration_ms FROM workflow_executions WHERE id = $1', [id]);
      return e.status !== 'running' ? e : undefined;
    });
    expect(done.status).toBe('success');

    const after = (await get('/v1/analytics/realtime')).body.data.current_metrics;
    expect(after).toMatchObject({ active_executions: 0, messages_in_last_hour: 5, average_response_time_ms: done.duration_ms });

    const engagement = (await get('/v1/analytics/customers/engagement', { timezone: 'Europe/Berlin' })).body.data.engagement;
    expect(engagement).toMatchObject({ total_customers: 1, active_customers: 1, new_customers: 1, customer_satisfaction: 4, net_promoter_score: 100 });

    // The active count is remembered at the organization's workflows version: a deactivation is seen at once.
    expect(after.active_workflows).toBe(1);
    expect((await get('/v1/analytics/realtime', { workflow_id: created.id })).body.data.current_metrics.active_workflows).toBe(1);
    expect((await t.http.post(`/v1/workflows/${created.id}/deactivate`).set(org.auth('read_write'))).status).toBe(200);
    expect((await get('/v1/analytics/realtime')).body.data.current_metrics.active_workflows).toBe(0);
    expect((await get('/v1/analytics/realtime', { workflow_id: created.id })).body.data.current_metrics.active_workflows).toBe(0);

    const zone = await get('/v1/analytics/realtime', { timezone: 'Atlantis/Capital' });
    expect([zone.status, zone.body.error.code, zone.body.error.field]).toEqual([400, 'INVALID_REQUEST', 'timezone']);
  });
});
