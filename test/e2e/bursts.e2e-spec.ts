import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AppConfig } from '../../src/config/app-config.js';
import { ConfigError } from '../../src/config/env.schema.js';
import { BurstsProcessor } from '../../src/triggers/bursts.processor.js';
import { BURSTS_QUEUE } from '../../src/triggers/triggers.queue.js';
import { createTrigger } from '../factories/triggers.js';
import { createActiveWorkflow } from '../factories/workflows.js';
import { ApiProcess } from '../utils/api-process.js';
import type { FakeMeta } from '../utils/fake-meta.js';
import { startChannelsTestApp, type ChannelsTestApp } from '../utils/channels-test-app.js';
import { metaSignature } from '../utils/meta-signing.js';
import { whatsappMessagesPayload } from '../utils/meta-payloads.js';
import { RATE_LIMITS_OUT_OF_REACH, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';

/** The burst window of POST /v1/messages without a channel account in this file. */
const WINDOW_MS = 700;
const APP_SECRET = 'b1b2c3d4e5f60718293a4b5c6d7e8f90';
const TOKEN = 'EAAGtest-bursts-token-0123456789';
const sign = (raw: string) => metaSignature(APP_SECRET, raw);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Node = Record<string, unknown>;
interface ExecutionRow {
  id: string;
  trigger_id: string | null;
  input: { message: string | null };
  state: { form?: { fieldIndex: number; answers: Record<string, unknown> } };
  waiting: boolean;
  status: string;
  created_at: Date;
}

describe('message bursts: messages of one customer within the window are one turn', () => {
  let app: ChannelsTestApp;
  let t: TestApp;
  let fake: FakeMeta;
  let org: TestOrganization;
  let other: TestOrganization;
  let db: DataSource;
  let seq = 0;

  beforeAll(async () => {
    app = await startChannelsTestApp('bursts', { CONVERSATION_BURST_WINDOW_MS: String(WINDOW_MS), PUBLIC_BASE_URL: 'https://api.example.com' });
    ({ t, fake, org, other, db } = app);
  });
  afterAll(() => app?.close());

  const customer = () => `+1666${String(Date.now() % 1_000_000).padStart(6, '0')}${++seq}`;

  /** A workflow fired by a message trigger on `keyword` (unique to the test, so no other test's message matches it). */
  async function keywordWorkflow(keyword: string, nodes: Node[] = [{ id: 'hello', type: 'message', content: `Hello from ${keyword}` }], o = org) {
    const workflowId = await createActiveWorkflow(t, o, nodes);
    const trigger = await createTrigger(t, o, workflowId, 'message', { keywords: [keyword] });
    return { workflowId, triggerId: trigger.id };
  }

  const send = (o: TestOrganization, customerRef: string, message: string, extra: Record<string, unknown> = {}) =>
    t.http.post('/v1/messages').set(o.auth('read_write')).send({ channel: 'whatsapp', customer_id: customerRef, message, ...extra });

  const executionsOf = async (workflowId: string): Promise<ExecutionRow[]> =>
    db.query(`SELECT id, trigger_id, input, state, waiting, status, created_at FROM workflow_executions WHERE workflow_id = $1 ORDER BY created_at, id`, [workflowId]);
  const inboundOf = async (o: TestOrganization, customerRef: string) =>
    (await db.query(
      `SELECT m.id, m.content, m.execution_id, m.burst_id, m.consumed_at, m.created_at FROM messages m JOIN customers c ON c.id = m.customer_id
        WHERE c.organization_id = $1 AND c.external_id = $2 AND m.direction = 'inbound' ORDER BY m.created_at, m.id`,
      [o.id, customerRef],
    )) as { id: string; content: string; execution_id: string | null; burst_id: string | null; consumed_at: Date | null; created_at: Date }[];
  const receivedEvents = async (o: TestOrganization, customerRef: string): Promise<Record<string, unknown>[]> =>
    (await db.query(`SELECT data FROM outbox_events WHERE organization_id = $1 AND type = 'message.received' AND data->>'customer_id' = $2 ORDER BY occurred_at`, [o.id, customerRef])).map(
      (r: { data: Record<string, unknown> }) => r.data,
    );
  const openBursts = async (o: TestOrganization) => (await db.query(`SELECT id FROM message_bursts WHERE organization_id = $1`, [o.id])).length as number;

  it('three messages within the window: each recorded and emitted at once, then one execution whose message is the joined text', async () => {
    const { workflowId, triggerId } = await keywordWorkflow('helpdesk');
    const who = customer();
    const first = await send(org, who, 'hi');
    const second = await send(org, who, 'I need helpdesk');
    const third = await send(org, who, 'with my order');
    for (const res of [first, second, third]) {
      expect(res.status).toBe(202);
      expect(res.body.data).toMatchObject({ message_id: expect.any(String), executions: [], turn: { held_until: expect.any(String) } });
    }
    // One burst: the same deadline, the first message's arrival + the window.
    expect(new Set([first, second, third].map((r) => r.body.data.turn.held_until)).size).toBe(1);

    // Recorded and emitted at once, before the turn.
    const held = await inboundOf(org, who);
    expect(held.map((m) => m.content)).toEqual(['hi', 'I need helpdesk', 'with my order']);
    expect(new Set(held.map((m) => m.burst_id)).size).toBe(1);
    const events = await receivedEvents(org, who);
    expect(events.map((e) => e.message_id)).toEqual([first, second, third].map((r) => r.body.data.message_id));
    expect(events.map((e) => e.content)).toEqual(['hi', 'I need helpdesk', 'with my order']);
    expect(await executionsOf(workflowId)).toEqual([]);

    const [execution] = await waitFor('the turn', async () => ((await executionsOf(workflowId)).length > 0 ? executionsOf(workflowId) : undefined));
    await sleep(WINDOW_MS);
    const executions = await executionsOf(workflowId);
    expect(executions).toHaveLength(1);
    expect(execution!.trigger_id).toBe(triggerId);
    expect(execution!.input.message).toBe('hi\nI need helpdesk\nwith my order');
    const [triggerExecution] = await db.query(`SELECT input FROM trigger_executions WHERE trigger_id = $1`, [triggerId]);
    expect(triggerExecution.input.message).toBe('hi\nI need helpdesk\nwith my order');
    // Emitted once each, never again by the turn; the burst is gone.
    expect(await receivedEvents(org, who)).toHaveLength(3);
    await waitFor('the burst to be finished', async () => (await openBursts(org)) === 0);
  });

  it('a waiting form answered by a burst gets one answer, the joined text; each message keeps its own content', async () => {
    const { workflowId } = await keywordWorkflow('formburst', [
      {
        id: 'ask',
        type: 'form',
        fields: [
          { name: 'issue', type: 'text', required: true, label: 'What is the issue?' },
          { name: 'order_ref', type: 'text', required: true, label: 'Which order?' },
        ],
      },
    ]);
    const who = customer();
    await send(org, who, 'formburst');
    const [execution] = await waitFor('the form to wait', async () => {
      const rows = await executionsOf(workflowId);
      return rows[0]?.waiting ? rows : undefined;
    });
    await send(org, who, 'hi');
    await send(org, who, 'the parcel is late');
    await send(org, who, 'and damaged');
    const answered = await waitFor('the answer', async () => {
      const [row] = await executionsOf(workflowId);
      return row!.state.form?.fieldIndex === 1 ? row : undefined;
    });
    // One answer (three would have filled both fields and finished the form).
    expect(answered.state.form!.answers).toEqual({ issue: 'hi\nthe parcel is late\nand damaged' });
    await sleep(300);
    const [still] = await executionsOf(workflowId);
    expect(still).toMatchObject({ status: 'running', waiting: true });
    expect(await executionsOf(workflowId)).toHaveLength(1);

    const listed = await t.http.get(`/v1/customers/${encodeURIComponent(who)}/messages`).set(org.auth('read_only'));
    expect(listed.status).toBe(200);
    const inbound = (listed.body.data as { direction: string; content: string }[]).filter((m) => m.direction === 'inbound').map((m) => m.content);
    expect(inbound.reverse()).toEqual(['formburst', 'hi', 'the parcel is late', 'and damaged']);
    // All three routed to the execution: the first read as the joined reply, the others absorbed by it.
    const rows = await inboundOf(org, who);
    expect(rows.slice(1).every((m) => m.execution_id === execution!.id && m.consumed_at !== null)).toBe(true);
  });

  it('starts the turn at most window + 200 ms after the last message', async () => {
    const { workflowId } = await keywordWorkflow('timely');
    const who = customer();
    await send(org, who, 'timely');
    await sleep(250);
    await send(org, who, 'second');
    await sleep(250);
    await send(org, who, 'third');
    const [execution] = await waitFor('the turn', async () => ((await executionsOf(workflowId)).length > 0 ? executionsOf(workflowId) : undefined));
    const messages = await inboundOf(org, who);
    const last = messages[messages.length - 1]!;
    const after = execution!.created_at.getTime() - last.created_at.getTime();
    expect(after).toBeGreaterThanOrEqual(0);
    expect(after).toBeLessThanOrEqual(WINDOW_MS + 200);
    expect(execution!.input.message).toBe('timely\nsecond\nthird');
  });

  it('a message after the window opens the next burst: two turns', async () => {
    const { workflowId } = await keywordWorkflow('twoturns');
    const who = customer();
    await send(org, who, 'twoturns one');
    await sleep(WINDOW_MS + 300);
    await send(org, who, 'twoturns two');
    await waitFor('two turns', async () => (await executionsOf(workflowId)).length === 2, 15_000);
    expect((await executionsOf(workflowId)).map((e) => e.input.message)).toEqual(['twoturns one', 'twoturns two']);
  });

  describe('the deadline race: a message arriving while the turn is being claimed', () => {
    /** Holds the burst row locked in a transaction of the test's own, so that the claim and the message queue up behind it in a chosen order. */
    async function raceOn(keyword: string, order: 'claim-first' | 'message-first') {
      const { workflowId } = await keywordWorkflow(keyword);
      const who = customer();
      await send(org, who, `${keyword} a`);
      await send(org, who, 'b');
      const [{ id: burstId }] = await db.query(
        `SELECT b.id FROM message_bursts b JOIN customers c ON c.id = b.customer_id WHERE c.organization_id = $1 AND c.external_id = $2`,
        [org.id, who],
      );
      const blocker = db.createQueryRunner();
      await blocker.connect();
      await blocker.startTransaction();
      await blocker.query(`SELECT 1 FROM message_bursts WHERE id = $1 FOR UPDATE`, [burstId]);
      const waitingOn = (pattern: string) =>
        waitFor(`a statement (${pattern}) to wait on the burst`, async () => {
          const rows = await db.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1`, [pattern]);
          return rows.length > 0;
        });
      let late: Promise<{ status: number; body: { data: { turn?: unknown } } }>;
      try {
        if (order === 'claim-first') {
          await waitingOn('UPDATE message_bursts%'); // the job, at the deadline
          late = send(org, who, `${keyword} c`).then((r) => r);
          await waitingOn('%WITH inbound AS%');
        } else {
          late = send(org, who, `${keyword} c`).then((r) => r);
          await waitingOn('%WITH inbound AS%');
          await waitingOn('UPDATE message_bursts%');
        }
      } finally {
        await blocker.commitTransaction();
        await blocker.release();
      }
      expect((await late!).status).toBe(202);
      return { workflowId, who };
    }

    it('claimed first: the late message opens the next burst (its own turn), nothing lost or handled twice', async () => {
      const { workflowId, who } = await raceOn('raceclaim', 'claim-first');
      await waitFor('two turns', async () => (await executionsOf(workflowId)).length === 2, 15_000);
      await sleep(WINDOW_MS + 500);
      expect((await executionsOf(workflowId)).map((e) => e.input.message)).toEqual(['raceclaim a\nb', 'raceclaim c']);
      const messages = await inboundOf(org, who);
      expect(messages.map((m) => m.content)).toEqual(['raceclaim a', 'b', 'raceclaim c']);
      expect(messages[0]!.burst_id).toBe(messages[1]!.burst_id);
      expect(messages[2]!.burst_id).not.toBe(messages[0]!.burst_id);
    }, 30_000);

    it('joined first: the late message is part of the turn, which sees it', async () => {
      const { workflowId, who } = await raceOn('racejoin', 'message-first');
      await waitFor('the turn', async () => (await executionsOf(workflowId)).length === 1, 15_000);
      await sleep(WINDOW_MS + 500);
      expect((await executionsOf(workflowId)).map((e) => e.input.message)).toEqual(['racejoin a\nb\nracejoin c']);
      expect(new Set((await inboundOf(org, who)).map((m) => m.burst_id)).size).toBe(1);
    }, 30_000);
  });

  it('two API processes receiving alternate messages of one burst: still one turn', async () => {
    const api = await ApiProcess.start(t.config, { CONVERSATION_BURST_WINDOW_MS: String(WINDOW_MS), LOG_LEVEL: 'warn', ...RATE_LIMITS_OUT_OF_REACH });
    try {
      await api.ready();
      const { workflowId } = await keywordWorkflow('twoapis');
      const who = customer();
      const viaChild = async (message: string) => {
        const res = await api.fetch('/v1/messages', {
          method: 'POST',
          headers: { ...org.auth('read_write'), 'Content-Type': 'application/json' },
          body: JSON.stringify({ channel: 'whatsapp', customer_id: who, message }),
        });
        expect(res.status).toBe(202);
        return ((await res.json()) as { data: { turn?: { held_until: string } } }).data;
      };
      const a = (await send(org, who, 'twoapis one')).body.data;
      const b = await viaChild('two');
      const c = (await send(org, who, 'three')).body.data;
      const d = await viaChild('four');
      expect(new Set([a, b, c, d].map((r) => r.turn?.held_until)).size).toBe(1);
      await waitFor('the turn', async () => (await executionsOf(workflowId)).length > 0, 15_000);
      await sleep(WINDOW_MS + 300);
      expect((await executionsOf(workflowId)).map((e) => e.input.message)).toEqual(['twoapis one\ntwo\nthree\nfour']);
    } finally {
      await api.stop();
    }
  }, 90_000);

  it('the sweep takes the turn of a burst whose job was lost', async () => {
    const { workflowId } = await keywordWorkflow('lostjob');
    const who = customer();
    const sent = await send(org, who, 'lostjob here');
    const [{ id: burstId }] = await db.query(
      `SELECT b.id FROM message_bursts b JOIN customers c ON c.id = b.customer_id WHERE c.organization_id = $1 AND c.external_id = $2`,
      [org.id, who],
    );
    // Redis lost the delayed job (flushed); the burst stays open in PostgreSQL past its deadline.
    const queue = t.app.get<Queue>(getQueueToken(BURSTS_QUEUE));
    const job = await queue.getJob(`turn:${burstId}`);
    expect(job).not.toBeNull();
    await job!.remove();
    expect(sent.body.data.turn).toBeDefined();
    await sleep(WINDOW_MS + 300);
    expect(await executionsOf(workflowId)).toEqual([]);
    const sweeper = t.app.get(BurstsProcessor);
    // Within the sweep's grace after the deadline: left to its job.
    expect(await sweeper.sweep()).toBe(0);
    await db.query(`UPDATE message_bursts SET deadline = deadline - interval '10 seconds' WHERE id = $1`, [burstId]);
    expect(await sweeper.sweep()).toBe(1);
    expect((await executionsOf(workflowId)).map((e) => e.input.message)).toEqual(['lostjob here']);
    expect(await sweeper.sweep()).toBe(0);
    expect(await executionsOf(workflowId)).toHaveLength(1);
  });

  it('a turn whose worker died after claiming is taken again by the sweep, once: not again when its execution had started', async () => {
    const { workflowId } = await keywordWorkflow('diedmidway');
    const who = customer();
    await send(org, who, 'diedmidway');
    await send(org, who, 'again');
    const [burst] = await db.query(
      `SELECT b.* FROM message_bursts b JOIN customers c ON c.id = b.customer_id WHERE c.organization_id = $1 AND c.external_id = $2`,
      [org.id, who],
    );
    // A worker claims it, then dies before doing anything (its job is gone with it).
    await (await t.app.get<Queue>(getQueueToken(BURSTS_QUEUE)).getJob(`turn:${burst.id}`))!.remove();
    await db.query(`UPDATE message_bursts SET closed_at = now() - interval '1 hour', claims = 1 WHERE id = $1`, [burst.id]);
    const sweeper = t.app.get(BurstsProcessor);
    expect(await sweeper.sweep()).toBe(1);
    expect((await executionsOf(workflowId)).map((e) => e.input.message)).toEqual(['diedmidway\nagain']);

    // A worker that died after its firing committed, before finishing the burst: the burst is there again, claimed long ago.
    await db.query(
      `INSERT INTO message_bursts (id, organization_id, customer_id, channel, channel_account_id, started_at, deadline, closed_at, claims)
       VALUES ($1, $2, $3, $4, NULL, $5, $6, now() - interval '1 hour', 1)`,
      [burst.id, burst.organization_id, burst.customer_id, burst.channel, burst.started_at, burst.deadline],
    );
    expect(await sweeper.sweep()).toBe(0);
    expect(await executionsOf(workflowId)).toHaveLength(1);
    expect(await db.query(`SELECT 1 FROM message_bursts WHERE id = $1`, [burst.id])).toEqual([]);
  });

  it('keeps organizations apart: the same customer reference in two organizations makes two bursts with their own text', async () => {
    const mine = await keywordWorkflow('tenantburst');
    const theirs = await keywordWorkflow('tenantburst', undefined, other);
    const who = customer();
    await send(org, who, 'tenantburst mine');
    await send(other, who, 'tenantburst theirs');
    await send(org, who, 'more of mine');
    await send(other, who, 'more of theirs');
    await waitFor('both turns', async () => (await executionsOf(mine.workflowId)).length === 1 && (await executionsOf(theirs.workflowId)).length === 1, 15_000);
    await sleep(300);
    expect((await executionsOf(mine.workflowId)).map((e) => e.input.message)).toEqual(['tenantburst mine\nmore of mine']);
    expect((await executionsOf(theirs.workflowId)).map((e) => e.input.message)).toEqual(['tenantburst theirs\nmore of theirs']);
  });

  describe('channel accounts: settings.burst_window_ms', () => {
    async function whatsappAccount(settings?: Record<string, unknown>) {
      const phone = String(200000 + ++seq);
      const res = await t.http
        .post('/v1/channel-accounts')
        .set(org.auth('read_write'))
        .send({ name: `WA ${seq}`, channel: 'whatsapp', provider: 'whatsapp_cloud', credentials: { phone_number_id: phone, access_token: TOKEN, app_secret: APP_SECRET }, ...(settings ? { settings } : {}) });
      return { res, id: res.body.data?.id as string, phone };
    }
    const post = (accountId: string, payload: unknown) => {
      const raw = JSON.stringify(payload);
      return t.http.post(`/v1/channel-accounts/${accountId}/webhook`).set('Content-Type', 'application/json').set('X-Hub-Signature-256', sign(raw)).send(raw);
    };

    it('refuses a window that is negative, above 10000 or not an integer (400 INVALID_CHANNEL_ACCOUNT)', async () => {
      for (const bad of [-1, 10_001, 1.5, '500', null]) {
        const { res } = await whatsappAccount({ burst_window_ms: bad });
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('INVALID_CHANNEL_ACCOUNT');
        expect(res.body.error.message).toContain('settings.burst_window_ms must be an integer from 0 to 10000');
      }
      const ok = await whatsappAccount({ burst_window_ms: 10_000 });
      expect(ok.res.status).toBe(201);
      expect(ok.res.body.data.settings).toEqual({ burst_window_ms: 10_000 });
      const off = await t.http.put(`/v1/channel-accounts/${ok.id}`).set(org.auth('read_write')).send({ settings: { burst_window_ms: 0 } });
      expect(off.status).toBe(200);
      expect(off.body.data.settings).toEqual({});
    });

    it('holds webhook messages for the account\'s window: one turn, the reply sent once; the webhook answer is 200 as always', async () => {
      const { workflowId } = await keywordWorkflow('wabursts');
      const { res, id, phone } = await whatsappAccount({ burst_window_ms: 500 });
      expect(res.status).toBe(201);
      const from = `1777${String(Date.now() % 1_000_000).padStart(6, '0')}`;
      expect((await post(id, whatsappMessagesPayload(phone, [{ from, id: `wamid.b1.${seq}`, text: 'hello' }, { from, id: `wamid.b2.${seq}`, text: 'wabursts please' }]))).status).toBe(200);
      expect((await post(id, whatsappMessagesPayload(phone, [{ from, id: `wamid.b3.${seq}`, text: 'thanks' }]))).status).toBe(200);
      // A redelivery of a held message changes nothing.
      expect((await post(id, whatsappMessagesPayload(phone, [{ from, id: `wamid.b2.${seq}`, text: 'wabursts please' }]))).status).toBe(200);
      expect(await receivedEvents(org, from)).toHaveLength(3);
      await waitFor('the turn', async () => (await executionsOf(workflowId)).length > 0, 15_000);
      await waitFor('the reply', async () => fake.received.some((m) => m.to === from), 15_000);
      await sleep(800);
      expect((await executionsOf(workflowId)).map((e) => e.input.message)).toEqual(['hello\nwabursts please\nthanks']);
      expect(fake.received.filter((m) => m.to === from)).toHaveLength(1);
    });

    it('an account without a window (0) behaves as before: one execution per message, at once, whatever CONVERSATION_BURST_WINDOW_MS', async () => {
      const { workflowId } = await keywordWorkflow('nowindow');
      const { id } = await whatsappAccount();
      const who = customer();
      const first = await send(org, who, 'nowindow one', { channel_account_id: id });
      // A message arriving while the customer's execution still runs is that execution's reply
      // (with or without a window): the second is sent once the first execution has finished.
      await waitFor('the first execution to finish', async () => (await executionsOf(workflowId)).every((e) => e.status !== 'running'), 15_000);
      const second = await send(org, who, 'nowindow two', { channel_account_id: id });
      for (const res of [first, second]) {
        expect(res.status).toBe(202);
        expect(res.body.data.turn).toBeUndefined();
        expect(res.body.data.executions).toHaveLength(1);
      }
      expect((await executionsOf(workflowId)).map((e) => e.input.message)).toEqual(['nowindow one', 'nowindow two']);
      expect((await inboundOf(org, who)).every((m) => m.burst_id === null)).toBe(true);
    });

    it('messages without a window sharing a statement with held ones are handled at once as before', async () => {
      const { workflowId } = await keywordWorkflow('mixedbatch');
      const plain = await whatsappAccount();
      const windowed = await whatsappAccount({ burst_window_ms: 600 });
      // Concurrent: the receive statements batch them together (several customers per statement).
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) => send(org, customer(), `mixedbatch ${i}`, { channel_account_id: i % 2 === 0 ? plain.id : windowed.id })),
      );
      results.forEach((res, i) => {
        expect(res.status).toBe(202);
        if (i % 2 === 0) expect(res.body.data.executions).toHaveLength(1);
        else expect(res.body.data).toMatchObject({ executions: [], turn: { held_until: expect.any(String) } });
      });
      await waitFor('the held messages\' turns', async () => (await executionsOf(workflowId)).length === 12, 15_000);
    });
  });

  it('with a handoff: a handed-off customer\'s message is not held, and a burst handed off before its turn starts nothing', async () => {
    const { workflowId } = await keywordWorkflow('handburst');
    // Handed off first: recorded at once, held for no turn, starting nothing.
    const early = customer();
    await send(org, early, 'hello');
    await waitFor('the first burst to finish', async () => (await openBursts(org)) === 0);
    expect((await t.http.post(`/v1/customers/${encodeURIComponent(early)}/handoff`).set(org.auth('read_write')).send({})).status).toBe(200);
    const during = await send(org, early, 'handburst please');
    expect(during.status).toBe(202);
    expect(during.body.data).toEqual(expect.objectContaining({ executions: [] }));
    expect(during.body.data.turn).toBeUndefined();
    expect((await inboundOf(org, early)).at(-1)!.burst_id).toBeNull();

    // Handed off while the burst is open: its turn takes nothing.
    const late = customer();
    const held = await send(org, late, 'handburst now');
    expect(held.body.data.turn).toEqual({ held_until: expect.any(String) });
    expect((await t.http.post(`/v1/customers/${encodeURIComponent(late)}/handoff`).set(org.auth('read_write')).send({})).status).toBe(200);
    await waitFor('the burst to be finished', async () => (await openBursts(org)) === 0);
    await sleep(300);
    expect(await executionsOf(workflowId)).toEqual([]);
    expect((await inboundOf(org, late)).map((m) => m.execution_id)).toEqual([null]);
  });

  it('CONVERSATION_BURST_WINDOW_MS: an integer from 0 to 10000, 0 by default', () => {
    expect(AppConfig.fromEnv({}, { DATABASE_URL: inject('databaseUrl') }).conversationBurstWindowMs).toBe(0);
    expect(AppConfig.fromEnv({}, { DATABASE_URL: inject('databaseUrl'), CONVERSATION_BURST_WINDOW_MS: '10000' }).conversationBurstWindowMs).toBe(10_000);
    for (const bad of ['-1', '10001', '1.5', 'soon']) {
      expect(() => AppConfig.fromEnv({}, { DATABASE_URL: inject('databaseUrl'), CONVERSATION_BURST_WINDOW_MS: bad })).toThrow(ConfigError);
      expect(() => AppConfig.fromEnv({}, { DATABASE_URL: inject('databaseUrl'), CONVERSATION_BURST_WINDOW_MS: bad })).toThrow(/CONVERSATION_BURST_WINDOW_MS must be an integer from 0 to 10000/);
    }
  });
});
