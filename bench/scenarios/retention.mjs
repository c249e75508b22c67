// Execution data retention (EXECUTION_RETENTION) on the seeded year of `history` (bench/lib/history-seed.mjs):
// the executions, their steps and answers, the firings, the messages and their deliveries (each range-partitioned
// by month on a UUIDv7 key) are re-keyed with the UUIDv7 of their time, as the engine writes them, into monthly
// partitions back thirteen months (what a year of the retention loop leaves). Measured:
// - history p95s (the trigger's list and its 30- and 365-day metrics) before and after the prune: within 25%;
// - executions/s without a prune (after a first run that is not compared: the worker process is new), then while
//   the retention goes from keeping everything to 30 days: the first
//   pass (eleven months dropped, then the edge month trimmed for the pass's budget), then the passes the service
//   schedules while rows are left (TRIM_PAUSE_MS apart, each trimming for TRIM_BUDGET_MS), as many as fall in
//   the measured window, then without again once the prune is over. Target: within 5% of the mean of the runs
//   without;
// - the first pass's database time (its statements on its one connection: the pass's phases but its rests and
//   the commit's removal of the dropped files, which happens after the locks are released), target < 2 s, with
//   its file removal and its wall time (rests included) reported; then the passes that finish the edge's trim,
//   back to back once the load is over, counted and timed (reported).
// - the trigger's 365-day metrics (over a window with a fixed end) before and after the prune: unchanged, figure by
//   figure (what differs is printed).
// Not part of the default run (it seeds the whole history): BENCH_SCENARIOS=retention.
import pg from 'pg';
import { DataSource } from 'typeorm';
import { measureExecutionsPerSecond } from '../lib/executions-load.mjs';
import { historyScaleFromEnv, SEEDED_YEAR_WORKER_ENV, seedHistory } from '../lib/history-seed.mjs';
import { round } from '../lib/load.mjs';
import { firstSketchPass } from '../lib/sketches.mjs';

const DAY = 86_400_000;
const PRUNE_MAX_S = 2;
const P95_GROWTH = 1.25;

/** Where two JSON bodies differ, as `path: before → after` lines (at most `max`). */
function differences(before, after, path = '', out = [], max = 12) {
  if (out.length >= max) return out;
  if (before !== null && after !== null && typeof before === 'object' && typeof after === 'object') {
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) differences(before[key], after[key], `${path}.${key}`, out, max);
  } else if (JSON.stringify(before) !== JSON.stringify(after)) {
    out.push(`${path || '.'}: ${JSON.stringify(before)} → ${JSON.stringify(after)}`);
  }
  return out;
}

/** The retention pass of the build under test, on a connection of its own. */
async function retentionOf(databaseUrl) {
  const { dataSourceOptions } = await import('../../dist/src/database/data-source.options.js');
  const { ExecutionRetention } = await import('../../dist/src/executions/retention/execution-retention.service.js');
  const ds = new DataSource({ ...dataSourceOptions({ databaseUrl }), migrationsRun: false });
  await ds.initialize();
  return {
    prune: (retentionMs) => new ExecutionRetention(ds, { executionRetentionMs: retentionMs }).prune(Date.now()),
    pauseMs: (await import('../../dist/src/executions/retention/execution-retention.service.js')).TRIM_PAUSE_MS ?? 0,
    close: () => ds.destroy(),
  };
}

/** The columns of a table but `skip`, as a list for INSERT and SELECT. */
async function columnsOf(db, table, skip) {
  const { rows } = await db.query(
    `SELECT string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position) AS cols
       FROM information_schema.columns WHERE table_name = $1 AND NOT (column_name = ANY ($2::text[]))`,
    [table, skip],
  );
  return rows[0].cols;
}

/** A key moved to the millisecond `at` (SQL), its random part kept: what the engine would have written then. */
const REKEY = (id, at) => `(substr(uuid_v7_floor(${at})::text, 1, 14) || substr(${id}::text, 15))::uuid`;

/**
 * The seed's rows keyed by their time (the seed keys them all at the time of seeding), as the engine writes
 * them: executions by their start, firings by their time, messages by theirs; the steps, answers, deliveries
 * and the links between them follow their parent's new key. Each partitioned table gets its months back
 * thirteen months (what a year of the retention loop leaves).
 */
async function rekeyByTime(db) {
  const partitioned = ['trigger_executions', 'workflow_executions', 'execution_steps', 'execution_answers', 'messages', 'message_deliveries',
    'webhook_deliveries', 'webhook_delivery_attempts'];
  for (const table of partitioned) await db.query(`SELECT retention_partitions_ensure($1, now() - interval '13 months', now() + interval '2 months')`, [table]);
  const cols = {
    trigger_executions: await columnsOf(db, 'trigger_executions', ['id', 'workflow_execution_id']),
    workflow_executions: await columnsOf(db, 'workflow_executions', ['id', 'trigger_execution_id']),
    execution_steps: await columnsOf(db, 'execution_steps', ['execution_id']),
    execution_answers: await columnsOf(db, 'execution_answers', ['execution_id']),
    messages: await columnsOf(db, 'messages', ['id', 'execution_id']),
    message_deliveries: await columnsOf(db, 'message_deliveries', ['message_id', 'execution_id']),
  };
  await db.query('BEGIN');
  try {
    // Bench set-up only: the rows move without touching the change logs (their rollups are already folded).
    for (const table of Object.keys(cols)) await db.query(`ALTER TABLE ${table} DISABLE TRIGGER USER`);
    await db.query(`CREATE TEMP TABLE em ON COMMIT DROP AS SELECT id AS old, ${REKEY('id', 'started_at')} AS new FROM workflow_executions`);
    await db.query(`CREATE TEMP TABLE tm ON COMMIT DROP AS SELECT id AS old, ${REKEY('id', 'triggered_at')} AS new FROM trigger_executions`);
    await db.query(`CREATE TEMP TABLE mm ON COMMIT DROP AS SELECT id AS old, ${REKEY('id', 'created_at')} AS new FROM messages`);
    for (const map of ['em', 'tm', 'mm']) await db.query(`CREATE UNIQUE INDEX ON ${map} (old)`);
    for (const table of Object.keys(cols)) await db.query(`CREATE TEMP TABLE ${table}_seed ON COMMIT DROP AS SELECT * FROM ${table}`);
    for (const table of Object.keys(cols)) await db.query(`TRUNCATE ${table}`);
    await db.query(
      `INSERT INTO workflow_executions (id, trigger_execution_id, ${cols.workflow_executions})
       SELECT em.new, tm.new, ${cols.workflow_executions} FROM workflow_executions_seed s JOIN em ON em.old = s.id LEFT JOIN tm ON tm.old = s.trigger_execution_id`,
    );
    await db.query(
      `INSERT INTO trigger_executions (id, workflow_execution_id, ${cols.trigger_executions})
       SELECT tm.new, em.new, ${cols.trigger_executions} FROM trigger_executions_seed s JOIN tm ON tm.old = s.id LEFT JOIN em ON em.old = s.workflow_execution_id`,
    );
    for (const table of ['execution_steps', 'execution_answers']) {
      await db.query(`INSERT INTO ${table} (execution_id, ${cols[table]}) SELECT em.new, ${cols[table]} FROM ${table}_seed s JOIN em ON em.old = s.execution_id`);
    }
    await db.query(
      `INSERT INTO messages (id, execution_id, ${cols.messages})
       SELECT mm.new, em.new, ${cols.messages} FROM messages_seed s JOIN mm ON mm.old = s.id LEFT JOIN em ON em.old = s.execution_id`,
    );
    await db.query(
      `INSERT INTO message_deliveries (message_id, execution_id, ${cols.message_deliveries})
       SELECT mm.new, em.new, ${cols.message_deliveries} FROM message_deliveries_seed s JOIN mm ON mm.old = s.message_id LEFT JOIN em ON em.old = s.execution_id`,
    );
    for (const table of Object.keys(cols)) await db.query(`ALTER TABLE ${table} ENABLE TRIGGER USER`);
    await db.query('COMMIT');
  } catch (error) {
    await db.query('ROLLBACK');
    throw error;
  }
  // Vacuumed as well as analyzed: rows just inserted have no visibility-map bits, and autovacuum would otherwise
  // vacuum every month of them while the executions are measured (what a year-old database no longer needs).
  for (const table of Object.keys(cols)) await db.query(`VACUUM (ANALYZE) ${table}`);
}

export default {
  name: 'retention',
  description: 'EXECUTION_RETENTION on the seeded year: eleven months of executions, steps, firings and messages dropped by partitions while executions run; history p95s before and after',

  async run(ctx) {
    const scale = historyScaleFromEnv();
    const api = await ctx.startApp({ role: 'api' });
    const db = new pg.Client({ connectionString: ctx.databaseUrl });
    await db.connect();
    const retention = await retentionOf(ctx.databaseUrl);
    try {
      const seeded = await seedHistory(db, { scale, log: (line) => console.log(line) });
      await db.query('SELECT rollups_fold(100000000)');
      await rekeyByTime(db);
      const sketched = await firstSketchPass(ctx);
      console.log(`  sketches: ${sketched.days} days and ${sketched.months} months folded by the workers' first pass in ${round(sketched.ms / 1000, 2)} s`);
      const { triggerId } = seeded;
      const headers = { authorization: `Bearer ${ctx.apiKey}` };
      const now = Date.now();
      const targets = [
        { name: 'GET triggers/{id}/executions?limit=20', path: `/v1/triggers/${triggerId}/executions?limit=20` },
        { name: 'GET triggers/{id}/metrics (30 days)', path: `/v1/triggers/${triggerId}/metrics` },
        {
          name: 'GET triggers/{id}/metrics (365 days)',
          path: `/v1/triggers/${triggerId}/metrics?start_date=${new Date(now - 365 * DAY).toISOString().slice(0, 10)}&granularity=month`,
        },
      ];
      const connections = Number(process.env.BENCH_HISTORY_CONNECTIONS ?? '4');
      const read = () => ctx.measureInterleaved(targets.map((t) => ({ url: `${api.url}${t.path}`, headers, connections })));
      // The year's figures compared before and after: over a window with a fixed end (the default end is the request's
      // own time, which the response echoes), so that any difference is a figure.
      const yearPath = `${targets[2].path}&end_date=${encodeURIComponent(new Date(now).toISOString())}`;
      const year = async () => (await (await fetch(`${api.url}${yearPath}`, { headers })).json()).data;
      const yearBefore = await year();
      const readsBefore = await read();

      await ctx.startApp({ role: 'worker', env: { ...SEEDED_YEAR_WORKER_ENV, WORKER_CONCURRENCY: '10' } });
      // A first run, not compared: the worker process and its connections new (compiled code, caches), as the
      // API's are not after the reads.
      const warmUp = await measureExecutionsPerSecond(ctx, api.url, db);
      console.log(`  executions/s, the worker's first run (not compared): ${warmUp.requests_per_s}`);
      const without = await measureExecutionsPerSecond(ctx, api.url, db);
      const yearBeforePrune = await year();
      for (const line of differences(yearBefore, yearBeforePrune)) console.log(`  365-day trigger metrics changed before the prune: ${line}`);

      // The passes start once the load's warm-up is over (its set-up and sanity run take about two seconds) and
      // follow each other as the service schedules them while the load runs; then back to back until done.
      const passes = [];
      const pass = async () => {
        const started = process.hrtime.bigint();
        const report = await retention.prune(30 * DAY);
        passes.push({ ms: Number(process.hrtime.bigint() - started) / 1e6, dropped: report.dropped.length, trimmed: report.trimmed, phasesMs: report.phasesMs });
        return report.unfinished === true;
      };
      let loadOver = false;
      const pruning = (async () => {
        await new Promise((r) => setTimeout(r, (ctx.config.warmupS + 2) * 1000));
        let more = await pass();
        while (more && !loadOver) {
          await new Promise((r) => setTimeout(r, retention.pauseMs));
          if (!loadOver) more = await pass();
        }
        const duringLoad = passes.length;
        while (more && passes.length < 10_000) more = await pass();
        return duringLoad;
      })();
      const during = await measureExecutionsPerSecond(ctx, api.url, db);
      loadOver = true;
      const passesDuringLoad = await pruning;
      const first = passes[0];
      const firstS = round(first.ms / 1000, 3);
      const { rests = 0, files = 0, ...statements } = first.phasesMs;
      const databaseS = round(Object.values(statements).reduce((sum, ms) => sum + ms, 0) / 1000, 3);
      const restS = round(passes.slice(1).reduce((s, p) => s + p.ms, 0) / 1000, 3);
      const dropped = passes.reduce((s, p) => s + p.dropped, 0);
      const trimmed = passes.reduce((s, p) => s + p.trimmed, 0);

      const readsAfter = await read();
      const yearAfter = await year();
      const changes = differences(yearBeforePrune, yearAfter);
      for (const line of changes) console.log(`  365-day trigger metrics changed by the prune: ${line}`);
      const unchanged = changes.length === 0 && JSON.stringify(yearBefore) === JSON.stringify(yearAfter);
      // Without a prune again, once it is over: the run with it is compared with both (ABA), not with one run
      // minutes apart on a machine that drifts.
      const withoutAfter = await measureExecutionsPerSecond(ctx, api.url, db);
      const withoutMean = (without.requests_per_s + withoutAfter.requests_per_s) / 2;
      const ratio = (of) => round(during.requests_per_s / Math.max(of, 0.001), 3);

      const rows = [
        { name: 'executions/s, no prune (before it)', measurement: without },
        {
          name: 'executions/s while eleven months are pruned',
          measurement: during,
          min_per_s: round(withoutMean * 0.95, 1),
          note: `${ratio(withoutMean)}x the runs without (${ratio(without.requests_per_s)}x the one before, ${ratio(withoutAfter.requests_per_s)}x the one after; target >= 0.95)`,
        },
        { name: 'executions/s, no prune (after it)', measurement: withoutAfter },
        {
          name: 'prune: eleven months of execution data (the first pass, keep-all to 30 days)',
          measurement: { requests_per_s: 0, requests_total: 1, p50_ms: null, p95_ms: null, p99_ms: null, errors: unchanged ? 0 : 1, non_2xx: 0, duration_s: databaseS },
          note:
            `${databaseS} s of database time (target < ${PRUNE_MAX_S} s${databaseS >= PRUNE_MAX_S ? ': MISSED' : ''}), ${round(files / 1000, 3)} s removing the files at ` +
            `the commit, ${firstS} s in all with ${round(rests / 1000, 3)} s of rests; ${first.dropped} partitions dropped, ${first.trimmed} rows trimmed; ` +
            `ms by phase: ${Object.entries(first.phasesMs).map(([phase, ms]) => `${phase} ${Math.round(ms)}`).join(', ')}; ` +
            `365-day trigger metrics ${unchanged ? 'unchanged' : 'CHANGED'}`,
        },
        {
          name: 'prune: the edge month trimmed by the following passes',
          measurement: { requests_per_s: 0, requests_total: passes.length - 1, p50_ms: null, p95_ms: null, p99_ms: null, errors: 0, non_2xx: 0, duration_s: restS },
          note:
            `${passes.length - 1} passes (${passesDuringLoad - 1} during the load, ${retention.pauseMs} ms apart), ${restS} s in all, longest ` +
            `${Math.round(Math.max(0, ...passes.slice(1).map((p) => p.ms)))} ms; ${trimmed - first.trimmed} rows trimmed (${dropped} partitions dropped in all)`,
        },
      ];
      targets.forEach((t, i) => {
        rows.push({ name: `${t.name}, before the prune`, measurement: readsBefore[i] });
        rows.push({
          name: `${t.name}, after the prune`,
          measurement: readsAfter[i],
          max_p95_ms: Math.max(5, Math.ceil((readsBefore[i].p95_ms ?? 0) * P95_GROWTH)),
        });
      });
      return rows;
    } finally {
      await retention.close();
      await db.end();
    }
  },
};
