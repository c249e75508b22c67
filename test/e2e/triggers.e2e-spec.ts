import { getQueueToken } from '@nestjs/bull';
import type { Job, JobInformation, Queue } from 'bull';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHttpApp } from '../../src/app.factory.js';
import { SchedulesProcessor } from '../../src/triggers/schedules.processor.js';
import { TriggerSchedulesService } from '../../src/triggers/trigger-schedules.service.js';
import { SCHEDULES_QUEUE, ScheduleJobs } from '../../src/triggers/triggers.queue.js';
import { createWorkflow } from '../factories/workflows.js';
import { createOrganization, startTestApp, testConfig, type TestApp, type TestOrganization } from '../utils/test-app.js';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TRIGGER_KEYS = [
  'activated_at', 'channel', 'configuration', 'created_at', 'deactivated_at', 'execution_count', 'id', 'last_triggered', 'name',
  'paused_at', 'resumed_at', 'status', 'type', 'updated_at', 'workflow_id',
];
/** Far from any test run, so the schedules processor never ticks while these tests look at the queue. */
const QUIET_CRON = '30 3 1 1 *';
const WEBHOOK_SECRET = 'whsec-e2e-0123456789-abcdefghij';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let counter = 0;
const uniqueName = (prefix = 'Trigger') => `${prefix} ${++counter}-${Date.now()}`;

const bodies = {
  message: (workflowId: string, overrides: Record<string, unknown> = {}) => ({
    name: uniqueName('Message'),
    type: 'message',
    workflow_id: workflowId,
    channel: 'whatsapp',
    configuration: { keywords: ['help', 'support'] },
    ...overrides,
  }),
  schedule: (workflowId: string, overrides: Record<string, unknown> = {}) => ({
    name: uniqueName('Schedule'),
    type: 'schedule',
    workflow_id: workflowId,
    configuration: { cron_expression: QUIET_CRON, timezone: 'Europe/Paris' },
    ...overrides,
  }),
  webhook: (workflowId: string, overrides: Record<string, unknown> = {}) => ({
    name: uniqueName('Webhook'),
    type: 'webhook',
    workflow_id: workflowId,
    configuration: { method: 'POST', headers: { 'X-Source': 'crm' }, secret: WEBHOOK_SECRET },
    ...overrides,
  }),
  api: (workflowId: string, overrides: Record<string, unknown> = {}) => ({
    name: uniqueName('Api'),
    type: 'api',
    workflow_id: workflowId,
    configuration: { rate_limit: 50 },
    ...overrides,
  }),
};

describe('triggers', () => {
  let t: TestApp;
  let org: TestOrganization;
  let other: TestOrganization;
  let workflowId: string;
  let otherWorkflowId: string;

  beforeAll(async () => {
    // These tests create far more triggers per key than the hourly create/update allowance.
    t = await startTestApp({ RATE_LIMITS_ENABLED: 'false' });
    org = await createOrganization(t);
    other = await createOrganization(t);
    workflowId = (await createWorkflow(t, org)).id;
    otherWorkflowId = (await createWorkflow(t, other)).id;
  });
  afterAll(() => t?.close());

  const create = (body: Record<string, unknown>, who = org) => t.http.post('/v1/triggers').set(who.auth('read_write')).send(body);
  const created = async (body: Record<string, unknown>, who = org) => {
    const res = await create(body, who);
    if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data as { id: string; name: string; status: string; configuration: Record<string, unknown>; [key: string]: unknown };
  };
  const get = (id: string, who = org) => t.http.get(`/v1/triggers/${id}`).set(who.auth('read_only'));
  const update = (id: string, body: Record<string, unknown>, who = org) => t.http.put(`/v1/triggers/${id}`).set(who.auth('read_write')).send(body);
  const act = (id: string, action: string, who = org) => t.http.post(`/v1/triggers/${id}/${action}`).set(who.auth('read_write'));
  const remove = (id: string, who = org) => t.http.delete(`/v1/triggers/${id}`).set(who.auth('full_access'));

  describe('authentication and permission levels', () => {
    it('answers 401 MISSING_AUTHENTICATION on every trigger route without a credential', async () => {
      const { id } = await created(bodies.message(workflowId));
      const responses = [
        await t.http.get('/v1/triggers'),
        await t.http.get(`/v1/triggers/${id}`),
        await t.http.post('/v1/triggers').send(bodies.message(workflowId)),
        await t.http.put(`/v1/triggers/${id}`).send({ name: 'changed' }),
        await t.http.delete(`/v1/triggers/${id}`),
        ...(await Promise.all(['activate', 'deactivate', 'pause', 'resume'].map((a) => t.http.post(`/v1/triggers/${id}/${a}`)))),
      ];
      for (const res of responses) {
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('MISSING_AUTHENTICATION');
      }
      expect((await get(id)).body.data.status).toBe('active');
    });

    it('lets read_only read but answers 403 INSUFFICIENT_PERMISSIONS on every write', async () => {
      const { id } = await created(bodies.message(workflowId));
      expect((await t.http.get('/v1/triggers').set(org.auth('read_only'))).status).toBe(200);
      const before = (await get(id)).body.data;
      const ro = org.auth('read_only');
      const responses = [
        await t.http.post('/v1/triggers').set(ro).send(bodies.message(workflowId)),
        await t.http.put(`/v1/triggers/${id}`).set(ro).send({ name: 'changed' }),
        await t.http.delete(`/v1/triggers/${id}`).set(ro),
        await t.http.post(`/v1/triggers/${id}/activate`).set(ro),
        await t.http.post(`/v1/triggers/${id}/deactivate`).set(ro),
        await t.http.post(`/v1/triggers/${id}/pause`).set(ro),
        await t.http.post(`/v1/triggers/${id}/resume`).set(ro),
      ];
      for (const res of responses) {
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('INSUFFICIENT_PERMISSIONS');
      }
      expect((await get(id)).body.data).toEqual(before);
    });

    it('lets read_write create, update and change state, but answers 403 on delete', async () => {
      const res = await create(bodies.message(workflowId));
      expect(res.status).toBe(201);
      const { id } = res.body.data;
      expect((await update(id, { name: uniqueName() })).status).toBe(200);
      for (const action of ['pause', 'resume', 'deactivate', 'activate']) {
        expect((await act(id, action)).status, action).toBe(200);
      }
      const del = await t.http.delete(`/v1/triggers/${id}`).set(org.auth('read_write'));
      expect(del.status).toBe(403);
      expect(del.body.error.code).toBe('INSUFFICIENT_PERMISSIONS');
      expect((await get(id)).status).toBe(200);
    });

    it('lets full_access delete', async () => {
      const { id } = await created(bodies.message(workflowId));
      const del = await remove(id);
      expect(del.status).toBe(200);
      expect(del.body).toEqual({ message: 'Trigger deleted' });
      expect((await get(id)).status).toBe(404);
    });
  });

  describe('POST /v1/triggers', () => {
    it('creates an active message trigger with the configuration normalised and defaults filled in', async () => {
      const body = bodies.message(workflowId, { configuration: { keywords: [' help ', 'refund'], language: 'en' } });
      const res = await create(body);
      expect(res.status).toBe(201);
      expect(Object.keys(res.body)).toEqual(['data']);
      expect(Object.keys(res.body.data).sort()).toEqual(TRIGGER_KEYS);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(UUID),
        name: body.name,
        type: 'message',
        status: 'active',
        workflow_id: workflowId,
        channel: 'whatsapp',
        configuration: { keywords: ['help', 'refund'], case_sensitive: false, exact_match: false, language: 'en', channel: null },
        created_at: expect.any(String),
        updated_at: expect.any(String),
        execution_count: 0,
        last_triggered: null,
        activated_at: expect.any(String),
        deactivated_at: null,
        paused_at: null,
        resumed_at: null,
      });
      expect(new Date(res.body.data.created_at).toISOString()).toBe(res.body.data.created_at);
      expect((await get(res.body.data.id)).body.data).toEqual(res.body.data);
    });

    it('creates a schedule trigger', async () => {
      const res = await create(bodies.schedule(workflowId, { configuration: { cron_expression: '0  9 * * 1-5', start_date: '2030-01-01', end_date: '2031-01-01T00:00:00+01:00' } }));
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ type: 'schedule', status: 'active', channel: null });
      expect(res.body.data.configuration).toEqual({
        cron_expression: '0 9 * * 1-5',
        timezone: 'UTC',
        start_date: '2030-01-01T00:00:00.000Z',
        end_date: '2030-12-31T23:00:00.000Z',
      });
    });

    it('creates a webhook trigger whose configuration shows its URL and secret', async () => {
      const res = await create(bodies.webhook(workflowId));
      expect(res.status).toBe(201);
      const { id } = res.body.data;
      expect(res.body.data.configuration).toEqual({
        url: `${t.config.publicBaseUrl}/v1/hooks/${id}`,
        secret: WEBHOOK_SECRET,
        method: 'POST',
        headers: { 'x-source': 'crm' },
      });
      const bare = await created(bodies.webhook(workflowId, { configuration: {} }));
      expect(bare.configuration).toEqual({ url: `${t.config.publicBaseUrl}/v1/hooks/${bare.id}`, secret: null, method: 'POST', headers: {} });
    });

    it('creates an api trigger whose configuration shows its endpoint', async () => {
      const res = await create(bodies.api(workflowId));
      expect(res.status).toBe(201);
      expect(res.body.data.configuration).toEqual({ endpoint: `/v1/triggers/${res.body.data.id}/fire`, authentication: 'any', rate_limit: 50 });
      expect((await created(bodies.api(workflowId, { configuration: {} }))).configuration).toMatchObject({ rate_limit: 100, authentication: 'any' });
    });

    it('answers 400 MISSING_REQUIRED_FIELD or INVALID_REQUEST with the field for bad bodies', async () => {
      const valid = bodies.message(workflowId);
      const without = (key: string) => Object.fromEntries(Object.entries(valid).filter(([k]) => k !== key));
      const cases: [Record<string, unknown>, string, string][] = [
        [without('name'), 'MISSING_REQUIRED_FIELD', 'name'],
        [without('type'), 'MISSING_REQUIRED_FIELD', 'type'],
        [without('workflow_id'), 'MISSING_REQUIRED_FIELD', 'workflow_id'],
        [without('configuration'), 'MISSING_REQUIRED_FIELD', 'configuration'],
        [{ ...valid, name: null }, 'MISSING_REQUIRED_FIELD', 'name'],
        [{ ...valid, name: '   ' }, 'INVALID_REQUEST', 'name'],
        [{ ...valid, name: 'x'.repeat(201) }, 'INVALID_REQUEST', 'name'],
        [{ ...valid, type: 'sms' }, 'INVALID_REQUEST', 'type'],
        [{ ...valid, workflow_id: 42 }, 'INVALID_REQUEST', 'workflow_id'],
        [{ ...valid, channel: 'sms' }, 'INVALID_REQUEST', 'channel'],
        [{ ...valid, configuration: ['help'] }, 'INVALID_REQUEST', 'configuration'],
        [{ ...valid, configuration: 'help' }, 'INVALID_REQUEST', 'configuration'],
        [{ ...valid, status: 'paused' }, 'INVALID_REQUEST', 'status'],
      ];
      for (const [body, code, field] of cases) {
        const res = await create(body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.error, JSON.stringify(body)).toMatchObject({ code, field });
      }
    });

    it('answers 404 WORKFLOW_NOT_FOUND for an unknown, malformed or foreign workflow_id', async () => {
      for (const id of [UNKNOWN_ID, 'not-a-uuid', otherWorkflowId]) {
        const res = await create(bodies.message(id));
        expect(res.status, id).toBe(404);
        expect(res.body.error.code).toBe('WORKFLOW_NOT_FOUND');
      }
    });

    it('answers 409 TRIGGER_ALREADY_EXISTS for a name used in the organization, not in another one', async () => {
      const body = bodies.message(workflowId);
      expect((await create(body)).status).toBe(201);
      const again = await create({ ...bodies.api(workflowId), name: body.name });
      expect(again.status).toBe(409);
      expect(again.body.error).toMatchObject({ code: 'TRIGGER_ALREADY_EXISTS', field: 'name' });
      expect((await create({ ...body, workflow_id: otherWorkflowId }, other)).status).toBe(201);
    });

    it('answers 400 INVALID_TRIGGER_CONFIG with the field for configurations breaking their type\'s rules', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [bodies.message(workflowId, { configuration: { keywords: [] } }), 'configuration.keywords'],
        [bodies.message(workflowId, { configuration: {} }), 'configuration.keywords'],
        [bodies.message(workflowId, { configuration: { keywords: ['ok', ''] } }), 'configuration.keywords[1]'],
        [bodies.message(workflowId, { configuration: { keywords: ['a'], case_sensitive: 'no' } }), 'configuration.case_sensitive'],
        [bodies.message(workflowId, { configuration: { keywords: ['a'], language: 'English' } }), 'configuration.language'],
        [bodies.message(workflowId, { configuration: { keywords: ['a'], channel: 'sms' } }), 'configuration.channel'],
        [bodies.message(workflowId, { configuration: { keywords: ['a'], priority: 1 } }), 'configuration.priority'],
        [bodies.schedule(workflowId, { configuration: { cron_expression: QUIET_CRON, timezone: 'Mars/Olympus' } }), 'configuration.timezone'],
        [bodies.schedule(workflowId, { configuration: { cron_expression: QUIET_CRON, timezone: '+05:00' } }), 'configuration.timezone'],
        [
          bodies.schedule(workflowId, { configuration: { cron_expression: QUIET_CRON, start_date: '2030-06-01T00:00:00Z', end_date: '2030-05-01T00:00:00Z' } }),
          'configuration.end_date',
        ],
        [bodies.schedule(workflowId, { configuration: { cron_expression: QUIET_CRON, start_date: 'next monday' } }), 'configuration.start_date'],
        [bodies.schedule(workflowId, { configuration: { timezone: 'UTC' } }), 'configuration.cron_expression'],
        [bodies.webhook(workflowId, { configuration: { method: 'DELETE' } }), 'configuration.method'],
        [bodies.webhook(workflowId, { configuration: { url: 'https://example.com/hook' } }), 'configuration.url'],
        [bodies.webhook(workflowId, { configuration: { secret: 'too-short' } }), 'configuration.secret'],
        [bodies.webhook(workflowId, { configuration: { headers: { 'Bad Header': 'x' } } }), 'configuration.headers.Bad Header'],
        [bodies.api(workflowId, { configuration: { rate_limit: 0 } }), 'configuration.rate_limit'],
        [bodies.api(workflowId, { configuration: { rate_limit: 2.5 } }), 'configuration.rate_limit'],
        [bodies.api(workflowId, { configuration: { authentication: 'basic' } }), 'configuration.authentication'],
        [bodies.api(workflowId, { configuration: { endpoint: '/elsewhere' } }), 'configuration.endpoint'],
      ];
      for (const [body, field] of cases) {
        const res = await create(body);
        expect(res.status, JSON.stringify(body.configuration)).toBe(400);
        expect(res.body.error, JSON.stringify(body.configuration)).toMatchObject({ code: 'INVALID_TRIGGER_CONFIG', field });
      }
    });

    it('answers 422 INVALID_CRON_EXPRESSION for cron expressions that do not parse', async () => {
      for (const cron of ['61 * * * *', 'not a cron', '* * *', '0 0 30 2 *']) {
        const res = await create(bodies.schedule(workflowId, { configuration: { cron_expression: cron } }));
        expect(res.status, cron).toBe(422);
        expect(res.body.error, cron).toMatchObject({ code: 'INVALID_CRON_EXPRESSION', field: 'configuration.cron_expression' });
      }
    });

    it('creates nothing when refusing', async () => {
      const name = uniqueName('Refused');
      expect((await create(bodies.message(workflowId, { name, configuration: { keywords: [] } }))).status).toBe(400);
      expect((await create(bodies.message(UNKNOWN_ID, { name }))).status).toBe(404);
      expect((await create(bodies.message(workflowId, { name }))).status).toBe(201);
    });
  });

  describe('GET /v1/triggers/{id}', () => {
    it('answers 404 TRIGGER_NOT_FOUND for unknown, malformed and other organizations\' ids', async () => {
      const { id } = await created(bodies.message(workflowId));
      for (const [target, who] of [[UNKNOWN_ID, org], ['not-a-uuid', org], [id, other]] as const) {
        const res = await get(target, who);
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('TRIGGER_NOT_FOUND');
      }
    });
  });

  describe('GET /v1/triggers', () => {
    let lists: TestOrganization;
    const ids: Record<string, string> = {};
    let wf1: string;
    let wf2: string;

    const list = (query: Record<string, string | number> = {}) => t.http.get('/v1/triggers').query(query).set(lists.auth('read_only'));
    const names = (res: { body: { data: { name: string }[] } }) => res.body.data.map((x) => x.name);

    beforeAll(async () => {
      lists = await createOrganization(t);
      wf1 = (await createWorkflow(t, lists)).id;
      wf2 = (await createWorkflow(t, lists)).id;
      // Created in this order, so newest first is the reverse.
      const rows = [
        bodies.message(wf1, { name: 'm1' }),
        bodies.schedule(wf1, { name: 's1' }),
        bodies.webhook(wf2, { name: 'w1' }),
        bodies.api(wf2, { name: 'a1' }),
        bodies.message(wf2, { name: 'm2' }),
      ];
      for (const row of rows) ids[row.name] = (await created(row, lists)).id;
      await act(ids.s1, 'pause', lists).expect(200);
      await act(ids.a1, 'deactivate', lists).expect(200);
    });

    it('lists the organization\'s triggers newest first, with pagination', async () => {
      const res = await list();
      expect(res.status).toBe(200);
      expect(names(res)).toEqual(['m2', 'a1', 'w1', 's1', 'm1']);
      expect(res.body.pagination).toEqual({ page: 1, limit: 20, total: 5, pages: 1 });
      for (const item of res.body.data) expect(Object.keys(item).sort()).toEqual(TRIGGER_KEYS);
    });

    it('leaves webhook secrets out of list items', async () => {
      const webhook = (await list({ type: 'webhook' })).body.data[0];
      expect(webhook.configuration).toEqual({ url: `${t.config.publicBaseUrl}/v1/hooks/${ids.w1}`, method: 'POST', headers: { 'x-source': 'crm' } });
      expect((await get(ids.w1, lists)).body.data.configuration.secret).toBe(WEBHOOK_SECRET);
    });

    it('pages with page and limit', async () => {
      const first = await list({ limit: 2 });
      expect(names(first)).toEqual(['m2', 'a1']);
      expect(first.body.pagination).toEqual({ page: 1, limit: 2, total: 5, pages: 3 });
      expect(names(await list({ limit: 2, page: 3 }))).toEqual(['m1']);
      expect((await list({ limit: 2, page: 4 })).body).toEqual({ data: [], pagination: { page: 4, limit: 2, total: 5, pages: 3 } });
    });

    it('filters by type, status and workflow_id, combined', async () => {
      expect(names(await list({ type: 'message' }))).toEqual(['m2', 'm1']);
      expect(names(await list({ status: 'active' }))).toEqual(['m2', 'w1', 'm1']);
      expect(names(await list({ status: 'paused' }))).toEqual(['s1']);
      expect(names(await list({ status: 'inactive' }))).toEqual(['a1']);
      expect(names(await list({ workflow_id: wf1 }))).toEqual(['s1', 'm1']);
      const combined = await list({ workflow_id: wf2, type: 'message', status: 'active' });
      expect(names(combined)).toEqual(['m2']);
      expect(combined.body.pagination.total).toBe(1);
      expect(names(await list({ workflow_id: UNKNOWN_ID }))).toEqual([]);
    });

    it('shows only the caller\'s organization\'s triggers', async () => {
      const res = await t.http.get('/v1/triggers').query({ workflow_id: wf1 }).set(org.auth('read_only'));
      expect(res.body.data).toEqual([]);
    });

    it('answers 400 INVALID_REQUEST with the field for bad page, limit and filters', async () => {
      const cases: [Record<string, string | number>, string][] = [
        [{ page: 0 }, 'page'],
        [{ limit: 101 }, 'limit'],
        [{ type: 'sms' }, 'type'],
        [{ status: 'draft' }, 'status'],
        [{ workflow_id: 'abc' }, 'workflow_id'],
        [{ colour: 'red' }, 'colour'],
      ];
      for (const [query, field] of cases) {
        const res = await list(query);
        expect(res.status, JSON.stringify(query)).toBe(400);
        expect(res.body.error, JSON.stringify(query)).toMatchObject({ code: 'INVALID_REQUEST', field });
      }
    });
  });

  describe('PUT /v1/triggers/{id}', () => {
    it('updates any subset and keeps omitted fields', async () => {
      const trigger = await created(bodies.message(workflowId));
      await pause(5);
      const name = uniqueName('Renamed');
      const renamed = await update(trigger.id, { name });
      expect(renamed.status).toBe(200);
      expect(renamed.body.data).toMatchObject({ name, channel: 'whatsapp', configuration: trigger.configuration, status: 'active' });
      expect(renamed.body.data.updated_at > (trigger.updated_at as string)).toBe(true);

      const reconfigured = await update(trigger.id, { configuration: { keywords: ['order'], exact_match: true }, channel: 'instagram' });
      expect(reconfigured.status).toBe(200);
      expect(reconfigured.body.data).toMatchObject({
        name,
        channel: 'instagram',
        configuration: { keywords: ['order'], case_sensitive: false, exact_match: true, language: null, channel: null },
      });
      expect((await update(trigger.id, { channel: null })).body.data.channel).toBeNull();
      expect((await get(trigger.id)).body.data).toMatchObject({ name, channel: null, configuration: { keywords: ['order'] } });
      expect((await update(trigger.id, {})).status).toBe(200);
    });

    it('keeps the status', async () => {
      const { id } = await created(bodies.message(workflowId));
      await act(id, 'pause').expect(200);
      const res = await update(id, { configuration: { keywords: ['still paused'] } });
      expect(res.body.data.status).toBe('paused');
    });

    it('answers 400 INVALID_REQUEST for type and workflow_id, which cannot change', async () => {
      const { id } = await created(bodies.message(workflowId));
      const other = await createWorkflow(t, org);
      for (const [body, field] of [
        [{ type: 'api' }, 'type'],
        [{ type: 'message' }, 'type'],
        [{ workflow_id: other.id }, 'workflow_id'],
        [{ name: 'x', status: 'paused' }, 'status'],
      ] as const) {
        const res = await update(id, body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.error, JSON.stringify(body)).toMatchObject({ code: 'INVALID_REQUEST', field });
      }
      expect((await get(id)).body.data).toMatchObject({ type: 'message', workflow_id: workflowId });
    });

    it('validates the configuration against the trigger\'s type', async () => {
      const message = await created(bodies.message(workflowId));
      const empty = await update(message.id, { configuration: { keywords: [] } });
      expect(empty.status).toBe(400);
      expect(empty.body.error).toMatchObject({ code: 'INVALID_TRIGGER_CONFIG', field: 'configuration.keywords' });
      const foreignKey = await update(message.id, { configuration: { cron_expression: QUIET_CRON } });
      expect(foreignKey.body.error).toMatchObject({ code: 'INVALID_TRIGGER_CONFIG', field: 'configuration.cron_expression' });

      const schedule = await created(bodies.schedule(workflowId));
      const cron = await update(schedule.id, { configuration: { cron_expression: '61 * * * *' } });
      expect(cron.status).toBe(422);
      expect(cron.body.error).toMatchObject({ code: 'INVALID_CRON_EXPRESSION', field: 'configuration.cron_expression' });
      const zone = await update(schedule.id, { configuration: { cron_expression: QUIET_CRON, timezone: 'Nowhere/City' } });
      expect(zone.body.error).toMatchObject({ code: 'INVALID_TRIGGER_CONFIG', field: 'configuration.timezone' });
      expect((await get(schedule.id)).body.data.configuration).toEqual(schedule.configuration);

      const bad = await update(message.id, { name: '  ' });
      expect(bad.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'name' });
      // Neither can be removed: null is a missing value, as for workflows.
      expect((await update(message.id, { configuration: null })).body.error).toMatchObject({ code: 'MISSING_REQUIRED_FIELD', field: 'configuration' });
      expect((await update(message.id, { name: null })).body.error).toMatchObject({ code: 'MISSING_REQUIRED_FIELD', field: 'name' });
      expect((await update(message.id, { configuration: 'x' })).body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'configuration' });
    });

    it('answers 409 TRIGGER_ALREADY_EXISTS when renaming onto another trigger\'s name', async () => {
      const first = await created(bodies.message(workflowId));
      const second = await created(bodies.message(workflowId));
      const res = await update(second.id, { name: first.name });
      expect(res.status).toBe(409);
      expect(res.body.error).toMatchObject({ code: 'TRIGGER_ALREADY_EXISTS', field: 'name' });
      expect((await update(first.id, { name: first.name })).status).toBe(200);
    });

    it('answers 404 TRIGGER_NOT_FOUND for unknown, malformed and other organizations\' ids', async () => {
      const { id } = await created(bodies.message(workflowId));
      for (const [target, who] of [[UNKNOWN_ID, org], ['nope', org], [id, other]] as const) {
        const res = await update(target, { name: uniqueName() }, who);
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('TRIGGER_NOT_FOUND');
      }
    });

    it('keeps a webhook\'s secret when the configuration omits it, replaces it, and removes it with null', async () => {
      const { id } = await created(bodies.webhook(workflowId));
      const kept = await update(id, { configuration: { method: 'PUT' } });
      expect(kept.body.data.configuration).toMatchObject({ method: 'PUT', headers: {}, secret: WEBHOOK_SECRET });
      const replaced = await update(id, { configuration: { secret: 'another-secret-of-enough-length' } });
      expect(replaced.body.data.configuration).toMatchObject({ method: 'POST', secret: 'another-secret-of-enough-length' });
      const cleared = await update(id, { configuration: { secret: null } });
      expect(cleared.body.data.configuration.secret).toBeNull();
      expect((await get(id)).body.data.configuration.secret).toBeNull();
    });
  });

  describe('DELETE /v1/triggers/{id}', () => {
    it('deletes once, then answers 404', async () => {
      const { id } = await created(bodies.message(workflowId));
      expect((await remove(id)).body).toEqual({ message: 'Trigger deleted' });
      const again = await remove(id);
      expect(again.status).toBe(404);
      expect(again.body.error.code).toBe('TRIGGER_NOT_FOUND');
    });

    it('answers 404 TRIGGER_NOT_FOUND for unknown, malformed and other organizations\' ids, deleting nothing', async () => {
      const { id } = await created(bodies.message(workflowId));
      for (const [target, who] of [[UNKNOWN_ID, org], ['nope', org], [id, other]] as const) {
        const res = await remove(target, who);
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('TRIGGER_NOT_FOUND');
      }
      expect((await get(id)).status).toBe(200);
    });
  });

  describe('state transitions', () => {
    it('activates, deactivates and pauses from any state, answering the new status and its time', async () => {
      const { id } = await created(bodies.message(workflowId));
      const expectations: [string, string, string][] = [
        ['pause', 'paused', 'paused_at'],
        ['deactivate', 'inactive', 'deactivated_at'],
        ['pause', 'paused', 'paused_at'],
        ['activate', 'active', 'activated_at'],
        ['deactivate', 'inactive', 'deactivated_at'],
        ['activate', 'active', 'activated_at'],
        ['pause', 'paused', 'paused_at'],
        ['activate', 'active', 'activated_at'],
      ];
      for (const [action, status, stamp] of expectations) {
        const res = await act(id, action);
        expect(res.status, action).toBe(200);
        expect(res.body).toEqual({ data: { id, status, [stamp]: expect.any(String) } });
        const now = (await get(id)).body.data;
        expect(now.status).toBe(status);
        expect(now[stamp]).toBe(res.body.data[stamp]);
      }
    });

    it('resumes only a paused trigger; from active or inactive it answers 409 INVALID_STATE_TRANSITION', async () => {
      const { id } = await created(bodies.message(workflowId));
      const fromActive = await act(id, 'resume');
      expect(fromActive.status).toBe(409);
      expect(fromActive.body.error.code).toBe('INVALID_STATE_TRANSITION');

      await act(id, 'deactivate').expect(200);
      const fromInactive = await act(id, 'resume');
      expect(fromInactive.status).toBe(409);
      expect(fromInactive.body.error.code).toBe('INVALID_STATE_TRANSITION');
      expect((await get(id)).body.data.status).toBe('inactive');

      await act(id, 'pause').expect(200);
      const resumed = await act(id, 'resume');
      expect(resumed.status).toBe(200);
      expect(resumed.body).toEqual({ data: { id, status: 'active', resumed_at: expect.any(String) } });
      expect((await get(id)).body.data).toMatchObject({ status: 'active', resumed_at: resumed.body.data.resumed_at });
      expect((await act(id, 'resume')).status).toBe(409);
    });

    it('is idempotent: repeating a transition keeps its first time', async () => {
      const { id } = await created(bodies.message(workflowId));
      const first = await act(id, 'pause');
      await pause(5);
      const second = await act(id, 'pause');
      expect(second.body.data).toEqual(first.body.data);
      const activated = (await get(id)).body.data.activated_at;
      await act(id, 'resume').expect(200);
      expect((await act(id, 'activate')).body.data.activated_at).toBe(activated);
    });

    it('answers 404 TRIGGER_NOT_FOUND for unknown, malformed and other organizations\' ids', async () => {
      const { id } = await created(bodies.message(workflowId));
      for (const action of ['activate', 'deactivate', 'pause', 'resume']) {
        for (const [target, who] of [[UNKNOWN_ID, org], ['nope', org], [id, other]] as const) {
          const res = await act(target, action, who);
          expect(res.status, `${action} ${target}`).toBe(404);
          expect(res.body.error.code).toBe('TRIGGER_NOT_FOUND');
        }
      }
      expect((await get(id)).body.data.status).toBe('active');
    });
  });

  describe('OpenAPI document', () => {
    it('documents every trigger route with the four configuration schemas', async () => {
      const doc = (await t.http.get('/openapi.json')).body as {
        paths: Record<string, Record<string, unknown>>;
        components: { schemas: Record<string, unknown> };
      };
      expect(Object.keys(doc.paths['/v1/triggers']).sort()).toEqual(['get', 'post']);
      expect(Object.keys(doc.paths['/v1/triggers/{trigger_id}']).sort()).toEqual(['delete', 'get', 'put']);
      for (const action of ['activate', 'deactivate', 'pause', 'resume']) expect(doc.paths).toHaveProperty([`/v1/triggers/{trigger_id}/${action}`]);
      const refs = [...JSON.stringify(doc).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]);
      for (const name of ['MessageTriggerConfigurationDoc', 'ScheduleTriggerConfigurationDoc', 'WebhookTriggerConfigurationDoc', 'ApiTriggerConfigurationDoc', 'TriggerResponse']) {
        expect(refs).toContain(name);
      }
      for (const ref of refs) expect(doc.components.schemas, ref).toHaveProperty([ref]);
    });
  });

  describe('webhook secrets at rest', () => {
    it('stores the secret encrypted, outside the configuration, and returns it decrypted', async () => {
      const { id } = await created(bodies.webhook(workflowId));
      const [row] = await t.app
        .get(DataSource)
        .query(`SELECT configuration, secret_encrypted FROM triggers WHERE id = $1`, [id]);
      expect(JSON.stringify(row.configuration)).not.toContain(WEBHOOK_SECRET);
      expect(row.configuration).toEqual({ method: 'POST', headers: { 'x-source': 'crm' } });
      expect(typeof row.secret_encrypted).toBe('string');
      expect(row.secret_encrypted).not.toContain(WEBHOOK_SECRET);
      expect(Buffer.from(row.secret_encrypted.split('.')[1], 'base64url').toString('latin1')).not.toContain(WEBHOOK_SECRET);
      expect((await get(id)).body.data.configuration.secret).toBe(WEBHOOK_SECRET);

      const all = await t.app.get(DataSource).query(`SELECT configuration::text AS c, secret_encrypted FROM triggers`);
      for (const r of all as { c: string; secret_encrypted: string | null }[]) {
        expect(r.c).not.toContain(WEBHOOK_SECRET);
        expect(r.secret_encrypted ?? '').not.toContain(WEBHOOK_SECRET);
      }
    });

    it('cannot be opened under another row\'s id', async () => {
      const first = await created(bodies.webhook(workflowId));
      const second = await created(bodies.webhook(workflowId, { configuration: { secret: 'second-secret-0123456789' } }));
      const db = t.app.get(DataSource);
      await db.query(`UPDATE triggers SET secret_encrypted = (SELECT secret_encrypted FROM triggers WHERE id = $1) WHERE id = $2`, [first.id, second.id]);
      const res = await get(second.id);
      expect(res.status).toBe(500);
      expect(res.body.error.code).toBe('INTERNAL_ERROR');
      await remove(second.id).expect(200);
    });
  });

  describe('schedule registration', () => {
    let queue: Queue;
    const jobsOf = async (id: string): Promise<JobInformation[]> =>
      (await queue.getRepeatableJobs()).filter((job) => job.name === ScheduleJobs.tick && job.id === id);

    beforeAll(() => {
      queue = t.app.get<Queue>(getQueueToken(SCHEDULES_QUEUE));
    });

    it('keeps one repeatable job per active schedule trigger through its life', async () => {
      const trigger = await created(bodies.schedule(workflowId));
      let jobs = await jobsOf(trigger.id);
      expect(jobs).toHaveLength(1);
      expect(jobs[0]).toMatchObject({ name: 'tick', id: trigger.id, cron: QUIET_CRON, tz: 'Europe/Paris' });
      const delayed = (await queue.getDelayed()).filter((job) => job.data?.triggerId === trigger.id);
      expect(delayed).toHaveLength(1);
      expect(delayed[0].name).toBe('tick');
      expect(delayed[0].data).toEqual({ triggerId: trigger.id });

      await act(trigger.id, 'pause').expect(200);
      expect(await jobsOf(trigger.id)).toEqual([]);
      expect((await queue.getDelayed()).filter((job) => job.data?.triggerId === trigger.id)).toEqual([]);

      await act(trigger.id, 'resume').expect(200);
      expect(await jobsOf(trigger.id)).toHaveLength(1);

      await act(trigger.id, 'deactivate').expect(200);
      expect(await jobsOf(trigger.id)).toEqual([]);
      await update(trigger.id, { name: uniqueName('Inactive schedule') }).expect(200);
      expect(await jobsOf(trigger.id)).toEqual([]);

      await act(trigger.id, 'activate').expect(200);
      await act(trigger.id, 'activate').expect(200);
      expect(await jobsOf(trigger.id)).toHaveLength(1);

      await update(trigger.id, { configuration: { cron_expression: '15 4 2 1 *', timezone: 'America/New_York', end_date: '2099-01-01T00:00:00Z' } }).expect(200);
      jobs = await jobsOf(trigger.id);
      expect(jobs).toHaveLength(1);
      expect(jobs[0]).toMatchObject({ cron: '15 4 2 1 *', tz: 'America/New_York', endDate: Date.parse('2099-01-01T00:00:00Z') });
      expect((await queue.getDelayed()).filter((job) => job.data?.triggerId === trigger.id)).toHaveLength(1);

      await remove(trigger.id).expect(200);
      expect(await jobsOf(trigger.id)).toEqual([]);
      expect((await queue.getDelayed()).filter((job) => job.data?.triggerId === trigger.id)).toEqual([]);
    });

    /** The trigger's next tick as Bull holds it (a real job, with the repeat options it was made from). */
    const nextTick = async (id: string): Promise<Job> => {
      const [job] = (await queue.getDelayed()).filter((j) => j.data?.triggerId === id);
      expect(job).toBeDefined();
      return job;
    };
    const firings = async (id: string): Promise<number> =>
      (await t.app.get(DataSource).query('SELECT count(*)::int AS n FROM trigger_executions WHERE trigger_id = $1', [id]))[0].n;

    it('writes a trigger without listing the queue\'s repeatable jobs, and outside its transaction', async () => {
      const listing = vi.spyOn(queue, 'getRepeatableJobs');
      const adding = vi.spyOn(queue, 'add');
      const db = t.app.get(DataSource);
      const inTransaction: boolean[] = [];
      adding.mockImplementation(async function (this: Queue, ...args: unknown[]) {
        // pg_current_xact_id_if_assigned() is null outside a transaction that wrote something; the
        // schedule write happens after the commit, so no connection of the app holds an open write.
        const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`);
        inTransaction.push(n > 0);
        return (Object.getPrototypeOf(queue).add as (...a: unknown[]) => Promise<Job>).apply(this, args);
      });
      try {
        const trigger = await created(bodies.schedule(workflowId));
        await update(trigger.id, { configuration: { cron_expression: '45 3 1 1 *', timezone: 'UTC' } }).expect(200);
        await act(trigger.id, 'pause').expect(200);
        await act(trigger.id, 'resume').expect(200);
        await remove(trigger.id).expect(200);
        expect(listing).not.toHaveBeenCalled();
        expect(inTransaction).toEqual([false, false, false]);
        expect(await jobsOf(trigger.id)).toEqual([]);
      } finally {
        listing.mockRestore();
        adding.mockRestore();
      }
    });

    it('removes the jobs of a deleted workflow\'s schedule triggers at once', async () => {
      const doomed = (await createWorkflow(t, org)).id;
      const first = await created(bodies.schedule(doomed));
      const second = await created(bodies.schedule(doomed, { configuration: { cron_expression: '0 4 1 1 *', timezone: 'UTC' } }));
      expect((await jobsOf(first.id)).length + (await jobsOf(second.id)).length).toBe(2);
      expect((await t.http.delete(`/v1/workflows/${doomed}`).set(org.auth('full_access'))).status).toBe(200);
      expect(await jobsOf(first.id)).toEqual([]);
      expect(await jobsOf(second.id)).toEqual([]);
    });

    it('a tick of a trigger that is gone, or of a schedule it no longer has, removes its own job and fires nothing', async () => {
      const processor = t.app.get(SchedulesProcessor);
      // Gone without its job being removed (as if the process died between the commit and Redis).
      const gone = await created(bodies.schedule(workflowId));
      const goneTick = await nextTick(gone.id);
      await t.app.get(DataSource).query('DELETE FROM triggers WHERE id = $1', [gone.id]);
      await processor.tick(goneTick as Job<never>);
      expect(await jobsOf(gone.id)).toEqual([]);

      // Two writes reaching Redis out of order leave the older schedule's job behind.
      const moved = await created(bodies.schedule(workflowId));
      await update(moved.id, { configuration: { cron_expression: '0 5 1 1 *', timezone: 'UTC' } }).expect(200);
      await queue.add(ScheduleJobs.tick, { triggerId: moved.id }, { jobId: moved.id, repeat: { cron: QUIET_CRON, tz: 'Europe/Paris' }, removeOnComplete: true });
      expect(await jobsOf(moved.id)).toHaveLength(2);
      const stale = (await queue.getDelayed()).find((j) => j.data?.triggerId === moved.id && (j.opts.repeat as { cron: string }).cron === QUIET_CRON)!;
      await processor.tick(stale as Job<never>);
      const left = await jobsOf(moved.id);
      expect(left).toHaveLength(1);
      expect(left[0]).toMatchObject({ cron: '0 5 1 1 *', tz: 'UTC' });
      expect(await firings(moved.id)).toBe(0);

      // The current job's tick fires.
      await processor.tick((await nextTick(moved.id)) as Job<never>);
      expect(await firings(moved.id)).toBe(1);
      expect(await jobsOf(moved.id)).toHaveLength(1);
      await remove(moved.id).expect(200);
    });

    it('registers no job for other trigger types', async () => {
      const ids = [
        (await created(bodies.message(workflowId))).id,
        (await created(bodies.webhook(workflowId))).id,
        (await created(bodies.api(workflowId))).id,
      ];
      for (const id of ids) expect(await jobsOf(id)).toEqual([]);
    });

    it('reconcile() adds missing jobs, replaces outdated ones and removes orphans', async () => {
      const schedules = t.app.get(TriggerSchedulesService);
      const lost = await created(bodies.schedule(workflowId));
      const outdated = await created(bodies.schedule(workflowId));
      const paused = await created(bodies.schedule(workflowId));
      await act(paused.id, 'pause').expect(200);
      const healthy = await created(bodies.schedule(workflowId));

      for (const job of await jobsOf(lost.id)) await queue.removeRepeatableByKey(job.key);
      for (const job of await jobsOf(outdated.id)) await queue.removeRepeatableByKey(job.key);
      await queue.add(ScheduleJobs.tick, { triggerId: outdated.id }, { jobId: outdated.id, repeat: { cron: '0 0 1 1 *', tz: 'UTC' } });
      await queue.add(ScheduleJobs.tick, { triggerId: paused.id }, { jobId: paused.id, repeat: { cron: QUIET_CRON, tz: 'UTC' } });
      await queue.add(ScheduleJobs.tick, { triggerId: UNKNOWN_ID }, { jobId: UNKNOWN_ID, repeat: { cron: QUIET_CRON, tz: 'UTC' } });

      const result = await schedules.reconcile();
      expect(result.repaired).toEqual(expect.arrayContaining([lost.id, outdated.id, paused.id, UNKNOWN_ID]));
      expect(result.repaired).not.toContain(healthy.id);

      for (const trigger of [lost, outdated, healthy]) {
        const jobs = await jobsOf(trigger.id);
        expect(jobs).toHaveLength(1);
        expect(jobs[0]).toMatchObject({ cron: QUIET_CRON, tz: 'Europe/Paris' });
      }
      expect(await jobsOf(paused.id)).toEqual([]);
      expect(await jobsOf(UNKNOWN_ID)).toEqual([]);
      const again = await schedules.reconcile();
      for (const trigger of [lost, outdated, paused, healthy]) expect(again.repaired).not.toContain(trigger.id);
    });

    it('reconciles by itself when an API process starts listening, not when it is only initialised', async () => {
      await queue.add(ScheduleJobs.tick, { triggerId: UNKNOWN_ID }, { jobId: UNKNOWN_ID, repeat: { cron: QUIET_CRON, tz: 'UTC' } });
      const api = await createHttpApp(testConfig({ APP_ROLE: 'api', RATE_LIMITS_ENABLED: 'false' }));
      try {
        await api.init();
        await pause(300);
        expect(await jobsOf(UNKNOWN_ID)).toHaveLength(1);
        await api.listen(0, '127.0.0.1');
        const deadline = Date.now() + 10_000;
        while ((await jobsOf(UNKNOWN_ID)).length > 0 && Date.now() < deadline) await pause(100);
        expect(await jobsOf(UNKNOWN_ID)).toEqual([]);
      } finally {
        await api.close();
      }
    });
  });
});
