import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { getQueueToken } from '@nestjs/bull';
import type { Job, Queue } from 'bull';
import { CORE_SCHEMA, load, mergeTag } from 'js-yaml';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SchedulesProcessor } from '../../src/triggers/schedules.processor.js';
import { SCHEDULES_QUEUE, ScheduleJobs } from '../../src/triggers/triggers.queue.js';
import { createTrigger } from '../factories/triggers.js';
import { ApiProcess } from '../utils/api-process.js';
import { freePort } from '../utils/private-services.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';
import { WorkerProcess } from '../utils/worker-process.js';
import { subscribeToEvents } from '../factories/webhooks.js';

const run = promisify(execFile);

/**
 * Queue mode on one box, as docker/compose.yml runs it: two API processes and two workers of the
 * built dist, sharing PostgreSQL and Redis. Messages sent through both APIs start one execution
 * each, every execution completes once and sends each of its messages once; a schedule trigger
 * fires once per slot although two workers take its queue; the worker's health check answers.
 */
describe('queue mode: two API processes and two workers', { timeout: 240_000 }, () => {
  const MESSAGES = 40;
  // Queues of their own: no tick of another file's schedule triggers reaches these workers.
  const prefix = `${inject('redisKeyPrefix')}:qm`;
  let t: TestApp;
  let org: TestOrganization;
  let db: DataSource;
  const apis: ApiProcess[] = [];
  const workers: WorkerProcess[] = [];
  const workerHealthPorts: number[] = [];
  let keyword: string;
  let scheduleTriggerId: string;
  /** The completed tick jobs of the schedule queue, as Bull publishes them: job id and what the tick did. */
  const ticks: { jobId: string; result: { workflow_execution_id: string | null } | null }[] = [];

  beforeAll(async () => {
    // In-process, serving no HTTP and running no worker: sets the organization and resources up.
    t = await startTestApp({ APP_ROLE: 'api', RATE_LIMITS_ENABLED: 'false', REDIS_KEY_PREFIX: prefix });
    org = await createOrganization(t);
    await subscribeToEvents(t, org);
    db = t.app.get(DataSource);
    const schedules = t.app.get<Queue>(getQueueToken(SCHEDULES_QUEUE));
    await schedules.isReady();
    schedules.on('global:completed', (jobId: string, result: string) => ticks.push({ jobId: String(jobId), result: JSON.parse(result ?? 'null') }));

    // A conversation of two messages, started by a keyword.
    const workflow = await t.http.post('/v1/workflows').set(org.auth('read_write')).send({
      name: `queue-mode-${Date.now()}`,
      channel: 'whatsapp',
      configuration: {
        nodes: [
          { id: 'hello', type: 'message', content: 'Hello from queue mode', next: 'bye' },
          { id: 'bye', type: 'message', content: 'Goodbye' },
        ],
      },
    });
    expect(workflow.status).toBe(201);
    const workflowId = workflow.body.data.id as string;
    expect((await t.http.post(`/v1/workflows/${workflowId}/activate`).set(org.auth('read_write'))).status).toBe(200);
    keyword = `qm${Date.now().toString(36)}`;
    await createTrigger(t, org, workflowId, 'message', { keywords: [keyword] });

    // A schedule trigger. The API takes standard five-field cron, so a minute is its shortest
    // period; the row is then given a seconds field (which Bull's parser reads) so that the test
    // sees several slots in seconds. What makes a slot fire once is the same at any period: the
    // tick job's id is derived from the slot, and two workers cannot both take one id.
    const scheduled = await t.http.post('/v1/workflows').set(org.auth('read_write')).send({
      name: `queue-mode-schedule-${Date.now()}`,
      channel: 'whatsapp',
      configuration: { nodes: [{ id: 'm', type: 'message', content: 'scheduled' }] },
    });
    const scheduledId = scheduled.body.data.id as string;
    expect((await t.http.post(`/v1/workflows/${scheduledId}/activate`).set(org.auth('read_write'))).status).toBe(200);
    scheduleTriggerId = (await createTrigger(t, org, scheduledId, 'schedule', { cron_expression: '0 4 1 1 *', timezone: 'UTC' })).id;
    await db.query(`UPDATE triggers SET configuration = jsonb_set(configuration, '{cron_expression}', '"* * * * * *"') WHERE id = $1`, [scheduleTriggerId]);

    // Four processes started together, as `docker compose up` does: both APIs run the migrations
    // (serialised by an advisory lock) and reconcile the schedule jobs when they start listening.
    const env = { REDIS_KEY_PREFIX: prefix, RATE_LIMITS_ENABLED: 'false', LOG_LEVEL: 'warn' };
    for (let i = 0; i < 2; i++) apis.push(await ApiProcess.start(t.config, env));
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      workerHealthPorts.push(port);
      const worker = new WorkerProcess(t.config, { ...env, WORKER_HEALTH_PORT: String(port) });
      worker.start();
      workers.push(worker);
    }
    await Promise.all(apis.map((api) => api.ready()));
    for (const port of workerHealthPorts) {
      await waitFor(`the worker health port ${port}`, async () => (await fetch(`http://127.0.0.1:${port}/health/ready`).catch(() => null))?.status === 200, 60_000, 200);
    }
  });

  afterAll(async () => {
    await Promise.all([...apis.map((a) => a.stop()), ...workers.map((w) => w.stop())]);
    await t?.close();
  });

  it('runs each message through either API exactly once: one execution each, each message sent once', async () => {
    const customers = Array.from({ length: MESSAGES }, (_, i) => `+1555${Date.now() % 100000}${String(i).padStart(3, '0')}`);
    const answers = await Promise.all(
      customers.map(async (customer, i) => {
        const res = await apis[i % 2].fetch('/v1/messages', {
          method: 'POST',
          headers: { ...org.auth('read_write'), 'Content-Type': 'application/json' },
          body: JSON.stringify({ channel: 'whatsapp', customer_id: customer, message: `${keyword} please` }),
        });
        return { status: res.status, body: (await res.json()) as { data: { executions: { workflow_execution_id: string }[] } } };
      }),
    );
    expect(answers.map((a) => a.status)).toEqual(customers.map(() => 202));
    const ids = answers.map((a) => a.body.data.executions.map((e) => e.workflow_execution_id));
    expect(ids.every((list) => list.length === 1)).toBe(true);
    const executionIds = ids.flat();
    expect(new Set(executionIds).size).toBe(MESSAGES);

    const done = await waitFor(
      'every execution to finish',
      async () => {
        const rows: { status: string }[] = await db.query('SELECT status FROM workflow_executions WHERE id = ANY($1)', [executionIds]);
        return rows.length === MESSAGES && rows.every((r) => r.status !== 'running') ? rows : undefined;
      },
      120_000,
      250,
    );
    expect(done.map((r) => r.status)).toEqual(executionIds.map(() => 'success'));
    // One execution per customer, none started twice (through the other API, or by a second worker).
    const perCustomer: { n: number }[] = await db.query(
      `SELECT count(*)::int AS n FROM workflow_executions e JOIN customers c ON c.id = e.customer_id WHERE e.organization_id = $1 AND c.external_id = ANY($2) GROUP BY c.id`,
      [org.id, customers],
    );
    expect(perCustomer.map((r) => r.n)).toEqual(customers.map(() => 1));
    // Each execution sent "Hello" and "Goodbye" once, stepped through each node once, and announced each message once.
    const sent: { execution_id: string; contents: string[] }[] = await db.query(
      `SELECT execution_id, array_agg(content ORDER BY created_at, id) AS contents FROM messages WHERE execution_id = ANY($1) AND direction = 'outbound' GROUP BY execution_id`,
      [executionIds],
    );
    expect(sent.length).toBe(MESSAGES);
    for (const row of sent) expect(row.contents).toEqual(['Hello from queue mode', 'Goodbye']);
    const [steps] = await db.query('SELECT count(*)::int AS n, count(DISTINCT (execution_id, node_id))::int AS distinct_n FROM execution_steps WHERE execution_id = ANY($1)', [executionIds]);
    expect(steps).toEqual({ n: 2 * MESSAGES, distinct_n: 2 * MESSAGES });
    const [events] = await db.query(`SELECT count(*)::int AS n FROM outbox_events WHERE type = 'message.sent' AND data->>'execution_id' = ANY($1)`, [executionIds]);
    expect(events.n).toBe(2 * MESSAGES);
  });

  it('fires a schedule trigger once per slot with two workers', async () => {
    const schedules = t.app.get<Queue>(getQueueToken(SCHEDULES_QUEUE));
    // The APIs' start-up reconcile replaced the trigger's job with the one of its row (the seconds cron).
    await waitFor(
      'the seconds schedule job',
      async () => (await schedules.getRepeatableJobs()).some((j) => j.name === ScheduleJobs.tick && j.id === scheduleTriggerId && j.cron === '* * * * * *'),
      30_000,
      200,
    );
    const slotOf = (jobId: string) => Number(jobId.split(':').pop());
    const fired = () => ticks.filter((tick) => tick.result?.workflow_execution_id);
    await waitFor('four slots to fire', async () => new Set(fired().map((tick) => slotOf(tick.jobId))).size >= 4, 60_000, 200);

    // Stop the schedule, then let the ticks already taken finish.
    expect((await apis[0].fetch(`/v1/triggers/${scheduleTriggerId}/pause`, { method: 'POST', headers: org.auth('read_write') })).status).toBe(200);
    let seen = -1;
    await waitFor(
      'the last ticks to finish',
      async () => {
        const [row] = await db.query(`SELECT count(*)::int AS n FROM workflow_executions WHERE trigger_id = $1`, [scheduleTriggerId]);
        const stable = row.n === seen && row.n === fired().length;
        seen = row.n;
        return stable;
      },
      30_000,
      1000,
    );

    const firedTicks = fired();
    const slots = firedTicks.map((tick) => slotOf(tick.jobId));
    // Each slot fired once (no slot's job ran on both workers, no second job per slot) ...
    expect(new Set(slots).size).toBe(slots.length);
    expect(slots.length).toBeGreaterThanOrEqual(4);
    // ... each firing is one execution, and every execution of the trigger is one of those firings.
    const executions: { id: string; status: string }[] = await db.query(`SELECT id, status FROM workflow_executions WHERE trigger_id = $1`, [scheduleTriggerId]);
    expect(executions.map((e) => e.id).sort()).toEqual(firedTicks.map((tick) => tick.result!.workflow_execution_id).sort());
    // Each firing records the slot it stands for.
    const recorded: { slot: string }[] = await db.query(`SELECT input->'metadata'->>'scheduled_for' AS slot FROM trigger_executions WHERE trigger_id = $1`, [scheduleTriggerId]);
    expect(recorded.map((r) => r.slot).sort()).toEqual(slots.map((slot) => new Date(slot).toISOString()).sort());
    // No customer to send to: each ran to its end once, failing with NO_RECIPIENT (see engine.e2e-spec).
    expect(new Set(executions.map((e) => e.status))).toEqual(new Set(['failed']));
    // Slots are whole seconds, consecutive ones a second apart.
    for (const slot of slots) expect(slot % 1000).toBe(0);
  });

  it("answers the compose file's worker health check", async () => {
    const compose = load(readFileSync('docker/compose.yml', 'utf8'), { schema: CORE_SCHEMA.withTags(mergeTag) }) as {
      services: { worker: { healthcheck: { test: string[] } } };
    };
    const [form, command, ...args] = compose.services.worker.healthcheck.test;
    expect([form, command]).toEqual(['CMD', 'node']);
    const check = (port: number) =>
      run(process.execPath, args, { env: { PATH: process.env.PATH ?? '', WORKER_HEALTH_PORT: String(port) }, timeout: 15_000 }).then(
        () => 0,
        (error: { code?: number }) => error.code ?? 1,
      );
    for (const port of workerHealthPorts) expect(await check(port)).toBe(0);
    expect(await check(await freePort())).toBe(1);

    const [port] = workerHealthPorts;
    const live = await fetch(`http://127.0.0.1:${port}/health/live`);
    expect([live.status, await live.json()]).toEqual([200, { status: 'ok' }]);
    const ready = await fetch(`http://127.0.0.1:${port}/health/ready`);
    expect(await ready.json()).toEqual({ status: 'ok', checks: { database: 'up', redis: 'up' } });
    // A probe port, not an API.
    expect((await fetch(`http://127.0.0.1:${port}/v1/me`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${port}/health/live`, { method: 'POST' })).status).toBe(405);
  });
});

/**
 * Bull runs a job again when the worker that held it stopped before marking it completed (a stalled
 * job: SIGKILL, OOM, a lost Redis lock). For a schedule tick whose firing had committed, that would
 * fire the slot twice; the slot is recorded with the firing, and the second run fires nothing.
 */
describe('a schedule tick run twice (a stalled job taken again)', { timeout: 60_000 }, () => {
  let t: TestApp;
  let org: TestOrganization;

  beforeAll(async () => {
    // Queues of its own, so that the ticks are run by this test alone.
    t = await startTestApp({ APP_ROLE: 'all', RATE_LIMITS_ENABLED: 'false', REDIS_KEY_PREFIX: `${inject('redisKeyPrefix')}:stall` });
    org = await createOrganization(t);
    await subscribeToEvents(t, org);
  });
  afterAll(() => t?.close());

  it('fires its slot once', async () => {
    const workflow = await t.http.post('/v1/workflows').set(org.auth('read_write')).send({
      name: `stalled-tick-${Date.now()}`,
      channel: 'whatsapp',
      configuration: { nodes: [{ id: 'm', type: 'message', content: 'scheduled' }] },
    });
    expect((await t.http.post(`/v1/workflows/${workflow.body.data.id}/activate`).set(org.auth('read_write'))).status).toBe(200);
    const trigger = await createTrigger(t, org, workflow.body.data.id, 'schedule', { cron_expression: '0 4 1 1 *', timezone: 'UTC' });
    const queue = t.app.get<Queue>(getQueueToken(SCHEDULES_QUEUE));
    const [tick] = (await queue.getDelayed()).filter((j) => j.data?.triggerId === trigger.id);
    const slot = new Date(Number(String(tick.id).split(':').pop())).toISOString();

    const processor = t.app.get(SchedulesProcessor);
    const first = await processor.tick(tick as Job<never>);
    expect(first?.workflow_execution_id).toEqual(expect.any(String));
    // The same job again, as Bull hands out a stalled one: nothing more fires.
    expect(await processor.tick(tick as Job<never>)).toBeNull();

    const db = t.app.get(DataSource);
    const rows: { scheduled_for: string; workflow_execution_id: string }[] = await db.query(
      `SELECT input->'metadata'->>'scheduled_for' AS scheduled_for, workflow_execution_id FROM trigger_executions WHERE trigger_id = $1`,
      [trigger.id],
    );
    expect(rows).toEqual([{ scheduled_for: slot, workflow_execution_id: first!.workflow_execution_id }]);
    const detail = await t.http.get(`/v1/triggers/${trigger.id}/executions`).set(org.auth('read_only'));
    expect(detail.body.data).toHaveLength(1);
  });
});
