// Latency of the workflow and trigger metrics on a seeded history database (bench/explain-history.mjs
// with KEEP=1 seeds one), through the service's repository (SQL, sketch merge; no HTTP), closed
// loop, one request at a time. After `npm run build`:
//   node bench/metrics-history.mjs <database-name> [seconds-per-case]
// Prints p50/p95/p99 per case and, for 30 and 365 days, unique_customers beside the exact count.
import { DataSource } from 'typeorm';

const server = (process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const name = process.argv[2] ?? 'was_hist_metrics';
const seconds = Number(process.argv[3] ?? '5');
const { dataSourceOptions } = await import('../dist/src/database/data-source.options.js');
const { ExecutionMetricsRepository } = await import('../dist/src/execution-metrics/execution-metrics.repository.js');
const ds = new DataSource({ ...dataSourceOptions({ databaseUrl: `${server}/${name}` }), migrations: [] });
await ds.initialize();
const [{ workflow_id: workflowId, trigger_id: triggerId, organization_id: organizationId }] = await ds.query(
  `SELECT w.id AS workflow_id, t.id AS trigger_id, w.organization_id FROM workflows w JOIN triggers t ON t.workflow_id = w.id WHERE w.name = 'history'`,
);
const repo = new ExecutionMetricsRepository(ds);
const DAY = 86_400_000;
const period = (days, granularity) => {
  const end = new Date();
  return { start: new Date(end.getTime() - days * DAY), end, granularity };
};
const cases = [
  ['workflow 30 days, day', () => repo.workflow(organizationId, workflowId, period(30, 'day')), 50],
  ['workflow 365 days, month', () => repo.workflow(organizationId, workflowId, period(365, 'month')), 150],
  ['workflow 365 days, day', () => repo.workflow(organizationId, workflowId, period(365, 'day')), 150],
  ['trigger 30 days, day', () => repo.trigger(organizationId, triggerId, period(30, 'day')), 50],
  ['trigger 365 days, month', () => repo.trigger(organizationId, triggerId, period(365, 'month')), 150],
];
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
for (const [title, run, target] of cases) {
  await run(); // warm: plans, folds of stale days
  const times = [];
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) {
    const t = process.hrtime.bigint();
    await run();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(
    `${title.padEnd(28)} n=${String(times.length).padStart(4)}  p50 ${pct(times, 50).toFixed(1)}  p95 ${pct(times, 95).toFixed(1)}  p99 ${pct(times, 99).toFixed(1)} ms  (target p95 < ${target})`,
  );
}
for (const days of [30, 365]) {
  const p = period(days, 'month');
  const got = await repo.workflow(organizationId, workflowId, p);
  const [{ n }] = await ds.query(`SELECT count(DISTINCT customer_ref)::int AS n FROM workflow_executions WHERE workflow_id = $1 AND started_at BETWEEN $2 AND $3`, [
    workflowId, p.start, p.end,
  ]);
  console.log(`unique_customers ${days} days: ${got.totals.unique_customers} vs exact ${n} (${(((got.totals.unique_customers - n) / n) * 100).toFixed(2)} %)`);
}
await ds.destroy();
