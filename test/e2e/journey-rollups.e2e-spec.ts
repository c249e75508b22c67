import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawJourneySplit } from '../../src/analytics/analytics-sql.js';
import { JourneysRepository } from '../../src/analytics/journeys.repository.js';
import { PerformanceRepository } from '../../src/analytics/performance.repository.js';
import { createWorkflow } from '../factories/workflows.js';
import { expectJourneyRollupsMatchRows } from '../utils/journey-rollups.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';

/**
 * The journey and node rollups (migration JourneyRollups) give the same numbers as the recorded
 * rows: their rows equal the rows grouped afresh, and the journey, node and most-executed-workflow
 * reads over periods on and off UTC day boundaries (rollup days plus or minus raw partial days)
 * equal the same reads over the rows alone — after batch inserts, step updates, finishes written
 * as the engine writes them (execution update and steps in one statement), executions moved to
 * another day or workflow, and deletions of steps, executions and a workflow.
 */

const NODES = [
  { id: 'a', type: 'message', content: 'Hi', next: 'b' },
  { id: 'b', type: 'form', fields: [{ name: 'score', type: 'rating', required: true, label: 'Rate us' }], next: 'c' },
  { id: 'c', type: 'message', content: 'Bye' },
];

/**
 * `n` executions of a workflow every 47 minutes from `base`, of six kinds (i % 6): 0 success (steps
 * a, b, c), 1 failed at c (a, b, failed c), 2 expired waiting at b (a), 3 running, waiting at b (a),
 * 4 running, not started (none), 5 failed without an error (a, b). One statement, steps included.
 */
const SEED = `
  WITH g AS MATERIALIZED (
    SELECT i, uuid_v7() AS id, $3::timestamptz + i * interval '47 minutes' AS started_at, i % 6 AS kind, 37 + (i * 7919) % 900 AS ms
      FROM generate_series(1, $4::int) i
  ), e AS (
    INSERT INTO workflow_executions (id, organization_id, workflow_id, workflow_version, status, state, waiting, error, started_at, completed_at, duration_ms)
    SELECT id, $1, $2, 1, (ARRAY['success', 'failed', 'failed', 'running', 'running', 'failed'])[kind + 1],
           (CASE WHEN kind IN (2, 3) THEN '{"cursor":"b"}' ELSE '{}' END)::jsonb, kind = 3,
           (CASE kind WHEN 1 THEN '{"code":"NODE_FAILED","message":"x","node_id":"c"}'
                      WHEN 2 THEN '{"code":"CONVERSATION_TIMEOUT","message":"x","node_id":"b"}' END)::jsonb,
           started_at, CASE WHEN kind NOT IN (3, 4) THEN started_at + ms * interval '10 milliseconds' END,
           CASE WHEN kind NOT IN (3, 4) THEN ms * 10 END
      FROM g
  )
  INSERT INTO execution_steps (execution_id, node_id, type, status, started_at, completed_at, duration_ms)
  SELECT g.id, n.node, n.type, CASE WHEN g.kind = 1 AND n.node = 'c' THEN 'failed' ELSE 'completed' END, g.started_at, g.started_at, g.ms + n.k
    FROM g JOIN (VALUES (0, 'a', 'message'), (1, 'b', 'form'), (2, 'c', 'message')) n(k, node, type)
      ON n.k < (ARRAY[3, 3, 1, 1, 0, 2])[g.kind + 1]`;

const at = (iso: string) => new Date(iso);
/** Periods: whole UTC days; partial ends subtracted from a whole day (start) and added (end); the other way round; both within two UTC days; a +05:30 zone's days. */
const PERIODS: [Date, Date][] = [
  [at('2025-03-01T00:00:00.000Z'), at('2025-03-10T23:59:59.999Z')],
  [at('2025-03-02T05:17:00.000Z'), at('2025-03-08T03:44:59.123Z')],
  [at('2025-03-01T20:00:00.000Z'), at('2025-03-09T19:00:00.000Z')],
  [at('2025-03-03T10:00:00.000Z'), at('2025-03-04T09:00:00.000Z')],
  [at('2025-02-28T18:30:00.000Z'), at('2025-03-12T18:29:59.999Z')],
];

describe('journey rollups equal the recorded rows', () => {
  let t: TestApp;
  let ds: DataSource;
  let org: TestOrganization;
  let other: TestOrganization;
  let repo: JourneysRepository;
  let performance: PerformanceRepository;
  let w1: string;
  let w2: string;

  const seed = (organizationId: string, workflowId: string, base: string, n: number) => ds.query(SEED, [organizationId, workflowId, base, n]);
  const ids = async (where: string, limit: number): Promise<string[]> =>
    (await ds.query(`SELECT id FROM workflow_executions WHERE organization_id = $1 AND ${where} ORDER BY id LIMIT ${limit}`, [org.id])).map((r: { id: string }) => r.id);

  const byKey = <T>(rows: T[]) => [...rows].map((r) => JSON.stringify(r)).sort();

  /** The rollup tables, then every read over every period, against the rows. */
  async function expectSameAsRows(workflows: string[]): Promise<void> {
    const counted = await expectJourneyRollupsMatchRows(ds, org.id);
    expect(counted.executions).toBeGreaterThan(100);
    expect(counted.steps).toBeGreaterThan(100);
    for (const [start, end] of PERIODS) {
      const raw = rawJourneySplit(start, end);
      for (const wf of workflows) {
        const [viaRollups, viaRows] = [await repo.journey(org.id, wf, start, end), await repo.journey(org.id, wf, start, end, raw)];
        const label = `${wf} ${start.toISOString()} .. ${end.toISOString()}`;
        expect({ label, outcomes: byKey(viaRollups.outcomes), nodes: byKey(viaRollups.nodes) }).toEqual({
          label, outcomes: byKey(viaRows.outcomes), nodes: byKey(viaRows.nodes),
        });
        expect({ label, nodes: await performance.nodes(org.id, wf, start, end) }).toEqual({ label, nodes: await performance.nodes(org.id, wf, start, end, raw) });
      }
      expect(await repo.topWorkflow(org.id, start, end)).toBe(await repo.topWorkflow(org.id, start, end, raw));
    }
  }

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS_ENABLED: 'false', APP_ROLE: 'api' });
    ds = t.app.get(DataSource);
    repo = new JourneysRepository(ds);
    performance = new PerformanceRepository(ds);
    org = await createOrganization(t);
    other = await createOrganization(t);
    w1 = (await createWorkflow(t, org, { configuration: { nodes: NODES } })).id;
    w2 = (await createWorkflow(t, org, { configuration: { nodes: NODES } })).id;
    const foreign = (await createWorkflow(t, other, { configuration: { nodes: NODES } })).id;
    await seed(org.id, w1, '2025-03-01T00:00:00Z', 300);
    await seed(org.id, w2, '2025-03-02T07:00:00Z', 120);
    await seed(other.id, foreign, '2025-03-01T00:00:00Z', 400);
  });
  afterAll(() => t?.close());

  it('after batch inserts of executions with their steps', async () => {
    await expectSameAsRows([w1, w2]);
    // The seed as worked out by hand for w1's first day (i = 1..30 start on 2025-03-01 UTC): 5 of each kind.
    const [day] = await ds.query(
      `SELECT sum(executions)::int AS n, (sum(executions) FILTER (WHERE waits))::int AS waits FROM workflow_outcome_days WHERE workflow_id = $1 AND day = '2025-03-01'`,
      [w1],
    );
    expect(day).toEqual({ n: 30, waits: 10 });
  });

  it('after step updates (status, duration, type), and an update that changes no counted column', async () => {
    const some = await ids(`workflow_id = '${w1}' AND status = 'success'`, 20);
    await ds.query(
      `UPDATE execution_steps SET duration_ms = duration_ms + 13, status = CASE WHEN status = 'completed' THEN 'failed' ELSE 'completed' END
        WHERE node_id = 'b' AND execution_id = ANY ($1::uuid[])`,
      [some],
    );
    await ds.query(`UPDATE execution_steps SET type = 'survey' WHERE node_id = 'c' AND execution_id = ANY ($1::uuid[])`, [some.slice(0, 5)]);
    await ds.query(`UPDATE execution_steps SET output = '{"seen":true}' WHERE execution_id = ANY ($1::uuid[])`, [some]);
    await expectSameAsRows([w1, w2]);
  });

  it('after waits end as the engine writes it: the execution and its new steps in one statement', async () => {
    // Replies: half the waiting executions finish (b and c complete).
    await ds.query(
      `WITH x AS (
         UPDATE workflow_executions e SET status = 'success', waiting = false, state = '{}', completed_at = started_at + interval '5 minutes', duration_ms = 300000
          WHERE organization_id = $1 AND status = 'running' AND waiting AND extract(minute FROM started_at)::int % 2 = 0
         RETURNING e.id, e.started_at
       )
       INSERT INTO execution_steps (execution_id, node_id, type, status, started_at, completed_at, duration_ms)
       SELECT x.id, n.node, n.type, 'completed', x.started_at, x.started_at, 11 FROM x CROSS JOIN (VALUES ('b', 'form'), ('c', 'message')) n(node, type)`,
      [org.id],
    );
    // The rest expire.
    await ds.query(
      `UPDATE workflow_executions SET status = 'failed', waiting = false, duration_ms = 86400000, completed_at = started_at + interval '1 day',
              error = jsonb_build_object('code', 'CONVERSATION_TIMEOUT', 'message', 'x', 'node_id', state->>'cursor')
        WHERE organization_id = $1 AND status = 'running' AND waiting`,
      [org.id],
    );
    // Executions not started yet run a, then wait at b.
    await ds.query(
      `WITH x AS (
         UPDATE workflow_executions e SET waiting = true, state = '{"cursor":"b"}' WHERE organization_id = $1 AND status = 'running' AND NOT waiting
         RETURNING e.id, e.started_at
       )
       INSERT INTO execution_steps (execution_id, node_id, type, status, started_at, completed_at, duration_ms)
       SELECT x.id, 'a', 'message', 'completed', x.started_at, x.started_at, 7 FROM x`,
      [org.id],
    );
    const [{ n }] = await ds.query(`SELECT count(*)::int AS n FROM workflow_executions WHERE organization_id = $1 AND status = 'running' AND waiting`, [org.id]);
    expect(n).toBeGreaterThan(10);
    await expectSameAsRows([w1, w2]);
  });

  it('after executions move to another day or workflow, their steps with them', async () => {
    await ds.query(`UPDATE workflow_executions SET started_at = started_at + interval '30 hours' WHERE id = ANY ($1::uuid[])`, [
      await ids(`workflow_id = '${w1}'`, 12),
    ]);
    await ds.query(`UPDATE workflow_executions SET workflow_id = $2 WHERE id = ANY ($1::uuid[])`, [await ids(`workflow_id = '${w1}' AND status = 'success'`, 3), w2]);
    await expectSameAsRows([w1, w2]);
  });

  it('after deletions of steps, executions (their steps by cascade) and then a whole workflow', async () => {
    await ds.query(`DELETE FROM execution_steps WHERE node_id = 'c' AND execution_id = ANY ($1::uuid[])`, [await ids(`workflow_id = '${w1}' AND status = 'success'`, 7)]);
    await ds.query(`DELETE FROM workflow_executions WHERE id = ANY ($1::uuid[])`, [await ids(`workflow_id = '${w1}' AND status <> 'running'`, 15)]);
    await expectSameAsRows([w1, w2]);
    await ds.query(`DELETE FROM workflows WHERE id = $1`, [w2]);
    await seed(org.id, w1, '2025-03-04T03:03:00Z', 90);
    await expectSameAsRows([w1]);
  });

  it('reads the whole days from the rollups: a change made behind the triggers shows in the rows only', async () => {
    const [start, end] = PERIODS[0];
    const before = await repo.journey(org.id, w1, start, end);
    const [target] = await ids(`workflow_id = '${w1}' AND status = 'success' AND started_at >= '2025-03-05' AND started_at < '2025-03-06'`, 1);
    await ds.transaction(async (m) => {
      await m.query(`ALTER TABLE workflow_executions DISABLE TRIGGER workflow_executions_journey_update`);
      await m.query(`UPDATE workflow_executions SET status = 'failed', error = '{"code":"HIDDEN"}' WHERE id = $1`, [target]);
      await m.query(`ALTER TABLE workflow_executions ENABLE TRIGGER workflow_executions_journey_update`);
    });
    const raw = await repo.journey(org.id, w1, start, end, rawJourneySplit(start, end));
    expect(byKey((await repo.journey(org.id, w1, start, end)).outcomes)).toEqual(byKey(before.outcomes));
    expect(raw.outcomes.some((o) => o.code === 'HIDDEN')).toBe(true);
    // Put back the same way, so the rollups are right again.
    await ds.transaction(async (m) => {
      await m.query(`ALTER TABLE workflow_executions DISABLE TRIGGER workflow_executions_journey_update`);
      await m.query(`UPDATE workflow_executions SET status = 'success', error = NULL WHERE id = $1`, [target]);
      await m.query(`ALTER TABLE workflow_executions ENABLE TRIGGER workflow_executions_journey_update`);
    });
    await expectJourneyRollupsMatchRows(ds, org.id);
  });
});
