import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveAnalyticsPeriod } from '../../src/analytics/analytics-period.js';
import { journeySplit, rawJourneySplit } from '../../src/analytics/analytics-sql.js';
import { ENGAGEMENT_FACTS } from '../../src/analytics/engagement.repository.js';
import { WorkflowAnalyticsRepository } from '../../src/analytics/workflow-analytics.repository.js';
import { insertStep, insertWorkflowExecution } from '../factories/executions.js';
import { createWorkflow, SURVEY_FORM } from '../factories/workflows.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';

/**
 * The per-day answer rollup (migration AnswerDays: workflow_answer_days, kept by a statement
 * trigger on execution_answers) against the rows it sums — execution_answers and, through it, the
 * form steps themselves — through single and batch inserts, answers changed, steps and executions
 * deleted, starts moved to another day, an update of the answer rows themselves and a workflow's
 * deletion; and the workflow analytics' `customer_satisfaction` (whole UTC days from the rollup,
 * the ends from the rows) against the raw rows in UTC and in zones whose ends are partial days,
 * one with a half-hour offset.
 */

const SURVEY = SURVEY_FORM;

/** The figures per workflow and UTC day of the answer rows `rows` (execution_answers' columns), of one organization `$1`. */
const daysOf = (rows: string) => `
  SELECT workflow_id, date_trunc('day', started_at, 'UTC') AS day, count(*)::int AS answered, sum(rating_sum)::float8 AS rating_sum,
         sum(ratings)::int AS ratings, sum(promoters)::int AS promoters, sum(detractors)::int AS detractors, sum(nps_answers)::int AS nps_answers
    FROM (${rows}) r WHERE organization_id = $1 GROUP BY 1, 2 ORDER BY 1, 2`;

const ROLLUP = `
  SELECT workflow_id, day, answered, rating_sum, ratings, promoters, detractors, nps_answers FROM workflow_answer_days
   WHERE organization_id = $1 AND (answered, rating_sum, ratings, promoters, detractors, nps_answers) <> (0, 0, 0, 0, 0, 0) ORDER BY 1, 2`;

describe('answer day rollup', () => {
  let t: TestApp;
  let ds: DataSource;
  let repo: WorkflowAnalyticsRepository;
  let org: TestOrganization;
  let other: TestOrganization;
  let wf: string;
  let wf2: string;
  let otherWf: string;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS_ENABLED: 'false', APP_ROLE: 'api' });
    ds = t.app.get(DataSource);
    repo = new WorkflowAnalyticsRepository(ds);
    org = await createOrganization(t);
    other = await createOrganization(t);
    const configuration = { nodes: [{ id: 'hi', type: 'message', content: 'Hi', next: 'survey' }, SURVEY] };
    wf = (await createWorkflow(t, org, { configuration })).id;
    wf2 = (await createWorkflow(t, org, { configuration })).id;
    otherWf = (await createWorkflow(t, other, { configuration })).id;
  });
  afterAll(() => t?.close());

  const run = (workflowId: string, startedAt: string, answers: Record<string, unknown>, organizationId = org.id) =>
    insertWorkflowExecution(ds, { organizationId, workflowId, status: 'success', startedAt, durationMs: 1000, channel: 'whatsapp' }).then((id) =>
      insertStep(ds, id, { nodeId: 'survey', type: 'form', startedAt, durationMs: 500, output: { answers } }).then(() => id),
    );

  /** The rollup equals execution_answers summed per day, and (unless the answer rows were edited directly) the form steps summed per day. */
  async function expectDaysMatchRows(organizationId: string, label: string, { steps = true } = {}) {
    const rollup = await ds.query(ROLLUP, [organizationId]);
    expect(rollup, `${label}: execution_answers`).toEqual(await ds.query(daysOf('SELECT * FROM execution_answers'), [organizationId]));
    if (steps) {
      const raw = ENGAGEMENT_FACTS.answers.raw.replace(/ORDER BY execution_id\s*$/, '');
      expect(rollup, `${label}: form steps`).toEqual(await ds.query(daysOf(raw), [organizationId]));
    }
  }

  /** The mean rating of a workflow's answers in `[start, end]`, from the steps themselves. */
  async function rawSatisfaction(organizationId: string, workflowId: string, start: Date, end: Date): Promise<number | null> {
    const raw = ENGAGEMENT_FACTS.answers.raw.replace(/ORDER BY execution_id\s*$/, '');
    const [row] = await ds.query(
      `SELECT (sum(rating_sum) / NULLIF(sum(ratings), 0))::float8 AS s FROM (${raw}) a WHERE workflow_id = $2 AND started_at >= $3 AND started_at <= $4`,
      [organizationId, workflowId, start, end],
    );
    return row.s;
  }

  const PERIODS: [string, string, string][] = [
    ['2025-05-01', '2025-05-20', 'UTC'],
    ['2025-05-01', '2025-05-20', 'Asia/Tokyo'],
    ['2025-05-03', '2025-05-11', 'Asia/Kolkata'],
    ['2025-05-03', '2025-05-11', 'America/New_York'],
    ['2025-05-05T07:20:00', '2025-05-05T19:00:00', 'UTC'],
    ['2025-04-20', '2025-06-10', 'Pacific/Chatham'],
  ];

  async function expectSatisfactionMatchesRows(label: string) {
    for (const [startDate, endDate, tz] of PERIODS) {
      const p = resolveAnalyticsPeriod({ start_date: startDate, end_date: endDate }, tz, new Date(), false);
      const expected = await rawSatisfaction(org.id, wf, p.start, p.end);
      const context = `${label}: ${tz} ${p.start.toISOString()}..${p.end.toISOString()}`;
      expect(await repo.workflowSatisfaction(org.id, wf, p.start, p.end), context).toBe(expected);
      expect(await repo.workflowSatisfaction(org.id, wf, p.start, p.end, rawJourneySplit(p.start, p.end)), context).toBe(expected);
    }
  }

  it('keeps the day sums of the answers through inserts, batches, changes, moves and deletes; satisfaction from them equals the rows\'', async () => {
    // Known answers: 05-05 23:30 UTC is 05-06 in Tokyo and 05:00 on 05-06 in Kolkata.
    await run(wf, '2025-05-05T08:00:00Z', { score: 5, recommend: 10 });
    await run(wf, '2025-05-05T23:30:00Z', { score: 1, recommend: 3 });
    await run(wf, '2025-05-06T12:00:00Z', { score: 3 });
    await run(wf, '2025-05-07T12:00:00Z', { recommend: 9 });
    await run(wf2, '2025-05-05T09:00:00Z', { score: 2, recommend: 7 });
    await run(otherWf, '2025-05-05T09:00:00Z', { score: 4, recommend: 0 }, other.id);
    expect(await ds.query(`SELECT day, answered, rating_sum, ratings, promoters, detractors, nps_answers FROM workflow_answer_days WHERE workflow_id = $1 ORDER BY day`, [wf])).toEqual([
      { day: new Date('2025-05-05T00:00:00Z'), answered: 2, rating_sum: 6, ratings: 2, promoters: 1, detractors: 1, nps_answers: 2 },
      { day: new Date('2025-05-06T00:00:00Z'), answered: 1, rating_sum: 3, ratings: 1, promoters: 0, detractors: 0, nps_answers: 0 },
      { day: new Date('2025-05-07T00:00:00Z'), answered: 1, rating_sum: 0, ratings: 0, promoters: 1, detractors: 0, nps_answers: 1 },
    ]);
    const satisfaction = async (query: Record<string, string>) => {
      const res = await t.http.get(`/v1/analytics/workflows/${wf}`).query({ metrics: 'customer_satisfaction', ...query }).set(org.auth('read_only'));
      expect(res.status).toBe(200);
      return res.body.data.metrics.customer_satisfaction;
    };
    // UTC 05-05: ratings 5 and 1. Tokyo 05-05 (05-04 15:00Z .. 05-05 14:59Z): 5 only. Tokyo 05-06: 1 and 3.
    expect(await satisfaction({ start_date: '2025-05-05', end_date: '2025-05-05' })).toBe(3);
    expect(await satisfaction({ start_date: '2025-05-05', end_date: '2025-05-05', timezone: 'Asia/Tokyo' })).toBe(5);
    expect(await satisfaction({ start_date: '2025-05-06', end_date: '2025-05-06', timezone: 'Asia/Tokyo' })).toBe(2);
    // Kolkata 05-06 (05-05 18:30Z .. 05-06 18:29Z): 1 and 3, the whole UTC day 05-06 from the rollup minus its last 5.5 hours of rows.
    expect(await satisfaction({ start_date: '2025-05-06', end_date: '2025-05-06', timezone: 'Asia/Kolkata' })).toBe(2);
    // A week: 5, 1, 3 (the nps-only answer has no rating); a period without ratings: null.
    expect(await satisfaction({ start_date: '2025-05-01', end_date: '2025-05-10' })).toBe(3);
    expect(await satisfaction({ start_date: '2025-05-07', end_date: '2025-05-07' })).toBeNull();
    await expectDaysMatchRows(org.id, 'known');
    await expectSatisfactionMatchesRows('known');

    // A batch in one statement: 300 executions over three weeks with form steps, every fifth without a rating.
    await ds.query(
      `WITH e AS (
         INSERT INTO workflow_executions (organization_id, workflow_id, workflow_version, channel, status, started_at, completed_at, duration_ms)
         SELECT $1, CASE WHEN g % 4 = 0 THEN $3::uuid ELSE $2::uuid END, 1, 'whatsapp', 'success',
                timestamptz '2025-05-01' + g * interval '97 minutes', timestamptz '2025-05-01' + g * interval '97 minutes' + interval '1 second', 1000
           FROM generate_series(0, 299) g
         RETURNING id, started_at
       )
       INSERT INTO execution_steps (execution_id, node_id, type, status, started_at, completed_at, duration_ms, input, output)
       SELECT id, 'survey', 'form', 'completed', started_at, started_at, 10, '{}',
              jsonb_build_object('answers', jsonb_strip_nulls(jsonb_build_object(
                'score', CASE WHEN n % 5 <> 0 THEN 1 + n % 5 END, 'recommend', n % 11)))
         FROM (SELECT id, started_at, (extract(epoch FROM started_at)::bigint / 60) % 997 AS n FROM e) x`,
      [org.id, wf, wf2],
    );
    await expectDaysMatchRows(org.id, 'batch');
    await expectDaysMatchRows(other.id, 'batch (other organization)');
    await expectSatisfactionMatchesRows('batch');

    const pick = async (where: string): Promise<string> => {
      const [row] = await ds.query(`SELECT execution_id FROM execution_answers WHERE workflow_id = $1 AND ${where} ORDER BY started_at LIMIT 1`, [wf]);
      if (!row) throw new Error(`no answers where ${where}`);
      return row.execution_id;
    };
    // An answer changed, a step deleted, an execution deleted, a start moved across midnight, a batch of starts moved.
    await ds.query(`UPDATE execution_steps SET output = '{"answers":{"score":1,"recommend":2}}' WHERE execution_id = $1`, [await pick(`ratings = 1 AND rating_sum = 5`)]);
    await ds.query(`DELETE FROM execution_steps WHERE execution_id = $1`, [await pick(`ratings = 1 AND started_at > '2025-05-08'`)]);
    await ds.query(`DELETE FROM workflow_executions WHERE id = $1`, [await pick(`ratings = 1 AND started_at > '2025-05-12'`)]);
    await ds.query(`UPDATE workflow_executions SET started_at = started_at + interval '20 hours' WHERE id = $1`, [await pick(`started_at > '2025-05-10'`)]);
    await ds.query(`UPDATE workflow_executions SET started_at = started_at - interval '1 day 7 hours' WHERE workflow_id = $1 AND started_at >= '2025-05-14' AND started_at < '2025-05-15'`, [wf]);
    await expectDaysMatchRows(org.id, 'changed');
    await expectSatisfactionMatchesRows('changed');
    // A batch delete of executions (their answers cascade) over a day and a half.
    await ds.query(`DELETE FROM workflow_executions WHERE workflow_id = $1 AND started_at >= '2025-05-09T12:00:00Z' AND started_at < '2025-05-11'`, [wf]);
    await expectDaysMatchRows(org.id, 'deleted');
    await expectSatisfactionMatchesRows('deleted');

    // The answer rows updated themselves (what execution_answers_refresh's upsert does on a conflict): figures move out and in.
    await ds.query(
      `UPDATE execution_answers SET started_at = started_at + interval '2 days', rating_sum = rating_sum + 1
        WHERE workflow_id = $1 AND ratings = 1 AND started_at >= '2025-05-03' AND started_at < '2025-05-04'`,
      [wf],
    );
    await expectDaysMatchRows(org.id, 'answer rows updated', { steps: false });

    // The other organization's workflow deleted: its rows cascade, the first organization's stay.
    await ds.query(`DELETE FROM workflows WHERE id = $1`, [otherWf]);
    expect(await ds.query(`SELECT * FROM workflow_answer_days WHERE workflow_id = $1`, [otherWf])).toEqual([]);
    await expectDaysMatchRows(org.id, 'other workflow deleted', { steps: false });
  });

  it('reads at most half a day of answer rows at each end, subtracting when the outside is smaller', () => {
    // Kolkata 05-06 = 05-05T18:30Z .. 05-06T18:29:59.999Z: the UTC day 05-06 from the rollup, plus 5.5 hours before, minus 5.5 hours after.
    expect(journeySplit(new Date('2025-05-05T18:30:00Z'), new Date('2025-05-06T18:29:59.999Z'))).toEqual({
      ranges: [
        { from: '2025-05-05T18:30:00.000000Z', to: '2025-05-06T00:00:00.000000Z', sign: 1 },
        { from: '2025-05-06T18:29:59.999001Z', to: '2025-05-07T00:00:00.000000Z', sign: -1 },
      ],
      daysFrom: '2025-05-06T00:00:00.000000Z',
      daysTo: '2025-05-07T00:00:00.000000Z',
    });
  });

  it('plans its trigger statements with sequential scans disabled (migration TriggerPlans\' rule)', async () => {
    const [fn] = await ds.query(`SELECT proconfig FROM pg_proc WHERE proname = 'workflow_answer_days_maintain'`);
    expect(fn.proconfig).toEqual(['enable_seqscan=off']);
  });
});
