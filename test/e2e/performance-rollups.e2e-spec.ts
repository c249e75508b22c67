import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PerformanceRepository, PERFORMANCE_RAW, splitDays, type PerformanceRow } from '../../src/analytics/performance.repository.js';
import { DURATION_ERROR_BOUND } from '../../migrations/1768000000000-PerformanceRollups.js';
import { insertWorkflowExecution } from '../factories/executions.js';
import { createWorkflow } from '../factories/workflows.js';
import { expectPerformanceRollupsMatchRows } from '../utils/performance-rollups.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';

/**
 * `/performance` from its rollups (migration PerformanceRollups: duration buckets and error codes
 * per workflow and UTC day) with the partial days at the period's ends read raw: the figures
 * asserted against known seeds and against the raw definitions (percentile_cont over the rows),
 * and the rollups against the rows through inserts, finishes, updates, deletes and batches.
 */

/** PERFORMANCE_RAW's row: the performance figures and the channels'. */
interface RawPerformance extends PerformanceRow {
  channels: Record<string, { executions: number; success_rate: number | null; average_duration_ms: number | null }> | null;
}

/** The minute of a row's start since the epoch. */
const MINUTE = `(extract(epoch FROM started_at)::bigint / 60)`;

/** PostgreSQL's percentile_cont over sorted values. */
function percentileCont(sorted: number[], q: number): number {
  const pos = q * (sorted.length - 1);
  const [lo, hi] = [sorted[Math.floor(pos)], sorted[Math.ceil(pos)]];
  return lo + (pos - Math.floor(pos)) * (hi - lo);
}

/** Within the stated bound of the exact value (null for null). */
function expectWithinBound(actual: number | null, exact: number | null, label: string): void {
  if (exact === null) {
    expect(actual, label).toBeNull();
    return;
  }
  expect(actual, label).not.toBeNull();
  expect(Math.abs((actual as number) - exact), `${label}: ${actual} vs ${exact}`).toBeLessThanOrEqual(DURATION_ERROR_BOUND * Math.abs(exact) + 1e-9);
}

describe('performance rollups', () => {
  let t: TestApp;
  let ds: DataSource;
  let org: TestOrganization;
  let wf: string;
  let repo: PerformanceRepository;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS_ENABLED: 'false', APP_ROLE: 'api' });
    ds = t.app.get(DataSource);
    repo = new PerformanceRepository(ds);
    org = await createOrganization(t);
    wf = (await createWorkflow(t, org)).id;
  });
  afterAll(() => t?.close());

  const get = (path: string, query: Record<string, unknown> = {}) => t.http.get(path).query(query).set(org.auth('read_only'));

  const raw = async (organizationId: string, workflowId: string, start: Date, end: Date, tz: string): Promise<RawPerformance> =>
    (await ds.query(PERFORMANCE_RAW, [organizationId, workflowId, start, end, tz]))[0];

  /** The repository's figures against the raw definitions: everything exact but the percentiles, which are within the bound. */
  const expectSameAsRaw = async (organizationId: string, workflowId: string, start: Date, end: Date, tz: string, hourly: boolean) => {
    const { row, channels } = await repo.performance(organizationId, workflowId, start, end, tz, hourly);
    const r = await raw(organizationId, workflowId, start, end, tz);
    const label = `${tz} ${start.toISOString()}..${end.toISOString()}`;
    expect({ ...row, median_ms: null, p95_ms: null, p99_ms: null }, label).toEqual({
      executions: r.executions, finished: r.finished, failed: r.failed, average_ms: r.average_ms,
      median_ms: null, p95_ms: null, p99_ms: null, peak_hour: r.peak_hour, peak_executions: r.peak_executions, errors: r.errors,
    });
    expect(Object.fromEntries(channels.map(({ channel, ...c }) => [channel, c])), label).toEqual(r.channels ?? {});
    for (const name of ['median_ms', 'p95_ms', 'p99_ms'] as const) expectWithinBound(row[name], r[name], `${label} ${name}`);
    // Without whole UTC days everything is read raw: exact.
    const { daysFrom, daysTo } = splitDays(start, end);
    if (daysFrom.getTime() === daysTo.getTime()) expect([row.median_ms, row.p95_ms, row.p99_ms]).toEqual([r.median_ms, r.p95_ms, r.p99_ms]);
    return { row, raw: r };
  };

  const expectRollupsMatchRows = (organizationId: string) => expectPerformanceRollupsMatchRows(ds, organizationId);

  it('buckets durations exactly below 100 ms and within 0.9901 % above, up to the largest int', async () => {
    expect(DURATION_ERROR_BOUND).toBe(0.009901);
    const [exact] = await ds.query(`SELECT count(*)::int AS wrong FROM generate_series(-5, 99) ms WHERE duration_bucket_value(duration_bucket(ms)) <> ms`);
    expect(exact.wrong).toBe(0);
    const [worst] = await ds.query(
      `SELECT max(abs(duration_bucket_value(duration_bucket(ms)) - ms) / ms) AS e,
              count(DISTINCT duration_bucket(ms))::int AS buckets
         FROM (SELECT generate_series(100, 300000) AS ms UNION ALL SELECT generate_series(2147383647, 2147483647)) x`,
    );
    expect(worst.e).toBeLessThanOrEqual(DURATION_ERROR_BOUND);
    // Not trivially: the worst case is close to the bound (a bucket is as wide as it may be).
    expect(worst.e).toBeGreaterThan(0.0098);
    // Buckets are monotone in the duration (so order statistics map to order statistics).
    const [monotone] = await ds.query(
      `SELECT count(*)::int AS n FROM generate_series(-5, 300000) ms WHERE duration_bucket(ms + 1) < duration_bucket(ms)
          OR duration_bucket_value(duration_bucket(ms + 1)) < duration_bucket_value(duration_bucket(ms))`,
    );
    expect(monotone.n).toBe(0);
  });

  it('states the bound in the OpenAPI description of the endpoint', async () => {
    const spec = (await t.http.get('/openapi.json')).body;
    const operation = spec.paths['/v1/analytics/workflows/{workflow_id}/performance'].get;
    expect(operation.description).toContain('within 0.9901 % of the exact value');
    expect(JSON.stringify(spec.components.schemas.ExecutionTimeResponse.properties.p99_ms)).toContain('0.9901 %');
  });

  describe('GET /v1/analytics/workflows/{id}/performance with known executions', () => {
    let known: string;
    beforeAll(async () => {
      known = (await createWorkflow(t, org)).id;
      const run = (startedAt: string, status: 'success' | 'failed' | 'running', durationMs: number | null, channel: string | null, error: Record<string, unknown> | null = null) =>
        insertWorkflowExecution(ds, { organizationId: org.id, workflowId: known, status, startedAt, durationMs, channel, error });
      await run('2025-07-01T09:10:00Z', 'success', 1200, 'whatsapp');
      await run('2025-07-01T09:40:00Z', 'failed', 45, 'whatsapp', { code: 'NODE_FAILED', message: 'x' });
      // 08:30 on 07-02 in Tokyo: the next local day.
      await run('2025-07-01T23:30:00Z', 'failed', 80000, 'instagram', { code: 'CONVERSATION_TIMEOUT', message: 'x' });
      await run('2025-07-02T09:05:00Z', 'success', 350, 'whatsapp');
      await run('2025-07-02T12:00:00Z', 'failed', 7000, null, { message: 'no code' });
      await run('2025-07-02T15:00:00Z', 'running', null, 'whatsapp');
      await run('2025-07-03T09:20:00Z', 'success', 999, 'whatsapp');
      // A batch of 60 in one statement, one a minute from 14:00 on 07-02: durations 1000, 1100, .. 6900 ms, all successes on voice.
      await ds.query(
        `INSERT INTO workflow_executions (organization_id, workflow_id, workflow_version, channel, status, started_at, completed_at, duration_ms)
         SELECT $1, $2, 1, 'voice', 'success', timestamptz '2025-07-02T14:00:00Z' + g * interval '1 minute',
                timestamptz '2025-07-02T14:00:00Z' + g * interval '1 minute' + (1000 + 100 * g) * interval '1 millisecond', 1000 + 100 * g
           FROM generate_series(0, 59) g`,
        [org.id, known],
      );
    });

    it('exact counts, error rates by code, channels and peak hour; percentiles within the bound of percentile_cont', async () => {
      const res = await get(`/v1/analytics/workflows/${known}/performance`, { start_date: '2025-07-01', end_date: '2025-07-03', include_channels: 'true' });
      expect(res.status).toBe(200);
      const p = res.body.data.performance;
      // 67 executions, 66 finished (one running), 3 failed.
      expect(p.throughput.executions_per_hour).toBeCloseTo(67 / 72, 12);
      // The busiest hour: 14:00 on 07-02 (the batch).
      expect(p.throughput).toMatchObject({ peak_executions_per_hour: 60, peak_hour: '14:00' });
      expect(p.error_rate).toEqual({ overall: 3 / 66, by_error_type: { NODE_FAILED: 1 / 66, CONVERSATION_TIMEOUT: 1 / 66, UNKNOWN: 1 / 66 } });
      // Sum of durations: 1200 + 45 + 80000 + 350 + 7000 + 999 + (60 * 1000 + 100 * 1770) = 326594.
      expect(p.execution_time.average_ms).toBeCloseTo(326594 / 66, 9);
      expect(p.channel_performance).toEqual({
        whatsapp: { executions: 5, success_rate: 3 / 4, average_duration_ms: 649 }, // (1200 + 45 + 350 + 999) / 4 = 648.5
        instagram: { executions: 1, success_rate: 0, average_duration_ms: 80000 },
        unknown: { executions: 1, success_rate: 0, average_duration_ms: 7000 },
        voice: { executions: 60, success_rate: 1, average_duration_ms: 3950 },
      });
      const exact = await raw(org.id, known, new Date('2025-07-01T00:00:00Z'), new Date('2025-07-03T23:59:59.999Z'), 'UTC');
      // percentile_cont over the 66 durations, worked out here too.
      const durations = [1200, 45, 80000, 350, 7000, 999, ...Array.from({ length: 60 }, (_, g) => 1000 + 100 * g)].sort((a, b) => a - b);
      expect([exact.median_ms, exact.p95_ms, exact.p99_ms]).toEqual([0.5, 0.95, 0.99].map((q) => percentileCont(durations, q)));
      for (const name of ['median_ms', 'p95_ms', 'p99_ms'] as const) expectWithinBound(p.execution_time[name], exact[name], name);
      // Through the rollups (the period is whole UTC days): not the exact values themselves.
      expect([p.execution_time.median_ms, p.execution_time.p95_ms, p.execution_time.p99_ms]).not.toEqual([exact.median_ms, exact.p95_ms, exact.p99_ms]);
    });

    it('a non-UTC zone moves the period, and the execution at 23:30 UTC into the next local day; the peak hour is local', async () => {
      const utc = (await get(`/v1/analytics/workflows/${known}/performance`, { start_date: '2025-07-02', end_date: '2025-07-03' })).body.data.performance;
      const tokyo = (await get(`/v1/analytics/workflows/${known}/performance`, { start_date: '2025-07-02', end_date: '2025-07-03', timezone: 'Asia/Tokyo' })).body
        .data.performance;
      // UTC 07-02..07-03: 64 executions, 63 finished, one failure (no code).
      expect(utc.error_rate).toEqual({ overall: 1 / 63, by_error_type: { UNKNOWN: 1 / 63 } });
      expect(utc.throughput.executions_per_hour).toBeCloseTo(64 / 48, 12);
      expect(utc.throughput).toMatchObject({ peak_executions_per_hour: 60, peak_hour: '14:00' });
      // Tokyo 07-02..07-03 = 07-01T15:00Z .. 07-03T14:59:59.999Z: the 23:30 UTC timeout is in; the 09:xx UTC ones of 07-01 are not.
      expect(tokyo.error_rate).toEqual({ overall: 2 / 64, by_error_type: { UNKNOWN: 1 / 64, CONVERSATION_TIMEOUT: 1 / 64 } });
      expect(tokyo.throughput).toMatchObject({ peak_executions_per_hour: 60, peak_hour: '23:00' });
      expect(tokyo.throughput.executions_per_hour).toBeCloseTo(65 / 48, 12);
      // The exact percentiles of each period, against the raw rows.
      for (const [p, tz, start, end] of [
        [utc, 'UTC', '2025-07-02T00:00:00Z', '2025-07-03T23:59:59.999Z'],
        [tokyo, 'Asia/Tokyo', '2025-07-01T15:00:00Z', '2025-07-03T14:59:59.999Z'],
      ] as const) {
        const exact = await raw(org.id, known, new Date(start), new Date(end), tz);
        expect(p.execution_time.average_ms).toBe(exact.average_ms);
        for (const name of ['median_ms', 'p95_ms', 'p99_ms'] as const) expectWithinBound(p.execution_time[name], exact[name], `${tz} ${name}`);
      }
    });

    it('a zone with a half-hour offset takes the peak hour from the executions', async () => {
      const kolkata = (await get(`/v1/analytics/workflows/${known}/performance`, { start_date: '2025-07-02', end_date: '2025-07-03', timezone: 'Asia/Kolkata' })).body
        .data.performance;
      // 14:00..14:59 UTC is 19:30..20:29 in Kolkata: 30 executions in the local hour 19:00, 30 in 20:00, plus the
      // running one of 15:00 UTC (20:30). Read from hourly rollups, all 60 would land in 19:00.
      expect(kolkata.throughput).toMatchObject({ peak_executions_per_hour: 31, peak_hour: '20:00' });
    });
  });

  it('the rollups give the numbers of the raw rows through inserts, finishes, updates, deletes and batches', async () => {
    const other = await createOrganization(t);
    const otherWf = (await createWorkflow(t, other)).id;
    const periods: [string, string, string, boolean][] = [
      ['2025-08-01T00:00:00Z', '2025-08-06T23:59:59.999Z', 'UTC', true],
      ['2025-08-01T15:00:00Z', '2025-08-05T14:59:59.999Z', 'Asia/Tokyo', true],
      ['2025-07-31T22:00:00Z', '2025-08-05T21:59:59.999Z', 'Europe/Berlin', true],
      ['2025-08-01T18:30:00Z', '2025-08-05T18:29:59.999Z', 'Asia/Kolkata', false],
      ['2025-08-02T05:00:00Z', '2025-08-03T04:00:00Z', 'America/New_York', true],
      // Whole UTC months inside: August from the month rows, the days around it from the day rows.
      ['2025-07-20T00:00:00Z', '2025-09-03T23:59:59.999Z', 'UTC', true],
      ['2025-07-29T15:00:00Z', '2025-09-02T14:59:59.999Z', 'Asia/Tokyo', true],
    ];
    expect(splitDays(new Date('2025-07-29T15:00:00Z'), new Date('2025-09-02T14:59:59.999Z'))).toMatchObject({
      monthsFrom: new Date('2025-08-01T00:00:00Z'),
      monthsTo: new Date('2025-09-01T00:00:00Z'),
    });
    const check = async (step: string) => {
      await expectRollupsMatchRows(org.id);
      await expectRollupsMatchRows(other.id);
      for (const [start, end, tz, hourly] of periods) {
        await expectSameAsRaw(org.id, wf, new Date(start), new Date(end), tz, hourly).catch((error: Error) => {
          throw new Error(`${step}: ${error.message}`);
        });
      }
    };
    // A firing of 120 running executions in one statement, over six days and three channels.
    await ds.query(
      `INSERT INTO workflow_executions (organization_id, workflow_id, workflow_version, channel, status, started_at)
       SELECT $1, $2, 1, (ARRAY['whatsapp', 'instagram', NULL])[1 + g % 3], 'running', timestamptz '2025-08-01' + g * interval '71 minutes'
         FROM generate_series(0, 119) g`,
      [org.id, wf],
    );
    // Another organization's finished rows beside them.
    await ds.query(
      `INSERT INTO workflow_executions (organization_id, workflow_id, workflow_version, status, started_at, duration_ms, error)
       SELECT $1, $2, 1, 'failed', timestamptz '2025-08-02' + g * interval '1 hour', 99000, '{"code":"FOREIGN"}' FROM generate_series(0, 9) g`,
      [other.id, otherWf],
    );
    const [{ n: none }] = await ds.query(`SELECT count(*)::int AS n FROM workflow_duration_days WHERE workflow_id = $1`, [wf]);
    expect(none).toBe(0);
    await check('fired');
    // Finishing, in batches as the engine's commit statement does: successes with durations spread over five decades.
    await ds.query(
      `UPDATE workflow_executions SET status = 'success', duration_ms = (7 * (${MINUTE} % 997) + 1) * (1 + (${MINUTE} % 5) * 40),
              completed_at = started_at + interval '1 second'
        WHERE workflow_id = $1 AND ${MINUTE} % 4 <> 0`,
      [wf],
    );
    await ds.query(
      `UPDATE workflow_executions SET status = 'failed', duration_ms = ${MINUTE} % 50, completed_at = started_at,
              error = jsonb_build_object('code', (ARRAY['NODE_FAILED', 'CONVERSATION_TIMEOUT'])[1 + (${MINUTE} / 8) % 2], 'message', 'x')
        WHERE workflow_id = $1 AND status = 'running' AND ${MINUTE} % 8 = 0`,
      [wf],
    );
    await check('finished');
    const [{ n: rows }] = await ds.query(`SELECT sum(executions)::int AS n FROM workflow_duration_days WHERE workflow_id = $1`, [wf]);
    expect(rows).toBeGreaterThan(90);
    // Updates: a duration corrected, an error code changed, a failure without code, a start moved to another day, a success turned failure, a finished one back to running.
    const pick = async (where: string): Promise<string> => {
      const [row] = await ds.query(`SELECT id FROM workflow_executions WHERE workflow_id = $1 AND ${where} ORDER BY started_at LIMIT 1`, [wf]);
      if (!row) throw new Error(`no execution where ${where}`);
      return row.id;
    };
    await ds.query(`UPDATE workflow_executions SET duration_ms = 123456 WHERE id = $1`, [await pick(`status = 'success'`)]);
    await ds.query(`UPDATE workflow_executions SET error = '{"code":"RATE_LIMITED"}' WHERE id = $1`, [await pick(`status = 'failed'`)]);
    await ds.query(`UPDATE workflow_executions SET error = NULL WHERE id = $1`, [await pick(`status = 'failed' AND error->>'code' = 'NODE_FAILED'`)]);
    await ds.query(`UPDATE workflow_executions SET started_at = started_at + interval '1 day 3 hours' WHERE id = $1`, [await pick(`status = 'failed'`)]);
    await ds.query(`UPDATE workflow_executions SET status = 'failed', error = '{"code":"LATE"}' WHERE id = $1`, [await pick(`status = 'success' AND duration_ms < 500`)]);
    await ds.query(`UPDATE workflow_executions SET status = 'running', duration_ms = NULL WHERE id = $1`, [await pick(`status = 'success' AND duration_ms > 1000`)]);
    // A finished one without a duration, and an update that changes nothing counted.
    await ds.query(`UPDATE workflow_executions SET duration_ms = NULL WHERE id = $1`, [await pick(`status = 'success' AND duration_ms BETWEEN 500 AND 1000`)]);
    await ds.query(`UPDATE workflow_executions SET state = '{"cursor":"x"}', waiting = true WHERE workflow_id = $1`, [wf]);
    await check('updated');
    // One statement over running and finished rows: some finish, some move to the next day, one changes its code.
    const [{ n: mixed }] = await ds.query(
      `WITH u AS (
         UPDATE workflow_executions SET
           status = CASE WHEN status = 'running' AND ${MINUTE} % 3 = 0 THEN 'success' ELSE status END,
           duration_ms = CASE WHEN status = 'running' AND ${MINUTE} % 3 = 0 THEN 77777 ELSE duration_ms END,
           started_at = CASE WHEN ${MINUTE} % 2 = 0 THEN started_at + interval '20 hours' ELSE started_at END,
           error = CASE WHEN status = 'failed' THEN '{"code":"MOVED"}' ELSE error END
          WHERE workflow_id = $1 AND started_at < '2025-08-03' RETURNING status
       ) SELECT count(DISTINCT status)::int AS n FROM u`,
      [wf],
    );
    expect(mixed).toBe(3);
    await check('updated running and finished rows in one statement');
    // Deletions: single rows and a batch.
    await ds.query(`DELETE FROM workflow_executions WHERE id = $1`, [await pick(`status = 'failed'`)]);
    await ds.query(`DELETE FROM workflow_executions WHERE workflow_id = $1 AND started_at >= '2025-08-04' AND started_at < '2025-08-04T12:00:00Z'`, [wf]);
    await check('deleted');
    // A batch insert of finished executions, as history imports write them, some in a day with rows left at zero.
    await ds.query(
      `INSERT INTO workflow_executions (organization_id, workflow_id, workflow_version, channel, status, started_at, duration_ms, error)
       SELECT $1, $2, 1, 'voice', CASE WHEN g % 5 = 0 THEN 'failed' ELSE 'success' END, timestamptz '2025-08-04T01:00:00Z' + g * interval '13 minutes',
              40 + g * g * 11, CASE WHEN g % 5 = 0 THEN '{"code":"NODE_FAILED"}'::jsonb END
         FROM generate_series(0, 99) g`,
      [org.id, wf],
    );
    await check('batch inserted');
    // Deleting the other organization's workflow cascades to its executions and rollup rows.
    await ds.query(`DELETE FROM workflows WHERE id = $1`, [otherWf]);
    await check('workflow deleted');
    const [{ n: left }] = await ds.query(`SELECT count(*)::int AS n FROM workflow_error_days WHERE workflow_id = $1`, [otherWf]);
    expect(left).toBe(0);
  });
});
