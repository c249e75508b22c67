// Times the workflow analytics' satisfaction (src/analytics/workflow-analytics.repository.ts WORKFLOW_SATISFACTION:
// the answer day rollup plus at most half a day of answers at each end) against the statement it replaced
// (every execution_answers row of the period, index-only), on a seeded history database, periods ending at
// the newest execution (the whole request: through the app, docs/PERFORMANCE.md). Alternating slices of
// SECONDS on CONNECTIONS clients (closed loop), ROUNDS times; prints p50/p95 per case. After `npm run build`:
//   node bench/satisfaction-timing.mjs <database-name> [connections=4] [seconds=5] [rounds=2]
// Only 127.0.0.1; read-only.
import pg from 'pg';

const server = (process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const [name, connections = '4', seconds = '5', rounds = '2'] = process.argv.slice(2);
if (!name) throw new Error('usage: node bench/satisfaction-timing.mjs <database-name> [connections] [seconds] [rounds]');
const { ANALYTICS_STATEMENTS: S } = await import('../dist/src/analytics/analytics-statements.js');
const { journeySplit } = await import('../dist/src/analytics/analytics-sql.js');

/** The statement before migration AnswerDays. */
const BEFORE = `
  SELECT (sum(a.rating_sum) / NULLIF(sum(a.ratings), 0))::float8 AS satisfaction
    FROM execution_answers a
   WHERE a.workflow_id = $2 AND a.organization_id = $1 AND a.started_at >= $3 AND a.started_at <= $4`;

const clients = [];
for (let i = 0; i < Number(connections); i++) {
  const c = new pg.Client({ connectionString: `${server}/${name}`, options: '-c jit=off' });
  await c.connect();
  clients.push(c);
}
const { rows: [h] } = await clients[0].query(`SELECT w.id AS workflow_id, w.organization_id, max(e.started_at) AS last
                                               FROM workflows w JOIN workflow_executions e ON e.workflow_id = w.id WHERE w.name = 'history' GROUP BY w.id`);
const [org, wf, end] = [h.organization_id, h.workflow_id, new Date(h.last)];

function satisfaction(days, before) {
  const start = new Date(end.getTime() - days * 86_400_000);
  if (before) return (c) => c.query(BEFORE, [org, wf, start, end]);
  const s = journeySplit(start, end);
  const values = [org, wf, ...s.ranges.flatMap((r) => [r.from, r.to, r.sign]), s.daysFrom, s.daysTo];
  return (c) => c.query(S.WORKFLOW_SATISFACTION.text, values);
}

const cases = [
  ['satisfaction 30 days, before (every answer row)', satisfaction(30, true)],
  ['satisfaction 30 days, answer day rollup', satisfaction(30, false)],
  ['satisfaction 365 days, before (every answer row)', satisfaction(365, true)],
  ['satisfaction 365 days, answer day rollup', satisfaction(365, false)],
];
const pct = (xs, p) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const times = new Map(cases.map(([title]) => [title, []]));
for (let round = 0; round < Number(rounds); round++) {
  for (const [title, run] of cases) {
    const until = Date.now() + Number(seconds) * 1000;
    await Promise.all(
      Array.from({ length: Number(connections) }, async (_, i) => {
        while (Date.now() < until) {
          const t0 = performance.now();
          await run(clients[i]);
          times.get(title).push(performance.now() - t0);
        }
      }),
    );
  }
}
for (const [title, xs] of times) {
  xs.sort((a, b) => a - b);
  console.log(`${title}: n=${xs.length} p50 ${pct(xs, 50).toFixed(1)} ms, p95 ${pct(xs, 95).toFixed(1)} ms`);
}
await Promise.all(clients.map((c) => c.end()));
