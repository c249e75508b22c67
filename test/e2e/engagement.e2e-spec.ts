import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { resolveAnalyticsPeriod } from '../../src/analytics/analytics-period.js';
import { EngagementRepository, ENGAGEMENT_FACTS, type EngagementFilter } from '../../src/analytics/engagement.repository.js';
import { halfway } from '../../src/analytics/analytics.service.js';
import { insertCustomer, insertMessage, insertStep, insertWorkflowExecution } from '../factories/executions.js';
import { createTrigger } from '../factories/triggers.js';
import { createWorkflow, SURVEY_FORM } from '../factories/workflows.js';
import { waitFor } from '../utils/wait-for.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { foldRollups } from '../utils/rollups.js';

/**
 * Customer engagement from its rollups (migration EngagementRollups: customer_sessions, folded
 * from the messages' change log since migration RollupFolding, so each direct read below folds
 * first; execution_answers on every form step write): sessions per customer and
 * channel through the real inbound path and direct inserts (out of order, batches, deletes,
 * moves, concurrent transactions), known figures worked out by hand, a non-UTC zone moving a
 * session across the period's edge, and the rollups against the raw rows on seeded data.
 */

const SURVEY = SURVEY_FORM;

describe('engagement rollups', () => {
  let t: TestApp;
  let ds: DataSource;
  let repo: EngagementRepository;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS_ENABLED: 'false', APP_ROLE: 'all' });
    ds = t.app.get(DataSource);
    repo = new EngagementRepository(ds);
  });
  afterAll(() => t?.close());

  const get = (org: TestOrganization, query: Record<string, unknown> = {}) =>
    t.http.get('/v1/analytics/customers/engagement').query(query).set(org.auth('read_only'));

  /** The rollups' rows equal the raw rows they stand for (an organization's sessions and answer facts). */
  async function expectRollupsMatchRaw(orgId: string) {
    await foldRollups(ds);
    const norm = (rows: Record<string, unknown>[]) => rows.map((r) => JSON.parse(JSON.stringify(r)));
    for (const kind of ['sessions', 'answers', 'channels'] as const) {
      const [rollup, raw] = await Promise.all([ds.query(ENGAGEMENT_FACTS[kind].rollup, [orgId]), ds.query(ENGAGEMENT_FACTS[kind].raw, [orgId])]);
      expect(norm(rollup), kind).toEqual(norm(raw));
    }
  }

  async function sessionsOf(customerId: string) {
    await foldRollups(ds);
    const rows: { channel: string; started_at: Date; ended_at: Date; messages: number }[] = await ds.query(
      'SELECT channel, started_at, ended_at, messages FROM customer_sessions WHERE customer_id = $1 ORDER BY started_at, channel',
      [customerId],
    );
    return rows.map((r) => [r.channel, r.started_at.toISOString().slice(11, 16), r.ended_at.toISOString().slice(11, 16), r.messages]);
  }

  it('keeps sessions per customer and channel through inbound messages, out-of-order rows, batches, deletes, moves and concurrent transactions', async () => {
    const org = await createOrganization(t);
    // The real inbound path: no trigger matches, the messages are stored for a new customer.
    for (const text of ['hello', 'anyone there?']) {
      const res = await t.http.post('/v1/messages').set(org.auth('read_write')).send({ channel: 'whatsapp', customer_id: 'in-1', message: text });
      expect(res.status).toBe(202);
    }
    const [inbound] = await ds.query(`SELECT id FROM customers WHERE organization_id = $1 AND external_id = 'in-1'`, [org.id]);
    await foldRollups(ds);
    const live = await ds.query('SELECT messages FROM customer_sessions WHERE customer_id = $1', [inbound.id]);
    expect(live).toEqual([{ messages: 2 }]);
    const now = (await get(org)).body.data.engagement;
    expect(now).toMatchObject({ total_customers: 1, active_customers: 1, new_customers: 1, returning_customers: 0, average_messages_per_session: 2 });

    const c = await insertCustomer(ds, { organizationId: org.id, externalId: 'c', createdAt: '2025-01-01T00:00:00Z' });
    const put = (rows: [string, string][]) =>
      ds.query(
        `INSERT INTO messages (organization_id, customer_id, channel, direction, content, created_at)
         SELECT $1, $2, r.channel, 'inbound', 'x', r.at FROM unnest($3::text[], $4::timestamptz[]) AS r(channel, at)`,
        [org.id, c, rows.map((r) => r[0]), rows.map((r) => `2025-06-01T${r[1]}:00Z`)],
      );
    // A batch: 10:00 and 10:20 are one session (gap 20 min), 11:00 another (gap 40), instagram apart.
    await put([['whatsapp', '10:00'], ['whatsapp', '10:20'], ['whatsapp', '11:00'], ['instagram', '10:10']]);
    expect(await sessionsOf(c)).toEqual([['whatsapp', '10:00', '10:20', 2], ['instagram', '10:10', '10:10', 1], ['whatsapp', '11:00', '11:00', 1]]);
    // Out of order: 10:45 bridges them (25 and 15 minutes).
    await put([['whatsapp', '10:45']]);
    expect(await sessionsOf(c)).toEqual([['whatsapp', '10:00', '11:00', 4], ['instagram', '10:10', '10:10', 1]]);
    // Exactly 30 minutes is a new session; 29 is not.
    await put([['whatsapp', '11:30'], ['whatsapp', '09:31']]);
    expect(await sessionsOf(c)).toEqual([['whatsapp', '09:31', '11:00', 5], ['instagram', '10:10', '10:10', 1], ['whatsapp', '11:30', '11:30', 1]]);
    // A deletion splits a session.
    await ds.query(`DELETE FROM messages WHERE customer_id = $1 AND created_at = '2025-06-01T10:20:00Z'`, [c]);
    expect(await sessionsOf(c)).toEqual([
      ['whatsapp', '09:31', '10:00', 2], ['instagram', '10:10', '10:10', 1], ['whatsapp', '10:45', '11:00', 2], ['whatsapp', '11:30', '11:30', 1],
    ]);
    // A message moved to another channel leaves one session and joins another.
    await ds.query(`UPDATE messages SET channel = 'instagram' WHERE customer_id = $1 AND created_at = '2025-06-01T10:00:00Z'`, [c]);
    expect(await sessionsOf(c)).toEqual([
      ['whatsapp', '09:31', '09:31', 1], ['instagram', '10:00', '10:10', 2], ['whatsapp', '10:45', '11:00', 2], ['whatsapp', '11:30', '11:30', 1],
    ]);
    // An update that moves nothing (a consumed reply) changes nothing.
    await ds.query(`UPDATE messages SET consumed_at = now() WHERE customer_id = $1`, [c]);
    expect((await sessionsOf(c)).length).toBe(4);
    // A message at the very instant the last session ended (a reply stored in the same microsecond): one session, two messages.
    await put([['whatsapp', '11:30']]);
    expect((await sessionsOf(c)).at(-1)).toEqual(['whatsapp', '11:30', '11:30', 2]);

    // Two transactions writing the same customer and channel at once: the second waits for the first,
    // then sees its message — one session of both, not two overlapping ones.
    const url = inject('databaseUrl');
    const [a, b] = [new Client({ connectionString: url }), new Client({ connectionString: url })];
    await Promise.all([a.connect(), b.connect()]);
    try {
      const insertAt = (client: Client, at: string) =>
        client.query(`INSERT INTO messages (organization_id, customer_id, channel, direction, content, created_at) VALUES ($1, $2, 'voice', 'inbound', 'x', $3)`, [org.id, c, at]);
      await a.query('BEGIN');
      await b.query('BEGIN');
      await insertAt(a, '2025-06-02T08:00:00Z');
      const second = insertAt(b, '2025-06-02T08:10:00Z');
      await new Promise((r) => setTimeout(r, 200));
      await a.query('COMMIT');
      await second;
      await b.query('COMMIT');
    } finally {
      await Promise.all([a.end(), b.end()]);
    }
    expect((await sessionsOf(c)).filter((s) => s[0] === 'voice')).toEqual([['voice', '08:00', '08:10', 2]]);
    await expectRollupsMatchRaw(org.id);

    // A customer's deletion takes their sessions along.
    await ds.query('DELETE FROM customers WHERE id = $1', [c]);
    expect(await sessionsOf(c)).toEqual([]);
    await expectRollupsMatchRaw(org.id);
  });

  describe('figures', () => {
    let org: TestOrganization;
    let other: TestOrganization;

    beforeAll(async () => {
      org = await createOrganization(t);
      other = await createOrganization(t);
      const wf = (await createWorkflow(t, org, { configuration: { nodes: [{ id: 'hi', type: 'message', content: 'Hi', next: 'survey' }, SURVEY] } })).id;
      const otherWf = (await createWorkflow(t, other, { configuration: { nodes: [SURVEY] } })).id;
      const customer = (externalId: string, createdAt: string, organizationId = org.id) => insertCustomer(ds, { organizationId, externalId, createdAt });
      const r1 = await customer('r1', '2025-01-01T00:00:00Z'); // returning
      const r2 = await customer('r2', '2025-01-01T00:00:00Z'); // returning
      const n1 = await customer('n1', '2025-03-02T00:00:00Z'); // new
      const n2 = await customer('n2', '2025-03-05T00:00:00Z'); // new
      const msg = (customerId: string, channel: string, createdAt: string, organizationId = org.id) =>
        insertMessage(ds, { organizationId, customerId, channel, direction: 'inbound', content: 'm', createdAt });
      // r1 whatsapp: one session of 25 minutes (3 messages); instagram at the same time: a session of its own.
      await msg(r1, 'whatsapp', '2025-03-02T10:00:00Z');
      await msg(r1, 'whatsapp', '2025-03-02T10:10:00Z');
      await msg(r1, 'whatsapp', '2025-03-02T10:25:00Z');
      await msg(r1, 'instagram', '2025-03-02T10:05:00Z');
      // n1 whatsapp: 09:00 and 09:29 (29 minutes: one session), 10:00 (31 minutes later: another).
      await msg(n1, 'whatsapp', '2025-03-08T10:00:00Z'); // written first: out of order
      await msg(n1, 'whatsapp', '2025-03-08T09:00:00Z');
      await msg(n1, 'whatsapp', '2025-03-08T09:29:00Z');
      // r2 voice on March 1 at 02:00 UTC (Feb 28 in New York); n2 voice on March 11 at 02:00 UTC (March 10 in New York).
      await msg(r2, 'voice', '2025-03-01T02:00:00Z');
      await msg(n2, 'voice', '2025-03-11T02:00:00Z');
      // Another organization: never counted.
      const foreign = await customer('r1', '2025-01-01T00:00:00Z', other.id);
      await msg(foreign, 'whatsapp', '2025-03-02T10:00:00Z', other.id);

      const run = (customerId: string | null, channel: string, startedAt: string, answers: Record<string, unknown>, workflowId = wf, organizationId = org.id) =>
        insertWorkflowExecution(ds, { organizationId, workflowId, status: 'success', startedAt, durationMs: 1000, channel, customerId })
          .then((id) => insertStep(ds, id, { nodeId: 'survey', type: 'form', startedAt, durationMs: 500, output: { answers } }).then(() => id));
      await run(r1, 'whatsapp', '2025-03-02T10:00:00Z', { score: 4, recommend: 10 });
      await run(n1, 'whatsapp', '2025-03-08T09:00:00Z', { score: 2, recommend: 6 });
      await run(r1, 'instagram', '2025-03-02T10:05:00Z', { score: null, recommend: 9 });
      await run(null, 'whatsapp', '2025-03-03T10:00:00Z', { score: 1, recommend: 0 }); // no customer: not in engagement
      const removed = await run(r2, 'voice', '2025-03-01T03:00:00Z', { score: 1, recommend: 1 });
      await ds.query('DELETE FROM execution_steps WHERE execution_id = $1', [removed]); // its answers go with the step
      await run(foreign, 'whatsapp', '2025-03-02T10:00:00Z', { score: 1, recommend: 0 }, otherWf, other.id);
    });

    const MARCH = { start_date: '2025-03-01', end_date: '2025-03-10' };

    it('sessions started in the period, new and returning, satisfaction, NPS, channels and trends', async () => {
      const res = await get(org, MARCH);
      expect(res.status).toBe(200);
      expect(res.body.data.engagement).toEqual({
        total_customers: 4,
        active_customers: 3, // r1, r2, n1 (n2's session starts March 11)
        new_customers: 1,
        returning_customers: 2,
        // Sessions: r2 0 (1 message), r1 whatsapp 25 min (3), r1 instagram 0 (1), n1 29 min (2) and 0 (1).
        average_session_duration: (1_500_000 + 1_740_000) / 5,
        average_messages_per_session: 8 / 5,
        customer_satisfaction: 3, // 4 and 2; r1's instagram form skipped the rating
        net_promoter_score: ((2 - 1) * 100) / 3, // 10 and 9 promote, 6 detracts
        engagement_by_channel: {
          whatsapp: { customers: 2, average_session_duration: (1_500_000 + 1_740_000) / 3, satisfaction: 3 },
          instagram: { customers: 1, average_session_duration: 0, satisfaction: null },
          voice: { customers: 1, average_session_duration: 0, satisfaction: null },
        },
      });
      // Halves split at March 5 23:00: r2 and r1 (5 messages, rating 4), then n1 (3 messages, rating 2).
      expect(res.body.data.trends).toEqual({ customer_growth: 'decreasing', engagement_trend: 'decreasing', satisfaction_trend: 'decreasing' });
    });

    it('in America/New_York the period moves: r2 drops out, n2 comes in', async () => {
      const res = await get(org, { ...MARCH, timezone: 'America/New_York' });
      expect(res.body.data.period).toEqual({ start_date: '2025-03-01T00:00:00.000-05:00', end_date: '2025-03-10T23:59:59.999-04:00', timezone: 'America/New_York' });
      expect(res.body.data.engagement).toMatchObject({
        total_customers: 4,
        active_customers: 3, // r1, n1, n2
        new_customers: 2,
        returning_customers: 1,
        average_session_duration: (1_500_000 + 1_740_000) / 5,
        average_messages_per_session: 8 / 5,
        customer_satisfaction: 3,
        engagement_by_channel: {
          whatsapp: { customers: 2, average_session_duration: (1_500_000 + 1_740_000) / 3, satisfaction: 3 },
          instagram: { customers: 1, average_session_duration: 0, satisfaction: null },
          voice: { customers: 1, average_session_duration: 0, satisfaction: null },
        },
      });
    });

    it('segments and the channel filter', async () => {
      const fresh = (await get(org, { ...MARCH, customer_segment: 'new' })).body.data.engagement;
      expect(fresh).toEqual({
        total_customers: 2, active_customers: 1, new_customers: 1, returning_customers: 0, average_session_duration: 870_000, average_messages_per_session: 1.5,
        customer_satisfaction: 2, net_promoter_score: -100, engagement_by_channel: { whatsapp: { customers: 1, average_session_duration: 870_000, satisfaction: 2 } },
      });
      const back = (await get(org, { ...MARCH, customer_segment: 'returning' })).body.data.engagement;
      expect(back).toMatchObject({ total_customers: 2, active_customers: 2, new_customers: 0, returning_customers: 2, customer_satisfaction: 4, net_promoter_score: 100 });
      const voice = (await get(org, { ...MARCH, channel: 'voice' })).body.data.engagement;
      // Customers seen on voice by March 10: r2 (n2 only on March 11).
      expect(voice).toMatchObject({ total_customers: 1, active_customers: 1, average_session_duration: 0, customer_satisfaction: null, net_promoter_score: null });
      const insta = (await get(org, { ...MARCH, channel: 'instagram' })).body.data.engagement;
      expect(insta).toMatchObject({ active_customers: 1, customer_satisfaction: null, net_promoter_score: 100, engagement_by_channel: { instagram: { customers: 1 } } });
    });

    it('the same figures from the raw rows', async () => {
      for (const [query, filter] of [
        [MARCH, { channel: null, segment: 'all' }],
        [{ ...MARCH, timezone: 'America/New_York' }, { channel: null, segment: 'all' }],
        [MARCH, { channel: 'whatsapp', segment: 'new' }],
        [MARCH, { channel: null, segment: 'returning' }],
      ] as [Record<string, string>, EngagementFilter][]) {
        await expectSameFigures(org.id, query, filter);
      }
      await expectRollupsMatchRaw(org.id);
    });
  });

  async function expectSameFigures(orgId: string, query: Record<string, string>, filter: EngagementFilter) {
    const p = resolveAnalyticsPeriod(query, query.timezone ?? 'UTC', new Date(), false);
    const middle = halfway(p);
    const sort = (rows: { scope: string; key: string | null }[]) => [...rows].sort((x, y) => `${x.scope}/${x.key}`.localeCompare(`${y.scope}/${y.key}`));
    const [rollup, raw] = await Promise.all([repo.engagement(orgId, p.start, p.end, filter, middle), repo.engagement(orgId, p.start, p.end, filter, middle, true)]);
    const close = (rows: Record<string, unknown>[]) =>
      rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(12)) : v])));
    expect(close(sort(rollup)), JSON.stringify({ query, filter })).toEqual(close(sort(raw)));
    expect(await repo.totalCustomers(orgId, p.start, p.end, filter)).toBe(await repo.totalCustomers(orgId, p.start, p.end, filter, true));
  }

  it('the rollups give the raw rows\' figures on seeded data: single rows, batches out of order, deletes, moves, answers', async () => {
    const org = await createOrganization(t);
    const wf = (await createWorkflow(t, org, { configuration: { nodes: [SURVEY] } })).id;
    let seed = 11;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)];
    const customers: string[] = [];
    for (let i = 0; i < 6; i++) {
      customers.push(await insertCustomer(ds, { organizationId: org.id, externalId: `s${i}`, createdAt: i < 3 ? '2025-01-01T00:00:00Z' : `2025-04-0${i}T12:00:00Z` }));
    }
    // Per customer and channel a walk of gaps around the 30-minute edge.
    const rows: { customer: string; channel: string; at: string }[] = [];
    for (const customer of customers) {
      for (const channel of ['whatsapp', 'instagram', 'voice']) {
        let at = Date.parse('2025-04-01T00:00:00Z') + Math.floor(random() * 86_400_000);
        for (let k = 0; k < 15; k++) {
          at += pick([60_000, 600_000, 1_740_000, 1_800_000, 1_860_000, 7_200_000, 86_400_000]);
          rows.push({ customer, channel, at: new Date(at).toISOString() });
        }
      }
    }
    rows.sort(() => random() - 0.5);
    const insertBatch = (batch: typeof rows) =>
      ds.query(
        `INSERT INTO messages (organization_id, customer_id, channel, direction, content, created_at)
         SELECT $1, r.customer, r.channel, 'inbound', 'x', r.at FROM unnest($2::uuid[], $3::text[], $4::timestamptz[]) AS r(customer, channel, at)`,
        [org.id, batch.map((r) => r.customer), batch.map((r) => r.channel), batch.map((r) => r.at)],
      );
    // A third one row at a time, the rest in shuffled batches of 40.
    const single = Math.floor(rows.length / 3);
    for (const r of rows.slice(0, single)) await insertBatch([r]);
    for (let i = single; i < rows.length; i += 40) await insertBatch(rows.slice(i, i + 40));
    await expectRollupsMatchRaw(org.id);
    // Whole UTC days are read from stored customer sets (migration EngagementDaySets): fold them now, so
    // that the deletes and moves below leave them stale; the comparisons at the end must fold those days again.
    const APRIL = { start_date: '2025-04-01', end_date: '2025-04-30' };
    await expectSameFigures(org.id, APRIL, { channel: null, segment: 'all' });
    const [{ stored }] = await ds.query('SELECT count(*)::int AS stored FROM engagement_day_sets WHERE organization_id = $1', [org.id]);
    expect(stored).toBeGreaterThan(5);

    // Deletes (one by one and a batch) and moves in time and channel.
    const ids: { id: string }[] = await ds.query('SELECT id FROM messages WHERE organization_id = $1 ORDER BY id', [org.id]);
    for (let i = 0; i < 5; i++) await ds.query('DELETE FROM messages WHERE id = $1', [pick(ids).id]);
    await ds.query('DELETE FROM messages WHERE id = ANY ($1::uuid[])', [ids.filter(() => random() < 0.1).map((r) => r.id)]);
    await ds.query(
      `UPDATE messages SET created_at = created_at + interval '25 minutes' WHERE id = ANY ($1::uuid[])`,
      [ids.filter(() => random() < 0.05).map((r) => r.id)],
    );
    await ds.query(`UPDATE messages SET channel = 'whatsapp' WHERE id = ANY ($1::uuid[])`, [ids.filter(() => random() < 0.05).map((r) => r.id)]);
    await expectRollupsMatchRaw(org.id);

    // Answers: executions of the customers with rating and NPS answers (some skipped), then a step deleted and an execution moved.
    const executions: string[] = [];
    for (let i = 0; i < 40; i++) {
      const startedAt = new Date(Date.parse('2025-04-01T00:00:00Z') + Math.floor(random() * 20 * 86_400_000)).toISOString();
      const id = await insertWorkflowExecution(ds, {
        organizationId: org.id, workflowId: wf, status: 'success', startedAt, durationMs: 10, channel: pick(['whatsapp', 'instagram', 'voice', null]),
        customerId: random() < 0.9 ? pick(customers) : null,
      });
      const answer = (max: number, min: number) => (random() < 0.2 ? null : min + Math.floor(random() * (max - min + 1)));
      await insertStep(ds, id, { nodeId: 'survey', type: 'form', startedAt, durationMs: 5, output: { answers: { score: answer(5, 1), recommend: answer(10, 0) } } });
      executions.push(id);
    }
    await ds.query('DELETE FROM execution_steps WHERE execution_id = $1', [executions[0]]);
    await ds.query(`UPDATE workflow_executions SET channel = 'voice', started_at = started_at + interval '3 days' WHERE id = ANY ($1::uuid[])`, [executions.slice(1, 6)]);
    await ds.query('DELETE FROM workflow_executions WHERE id = $1', [executions[6]]);
    await ds.query('DELETE FROM customers WHERE id = $1', [customers[5]]);
    await expectRollupsMatchRaw(org.id);

    for (const [query, filter] of [
      [{ start_date: '2025-04-01', end_date: '2025-04-30' }, { channel: null, segment: 'all' }],
      [{ start_date: '2025-04-03', end_date: '2025-04-12' }, { channel: null, segment: 'new' }],
      [{ start_date: '2025-04-03', end_date: '2025-04-12', timezone: 'Asia/Kolkata' }, { channel: 'instagram', segment: 'returning' }],
      [{ start_date: '2025-04-05T07:45:00', end_date: '2025-04-09T13:15:00', timezone: 'Australia/Adelaide' }, { channel: 'voice', segment: 'all' }],
    ] as [Record<string, string>, EngagementFilter][]) {
      await expectSameFigures(org.id, query, filter);
    }

    // A stored set is believed while its session count and checksum are the day's: one filled with 100
    // strangers (count and checksum kept) is counted; its checksum off by one, the day is folded again.
    const p = resolveAnalyticsPeriod(APRIL, 'UTC', new Date(), false);
    const active = async () =>
      (await repo.engagement(org.id, p.start, p.end, { channel: null, segment: 'all' }, halfway(p))).find((r) => r.scope === 'all')!.active_customers;
    const truth = await active();
    const [day] = await ds.query(
      `SELECT day, channel FROM engagement_day_sets WHERE organization_id = $1 AND sessions > 0 AND day > '2025-04-02' ORDER BY day LIMIT 1`,
      [org.id],
    );
    const strangers = `(SELECT string_agg(int8send(i), ''::bytea) FROM generate_series(1, 100) i)`;
    await ds.query(`UPDATE engagement_day_sets SET customers = ${strangers} WHERE organization_id = $1 AND day = $2 AND channel = $3`, [org.id, day.day, day.channel]);
    expect(await active()).toBeGreaterThanOrEqual(100);
    await ds.query(`UPDATE engagement_day_sets SET checksum = checksum + 1 WHERE organization_id = $1 AND day = $2 AND channel = $3`, [org.id, day.day, day.channel]);
    expect(await active()).toBe(truth);
  });

  it('a form answered through the real inbound path counts once it completes', async () => {
    const org = await createOrganization(t);
    const created = await createWorkflow(t, org, { channel: 'instagram', configuration: { nodes: [SURVEY] } });
    expect((await t.http.post(`/v1/workflows/${created.id}/activate`).set(org.auth('read_write'))).status).toBe(200);
    await createTrigger(t, org, created.id, 'message', { keywords: ['survey'] }, { channel: 'instagram' });
    const send = (message: string) => t.http.post('/v1/messages').set(org.auth('read_write')).send({ channel: 'instagram', customer_id: 'form-1', message });
    const first = await send('survey please');
    const id = first.body.data.executions[0].workflow_execution_id;
    await waitFor('the first question', async () => (await ds.query('SELECT waiting FROM workflow_executions WHERE id = $1', [id]))[0].waiting);
    await send('3');
    await waitFor('the second question', async () => (await ds.query(`SELECT count(*)::int AS n FROM messages WHERE execution_id = $1`, [id]))[0].n === 3);
    expect(await ds.query('SELECT * FROM execution_answers WHERE execution_id = $1', [id])).toEqual([]);
    await send('6');
    await waitFor('the end', async () => (await ds.query('SELECT status FROM workflow_executions WHERE id = $1', [id]))[0].status === 'success');
    const engagement = (await get(org, { timezone: 'Asia/Tokyo' })).body.data.engagement;
    expect(engagement).toMatchObject({
      total_customers: 1, active_customers: 1, new_customers: 1, customer_satisfaction: 3, net_promoter_score: -100,
      engagement_by_channel: { instagram: { customers: 1, satisfaction: 3 } },
    });
    // Five messages (3 inbound, 2 prompts) within seconds: one session.
    expect(engagement.average_messages_per_session).toBe(5);
    await expectRollupsMatchRaw(org.id);
  });
});
