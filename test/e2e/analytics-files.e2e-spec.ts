import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from 'bull';
import { AnalyticsFilesProcessor } from '../../src/analytics/files/analytics-files.processor.js';
import { GENERATE_ATTEMPTS, type GenerateFileJob } from '../../src/analytics/files/analytics-files.queue.js';
import { insertCustomer, insertMessage, insertStep, insertWorkflowExecution } from '../factories/executions.js';
import { createWorkflow } from '../factories/workflows.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/** RFC 4180 parser for the tests: quoted fields, doubled quotes, CRLF records. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') record.push(field), (field = '');
    else if (c === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      (record = []), (field = ''), i++;
    } else field += c;
  }
  if (field !== '' || record.length > 0) throw new Error('CSV does not end with CRLF');
  return records;
}

const rowsOf = (records: string[][]) => records.slice(1).map((r) => Object.fromEntries(records[0].map((c, i) => [c, r[i]])));

describe('analytics reports and exports', () => {
  let t: TestApp;
  let ds: DataSource;
  let org: TestOrganization;
  let other: TestOrganization;
  let wf: string;
  let wf2: string;
  const day = (d: number, h = 12) => new Date(Date.UTC(2026, 9, d, h, 0, 0)).toISOString(); // October 2026

  async function finished(kind: 'reports' | 'exports', id: string) {
    return waitFor(`${kind} ${id} to finish`, async () => {
      const res = await t.http.get(`/v1/analytics/${kind}/${id}`).set(org.auth('read_only'));
      expect(res.status).toBe(200);
      return res.body.data.status === 'completed' || res.body.data.status === 'failed' ? res.body.data : undefined;
    }, 60_000, 100);
  }

  async function download(url: string, as = org) {
    const res = await t.http.get(new URL(url).pathname).set(as.auth('read_only')).buffer(true).parse((r, cb) => {
      const parts: Buffer[] = [];
      r.on('data', (p: Buffer) => parts.push(p));
      r.on('end', () => cb(null, Buffer.concat(parts)));
    });
    return res;
  }

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS_ENABLED: 'false' });
    ds = t.app.get(DataSource);
    org = await createOrganization(t);
    other = await createOrganization(t);
    wf = (await createWorkflow(t, org, { name: 'Orders' })).id;
    wf2 = (await createWorkflow(t, org, { name: 'Refunds' })).id;
    const alice = await insertCustomer(ds, { organizationId: org.id, externalId: '=HYPERLINK("http://evil")', channel: 'whatsapp', createdAt: day(1) });
    const bob = await insertCustomer(ds, { organizationId: org.id, externalId: 'bob, "the builder"', channel: 'instagram', createdAt: day(1) });
    // Orders: Oct 2 two successes (100, 300 ms) and a failure; Oct 3 one success at 23:30 UTC (Oct 4 in Tokyo).
    const e1 = await insertWorkflowExecution(ds, { organizationId: org.id, workflowId: wf, status: 'success', startedAt: day(2, 10), durationMs: 100, customerRef: '=HYPERLINK("http://evil")', customerId: alice, channel: 'whatsapp' });
    await insertWorkflowExecution(ds, { organizationId: org.id, workflowId: wf, status: 'success', startedAt: day(2, 11), durationMs: 300, customerRef: 'bob', customerId: bob, channel: 'instagram' });
    await insertWorkflowExecution(ds, { organizationId: org.id, workflowId: wf, status: 'failed', startedAt: day(2, 12), durationMs: 50, customerRef: 'bob', channel: 'whatsapp', error: { code: 'NODE_FAILED', message: 'x' } });
    await insertWorkflowExecution(ds, { organizationId: org.id, workflowId: wf, status: 'success', startedAt: new Date(Date.UTC(2026, 9, 3, 23, 30)).toISOString(), durationMs: 200, channel: 'whatsapp' });
    await insertWorkflowExecution(ds, { organizationId: org.id, workflowId: wf2, status: 'success', startedAt: day(5), durationMs: 1000, channel: 'whatsapp' });
    await insertMessage(ds, { organizationId: org.id, customerId: alice, direction: 'inbound', channel: 'whatsapp', content: '@SUM(A1:A9)', createdAt: day(2, 10), executionId: e1 });
    await insertMessage(ds, { organizationId: org.id, customerId: alice, direction: 'outbound', channel: 'whatsapp', content: 'line one\r\nline "two"', createdAt: day(2, 10), executionId: e1 });
    await insertMessage(ds, { organizationId: org.id, customerId: bob, direction: 'inbound', channel: 'instagram', content: 'no execution', createdAt: day(2, 11) });
    // Another organization's data, which must never show.
    const foreignWf = (await createWorkflow(t, other, { name: 'Foreign' })).id;
    await insertWorkflowExecution(ds, { organizationId: other.id, workflowId: foreignWf, status: 'success', startedAt: day(2, 10), durationMs: 5, channel: 'whatsapp' });
  }, 60_000);

  afterAll(async () => {
    await t?.close();
  });

  it('exports executions as RFC 4180 CSV with formula-like cells neutralised, only the organization\'s rows', async () => {
    const res = await t.http.post('/v1/analytics/export').set(org.auth('read_write'))
      .send({ data_type: 'executions', format: 'csv', start_date: '2026-10-01', end_date: '2026-10-31' });
    expect(res.status).toBe(202);
    expect(res.body.data).toMatchObject({ data_type: 'executions', format: 'csv', status: 'processing', row_count: null });
    // The URL from creation on (the specification's Export shape); the download answers 409 until the file is ready.
    expect(res.body.data.download_url).toBe(`${t.config.publicBaseUrl}/v1/analytics/exports/${res.body.data.export_id}/download`);
    expect(new Date(res.body.data.estimated_completion).getTime()).toBeGreaterThan(new Date(res.body.data.created_at).getTime());
    const done = await finished('exports', res.body.data.export_id);
    expect(done).toMatchObject({ status: 'completed', row_count: 5, error: null, download_url: res.body.data.download_url });
    expect(new Date(done.expires_at).getTime() - new Date(done.completed_at).getTime()).toBe(7 * 86_400_000);
    const file = await download(done.download_url);
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(file.headers['content-disposition']).toMatch(/^attachment; filename="export-executions-[0-9a-f-]+\.csv"$/);
    const records = parseCsv(file.body.toString('utf8'));
    expect(records[0]).toEqual(['id', 'workflow_id', 'workflow_version', 'trigger_id', 'status', 'channel', 'customer_id', 'started_at', 'completed_at', 'duration_ms', 'error_code']);
    const rows = rowsOf(records);
    expect(rows).toHaveLength(5);
    expect(new Set(rows.map((r) => r.workflow_id))).toEqual(new Set([wf, wf2]));
    expect(rows.find((r) => r.duration_ms === '100')?.customer_id).toBe(`'=HYPERLINK("http://evil")`);
    expect(rows.find((r) => r.status === 'failed')?.error_code).toBe('NODE_FAILED');
    // Within a workflow, in time order.
    const orders = rows.filter((r) => r.workflow_id === wf).map((r) => r.started_at);
    expect(orders).toEqual([...orders].sort());
  });

  it('filters by workflow and channel; NDJSON with metadata; messages keep line breaks and quotes', async () => {
    const res = await t.http.post('/v1/analytics/export').set(org.auth('read_write'))
      .send({ data_type: 'executions', format: 'json', start_date: '2026-10-01', end_date: '2026-10-31', filters: { workflow_ids: [wf], channels: ['whatsapp'] }, include_metadata: true });
    expect(res.status).toBe(202);
    const done = await finished('exports', res.body.data.export_id);
    expect(done.row_count).toBe(3);
    const file = await download(done.download_url);
    expect(file.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    const lines = file.body.toString('utf8').trimEnd().split('\n').map((l: string) => JSON.parse(l));
    expect(lines).toHaveLength(3);
    expect(lines.every((l: { workflow_id: string; channel: string }) => l.workflow_id === wf && l.channel === 'whatsapp')).toBe(true);
    expect(lines.find((l: { status: string }) => l.status === 'failed').error).toEqual({ code: 'NODE_FAILED', message: 'x' });

    const messages = await t.http.post('/v1/analytics/export').set(org.auth('read_write'))
      .send({ data_type: 'messages', start_date: '2026-10-01', end_date: '2026-10-31', filters: { workflow_ids: [wf] } });
    const m = await finished('exports', messages.body.data.export_id);
    expect(m.row_count).toBe(2);
    const rows = rowsOf(parseCsv((await download(m.download_url)).body.toString('utf8')));
    expect(rows.map((r) => r.content).sort()).toEqual([`'@SUM(A1:A9)`, 'line one\r\nline "two"']);

    const customers = await t.http.post('/v1/analytics/export').set(org.auth('read_write'))
      .send({ data_type: 'customers', start_date: '2026-10-01', end_date: '2026-10-31', filters: { channels: ['instagram'] } });
    const c = await finished('exports', customers.body.data.export_id);
    expect(rowsOf(parseCsv((await download(c.download_url)).body.toString('utf8'))).map((r) => r.customer_id)).toEqual(['bob, "the builder"']);

    const metrics = await t.http.post('/v1/analytics/export').set(org.auth('read_write'))
      .send({ data_type: 'workflow_metrics', start_date: '2026-10-01', end_date: '2026-10-31' });
    const wm = await finished('exports', metrics.body.data.export_id);
    const wmRows = rowsOf(parseCsv((await download(wm.download_url)).body.toString('utf8')));
    expect(Object.keys(wmRows[0])).toEqual([
      'workflow_id', 'workflow_name', 'date', 'total_executions', 'successful_executions', 'failed_executions', 'success_rate', 'average_duration_ms',
      'total_messages_sent', 'total_messages_received', 'unique_customers', 'customer_satisfaction',
    ]);
    expect(wmRows.find((r) => r.workflow_id === wf && r.date === '2026-10-02')).toMatchObject({
      total_executions: '3', successful_executions: '2', failed_executions: '1', average_duration_ms: '150', total_messages_sent: '1', total_messages_received: '1', unique_customers: '2', customer_satisfaction: '',
    });
    expect(Number(wmRows.find((r) => r.workflow_id === wf && r.date === '2026-10-02')?.success_rate)).toBeCloseTo(2 / 3, 10);
  });

  it('workflow_metrics carries unique_customers and customer_satisfaction per UTC day, as the workflow analytics and reports count them, per channel too', async () => {
    const survey = (await createWorkflow(t, org, {
      name: 'Survey',
      configuration: {
        nodes: [
          { id: 'ask', type: 'form', fields: [{ name: 'score', type: 'rating', required: false, label: 'Rate us 1-5' }], next: 'bye' },
          { id: 'bye', type: 'message', content: 'Thanks!' },
        ],
      },
    })).id;
    const at = (d: number, h: number, m = 0) => new Date(Date.UTC(2026, 10, d, h, m)).toISOString(); // November 2026
    const run = async (startedAt: string, channel: string | null, customerRef: string | null, score?: number, status: 'success' | 'failed' = 'success') => {
      const id = await insertWorkflowExecution(ds, { organizationId: org.id, workflowId: survey, status, startedAt, durationMs: 10, customerRef, channel });
      if (score !== undefined || status === 'success') {
        await insertStep(ds, id, { nodeId: 'ask', type: 'form', startedAt, durationMs: 5, output: { answers: score === undefined ? {} : { score } } });
      }
    };
    // Nov 10: c1 twice on whatsapp (ratings 4 and 2), c2 on instagram (5), c3 on instagram (failed, no answer).
    await run(at(10, 10), 'whatsapp', 'c1', 4);
    await run(at(10, 11), 'whatsapp', 'c1', 2);
    await run(at(10, 12), 'instagram', 'c2', 5);
    await run(at(10, 13), 'instagram', 'c3', undefined, 'failed');
    // Nov 11: c2 on whatsapp (form without a rating), on instagram at 23:30 UTC (3), and an execution with no channel or customer.
    await run(at(11, 9), 'whatsapp', 'c2');
    await run(at(11, 23, 30), 'instagram', 'c2', 3);
    await run(at(11, 10), null, null);

    const period = { start_date: '2026-11-10', end_date: '2026-11-11' };
    /** The export's rows as [date, total_executions, unique_customers, customer_satisfaction], numbers (null for no rating). */
    const exported = async (format: 'csv' | 'json', channels?: string[]) => {
      const res = await t.http.post('/v1/analytics/export').set(org.auth('read_write'))
        .send({ data_type: 'workflow_metrics', format, ...period, filters: { workflow_ids: [survey], ...(channels ? { channels } : {}) } });
      expect(res.status).toBe(202);
      const done = await finished('exports', res.body.data.export_id);
      expect(done.status).toBe('completed');
      const text = (await download(done.download_url)).body.toString('utf8');
      const rows: Record<string, unknown>[] = format === 'csv' ? rowsOf(parseCsv(text)) : text.trimEnd().split('\n').map((l: string) => JSON.parse(l));
      if (format === 'csv') expect(parseCsv(text)[0].slice(-3)).toEqual(['total_messages_received', 'unique_customers', 'customer_satisfaction']);
      else expect(Object.keys(rows[0]).slice(-3)).toEqual(['total_messages_received', 'unique_customers', 'customer_satisfaction']);
      const num = (v: unknown) => (v === null || v === '' ? null : Number(v));
      return rows.map((r) => [r.date, num(r.total_executions), num(r.unique_customers), num(r.customer_satisfaction)]);
    };

    const all = [['2026-11-10', 4, 3, 11 / 3], ['2026-11-11', 3, 1, 3]];
    expect(await exported('csv')).toEqual(all);
    expect(await exported('json')).toEqual(all);
    // The same figures as the workflow analytics of each day.
    for (const [date, , customers, satisfaction] of all) {
      const res = await t.http.get(`/v1/analytics/workflows/${survey}`).query({ start_date: date, end_date: date }).set(org.auth('read_only'));
      expect(res.status).toBe(200);
      expect([res.body.data.metrics.unique_customers, res.body.data.metrics.customer_satisfaction]).toEqual([customers, satisfaction]);
    }

    const whatsapp = [['2026-11-10', 2, 1, 3], ['2026-11-11', 1, 1, null]];
    const instagram = [['2026-11-10', 2, 2, 5], ['2026-11-11', 1, 1, 3]];
    expect(await exported('csv', ['whatsapp'])).toEqual(whatsapp);
    expect(await exported('json', ['whatsapp'])).toEqual(whatsapp);
    expect(await exported('json', ['instagram'])).toEqual(instagram);
    expect(await exported('csv', ['whatsapp', 'instagram'])).toEqual([['2026-11-10', 4, 3, 11 / 3], ['2026-11-11', 2, 1, 3]]);
    // The same figures as a report per channel and day.
    const report = await t.http.post('/v1/analytics/reports').set(org.auth('read_write')).send({
      name: 'Survey', format: 'json', granularity: 'day', group_by: ['channel'], metrics: ['total_executions', 'unique_customers', 'customer_satisfaction'],
      filters: { ...period, workflow_ids: [survey] },
    });
    expect(report.status).toBe(201);
    const rep = await finished('reports', report.body.data.report_id);
    const json = JSON.parse((await download(rep.download_url)).body.toString('utf8'));
    const perChannel = (channel: string) => json.rows.filter((r: { channel: string }) => r.channel === channel)
      .map((r: Record<string, unknown>) => [String(r.bucket).slice(0, 10), r.total_executions, r.unique_customers, r.customer_satisfaction]);
    expect(perChannel('whatsapp')).toEqual(whatsapp);
    expect(perChannel('instagram')).toEqual(instagram);
  });

  it('generates a CSV report whose figures equal the recorded rows, with every bucket present', async () => {
    const res = await t.http.post('/v1/analytics/reports').set(org.auth('read_write')).send({
      name: 'October', metrics: ['executions', 'success_rate', 'average_duration_ms'], filters: { start_date: '2026-10-01', end_date: '2026-10-07' }, granularity: 'day',
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ name: 'October', status: 'generating', format: 'csv', download_url: null, completed_at: null, expires_at: null });
    const done = await finished('reports', res.body.data.report_id);
    expect(done.status).toBe('completed');
    const rows = rowsOf(parseCsv((await download(done.download_url)).body.toString('utf8')));
    expect(rows.map((r) => r.bucket.slice(0, 10))).toEqual(['2026-10-01', '2026-10-02', '2026-10-03', '2026-10-04', '2026-10-05', '2026-10-06', '2026-10-07']);
    // `executions` is the alias of the analytics name total_executions, the column's name.
    expect(rows[0]).toEqual({ bucket: '2026-10-01T00:00:00.000Z', total_executions: '0', success_rate: '', average_duration_ms: '' });
    expect(rows[1]).toMatchObject({ total_executions: '3', average_duration_ms: '150' });
    expect(Number(rows[1].success_rate)).toBeCloseTo(2 / 3, 10);
    expect(rows[2]).toMatchObject({ total_executions: '1', success_rate: '1', average_duration_ms: '200' });
    expect(rows[4]).toMatchObject({ total_executions: '1', average_duration_ms: '1000' });
  });

  it('buckets in the report\'s timezone: 23:30 UTC on Oct 3 counts on Oct 4 in Tokyo; groups by workflow in JSON', async () => {
    const res = await t.http.post('/v1/analytics/reports').set(org.auth('read_write')).send({
      name: 'Tokyo', format: 'json', timezone: 'Asia/Tokyo', group_by: ['workflow'], filters: { start_date: '2026-10-01', end_date: '2026-10-07', workflow_ids: [wf] },
    });
    const done = await finished('reports', res.body.data.report_id);
    const file = await download(done.download_url);
    expect(file.headers['content-type']).toBe('application/json; charset=utf-8');
    const json = JSON.parse(file.body.toString('utf8'));
    expect(json.report).toMatchObject({ name: 'Tokyo', timezone: 'Asia/Tokyo', granularity: 'day', group_by: ['workflow'] });
    const byDay = Object.fromEntries(json.rows.map((r: { bucket: string; total_executions: number; workflow_name: string }) => [r.bucket, r]));
    // Tokyo midnight is 15:00 UTC the day before.
    expect(byDay['2026-10-01T15:00:00.000Z']).toMatchObject({ total_executions: 3, workflow_id: wf, workflow_name: 'Orders' });
    expect(byDay['2026-10-03T15:00:00.000Z']).toMatchObject({ total_executions: 1 });
    expect(json.rows).toHaveLength(2);
  });

  it('generates a real PDF with the report\'s name, a table and a chart', async () => {
    const res = await t.http.post('/v1/analytics/reports').set(org.auth('read_write')).send({
      name: 'Quarterly PDF review', format: 'pdf', filters: { start_date: '2026-10-01', end_date: '2026-10-10' },
    });
    const done = await finished('reports', res.body.data.report_id);
    const file = await download(done.download_url);
    expect(file.headers['content-type']).toBe('application/pdf');
    const bytes: Buffer = file.body;
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
    const pdf = await pdfjs.getDocument({ data: new Uint8Array(bytes), useSystemFonts: false, isEvalSupported: false }).promise;
    expect(pdf.numPages).toBeGreaterThanOrEqual(1);
    const page = await pdf.getPage(1);
    const text = (await page.getTextContent()).items.map((i) => ('str' in i ? i.str : '')).join(' ');
    expect(text).toContain('Quarterly PDF review');
    expect(text).toContain(org.name);
    expect(text).toContain('Success rate');
    const ops = await page.getOperatorList();
    expect(ops.fnArray.length).toBeGreaterThan(50);
  });

  it('answers each error with its code', async () => {
    const post = (path: string, body: object) => t.http.post(path).set(org.auth('read_write')).send(body);
    const r1 = await post('/v1/analytics/reports', { name: 'x', metrics: ['executions', 'bogus'] });
    expect(r1.status).toBe(400);
    expect(r1.body.error).toMatchObject({ code: 'INVALID_METRICS', field: 'metrics' });
    const r2 = await post('/v1/analytics/reports', { name: 'x', filters: { start_date: '2026-10-05', end_date: '2026-10-01' } });
    expect(r2.body.error).toMatchObject({ code: 'INVALID_DATE_RANGE', field: 'end_date' });
    const r3 = await post('/v1/analytics/export', { data_type: 'executions', start_date: '2024-01-01', end_date: '2025-06-01' });
    expect(r3.status).toBe(400);
    expect(r3.body.error.code).toBe('INVALID_DATE_RANGE');
    const r4 = await post('/v1/analytics/export', { data_type: 'executions', start_date: '2099-01-01', end_date: '2099-01-02' });
    expect(r4.body.error.code).toBe('INVALID_DATE_RANGE');
    const r5 = await post('/v1/analytics/reports', { name: 'x', granularity: 'fortnight' });
    expect(r5.status).toBe(422);
    expect(r5.body.error.code).toBe('INVALID_GRANULARITY');
    const r6 = await post('/v1/analytics/export', { data_type: 'executions', filters: { workflow_ids: [UNKNOWN_ID] } });
    expect(r6.status).toBe(404);
    expect(r6.body.error.code).toBe('WORKFLOW_NOT_FOUND');
    const r7 = await post('/v1/analytics/export', { data_type: 'customers', filters: { workflow_ids: [wf] } });
    expect(r7.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'filters.workflow_ids' });
    const r8 = await post('/v1/analytics/export', { data_type: 'everything' });
    expect(r8.status).toBe(400);
    expect(r8.body.error.field).toBe('data_type');
    const r9 = await post('/v1/analytics/reports', { name: 'x', timezone: 'Mars/Olympus' });
    expect(r9.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'timezone' });
    const r10 = await post('/v1/analytics/reports', { name: 'x', filters: { extra: 1 } });
    expect(r10.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'filters.extra' });
    const ro = await t.http.post('/v1/analytics/export').set(org.auth('read_only')).send({ data_type: 'executions' });
    expect(ro.status).toBe(403);

    for (const path of [`/v1/analytics/reports/${UNKNOWN_ID}`, '/v1/analytics/reports/not-a-uuid', `/v1/analytics/reports/${UNKNOWN_ID}/download`]) {
      const res = await t.http.get(path).set(org.auth('read_only'));
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('REPORT_NOT_FOUND');
    }
    const exp = await t.http.get(`/v1/analytics/exports/${UNKNOWN_ID}`).set(org.auth('read_only'));
    expect(exp.body.error.code).toBe('EXPORT_NOT_FOUND');
  });

  it('serves a file only to its organization, not before it is ready, and not after it expires', async () => {
    const res = await t.http.post('/v1/analytics/export').set(org.auth('read_write')).send({ data_type: 'customers' });
    const done = await finished('exports', res.body.data.export_id);
    const foreign = await download(done.download_url, other);
    expect(foreign.status).toBe(404);
    expect((await t.http.get(`/v1/analytics/exports/${done.export_id}`).set(other.auth('read_only'))).status).toBe(404);

    const [{ id: running }] = await ds.query(
      `INSERT INTO analytics_files (organization_id, kind, name, format, request, estimated_completion, expires_at)
       VALUES ($1, 'report', 'pending', 'csv', '{}', now(), now() + interval '1 day') RETURNING id`,
      [org.id],
    );
    const early = await t.http.get(`/v1/analytics/reports/${running}/download`).set(org.auth('read_only'));
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe('REPORT_NOT_READY');

    await ds.query(`UPDATE analytics_files SET expires_at = now() - interval '1 second' WHERE id = $1`, [done.export_id]);
    const late = await t.http.get(`/v1/analytics/exports/${done.export_id}/download`).set(org.auth('read_only'));
    expect(late.status).toBe(410);
    expect(late.body.error.code).toBe('EXPORT_EXPIRED');
    // The cleanup deletes expired files and their chunks.
    expect(await t.app.get(AnalyticsFilesProcessor).cleanup()).toBeGreaterThanOrEqual(1);
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM analytics_file_chunks WHERE file_id = $1`, [done.export_id]);
    expect(n).toBe(0);
    expect((await t.http.get(`/v1/analytics/exports/${done.export_id}`).set(org.auth('read_only'))).status).toBe(404);
  });

  it('an export still processing shows its download_url, whose download answers 409 EXPORT_NOT_READY; a report shows none until completed', async () => {
    const [{ id }] = await ds.query(
      `INSERT INTO analytics_files (organization_id, kind, data_type, format, request, estimated_completion, expires_at)
       VALUES ($1, 'export', 'executions', 'csv', $2, now() + interval '1 hour', now() + interval '7 days') RETURNING id`,
      [org.id, { start: day(1), end: day(3), workflow_ids: null, channels: null, include_metadata: false }],
    );
    const res = await t.http.get(`/v1/analytics/exports/${id}`).set(org.auth('read_only'));
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ export_id: id, status: 'processing', download_url: `${t.config.publicBaseUrl}/v1/analytics/exports/${id}/download` });
    const early = await t.http.get(new URL(res.body.data.download_url).pathname).set(org.auth('read_only'));
    expect([early.status, early.body.error.code]).toEqual([409, 'EXPORT_NOT_READY']);
    const report = await t.http.post('/v1/analytics/reports').set(org.auth('read_write')).send({ name: 'Pending' });
    expect(report.body.data.download_url).toBeNull();
  });

  it('a report whose generation fails on its last attempt is failed with REPORT_GENERATION_FAILED and a message without internals', async () => {
    // A zone PostgreSQL does not know, stored past the request's check: the job's first statement fails.
    const [{ id }] = await ds.query(
      `INSERT INTO analytics_files (organization_id, kind, name, format, request, estimated_completion, expires_at)
       VALUES ($1, 'report', 'Doomed', 'csv', $2, now(), now() + interval '7 days') RETURNING id`,
      [org.id, { start: day(1), end: day(3), timezone: 'Mars/Olympus_Mons', granularity: 'day', group_by: [], metrics: [], workflow_ids: null }],
    );
    const processor = t.app.get(AnalyticsFilesProcessor);
    const job = (attemptsMade: number) => ({ data: { fileId: id }, attemptsMade, opts: { attempts: GENERATE_ATTEMPTS } }) as unknown as Job<GenerateFileJob>;
    // An attempt before the last fails the job (Bull retries it) and leaves the report generating.
    await expect(processor.generate(job(0))).rejects.toThrow();
    expect((await t.http.get(`/v1/analytics/reports/${id}`).set(org.auth('read_only'))).body.data.status).toBe('generating');
    await expect(processor.generate(job(GENERATE_ATTEMPTS - 1))).rejects.toThrow();
    const res = await t.http.get(`/v1/analytics/reports/${id}`).set(org.auth('read_only'));
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('failed');
    expect(res.body.data.error).toEqual({ code: 'REPORT_GENERATION_FAILED', message: 'The report could not be generated; request it again' });
    expect(res.body.data.download_url ?? null).toBeNull();
    expect((await t.http.get(`/v1/analytics/reports/${id}/download`).set(org.auth('read_only'))).status).toBe(409);
  });

  it('streams a 200,000-row export while the process RSS stays within +64 MB', async () => {
    const big = (await createWorkflow(t, org, { name: 'Big' })).id;
    await ds.query(
      `INSERT INTO workflow_executions (organization_id, workflow_id, workflow_version, customer_ref, channel, status, input, output, started_at, completed_at, duration_ms)
       SELECT $1, $2, 1, 'customer-' || (i % 5000), 'whatsapp', 'success', jsonb_build_object('message', repeat('x', 200), 'i', i), '{"ok":true}',
              timestamptz '2026-09-01' + i * interval '1 second', timestamptz '2026-09-01' + i * interval '1 second' + interval '120 ms', 120
         FROM generate_series(1, 200000) i`,
      [org.id, big],
    );
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    try {
      const res = await t.http.post('/v1/analytics/export').set(org.auth('read_write'))
        .send({ data_type: 'executions', start_date: '2026-09-01', end_date: '2026-09-30', filters: { workflow_ids: [big] }, include_metadata: true });
      const done = await finished('exports', res.body.data.export_id);
      expect(done.row_count).toBe(200_000);
      const [{ bytes }] = await ds.query(`SELECT sum(length(data))::float8 AS bytes FROM analytics_file_chunks WHERE file_id = $1`, [done.export_id]);
      expect(bytes).toBeGreaterThan(200_000 * 300);
    } finally {
      clearInterval(sampler);
    }
    expect(peak - before).toBeLessThan(64 * 1024 * 1024);
  }, 120_000);
});
