// Reads at a large history: 100,000 workflows in the organization and one workflow with
// 1,000,000 executions over 365 days (~2.8M steps, ~3.9M messages), seeded with INSERT ... SELECT
// generate_series (bench/lib/history-seed.mjs; its time is reported). Measured, each as
// p50/p95/p99 and req/s with its target beside it: the workflow's execution list (unfiltered,
// status-filtered, page 1, a deep page, and the cursor), the trigger's list, workflow metrics for
// 30 and 365 days, trigger metrics, workflow search; then executions/s (and WAL per execution) on
// top of that history beside the same figure on an empty database.
//
// BENCH_HISTORY_SCALE (default 1) multiplies the seeded counts, e.g. 0.02 for a quick trial;
// BENCH_HISTORY_CONNECTIONS (default 4) is the concurrency of the read measurements.
// Targets are absolute: p95 < 50 ms (lists, search, 30-day metrics), < 150 ms (365-day metrics);
// executions/s on the history within 5% of the empty database's, WAL per execution within 1.5x.
import pg from 'pg';
import { BenchContext } from '../lib/context.mjs';
import { measureExport } from '../lib/export-timing.mjs';
import { measureExecutionsPerSecond } from '../lib/executions-load.mjs';
import { historyScaleFromEnv, SEEDED_YEAR_WORKER_ENV, seedHistory } from '../lib/history-seed.mjs';
import { round } from '../lib/load.mjs';

const LIST_P95_MS = 50;
const METRICS_30_P95_MS = 50;
const METRICS_365_P95_MS = 150;
const SEARCH_P95_MS = 50;
// The analytics targets, measured over the same history (the seed's survey form answers feed
// engagement's satisfaction and NPS and the workflow's customer_satisfaction).
const ANALYTICS_30_P95_MS = 100;
const ANALYTICS_365_P95_MS = 250;
const PERFORMANCE_365_P95_MS = 400;
const ENGAGEMENT_JOURNEY_P95_MS = 400;
const REALTIME_P95_MS = 30;

async function executionsOnEmptyDatabase(ctx) {
  const empty = await BenchContext.create(ctx.config, ctx.shared, `${ctx.scenarioName}-empty`);
  try {
    const api = await empty.startApp({ role: 'api' });
    await empty.startApp({ role: 'worker', env: { WORKER_CONCURRENCY: '10' } });
    const db = new pg.Client({ connectionString: empty.databaseUrl });
    await db.connect();
    try {
      return await measureExecutionsPerSecond(empty, api.url, db);
    } finally {
      await db.end();
    }
  } finally {
    const problems = await empty.dispose();
    if (problems.length > 0) throw new Error(`cleanup of the empty database failed: ${problems.join('; ')}`);
  }
}

/**
 * The scenario; `analyticsOnly` makes the `analytics` scenario over the same seeded history:
 * the analytics rows and the export, without the lists, metrics and executions/s.
 */
function historyScenario({ analyticsOnly }) {
  return {
  name: analyticsOnly ? 'analytics' : 'history',
  description: analyticsOnly
    ? 'analytics endpoints and a 1M-row export over the seeded year (100k workflows, 1M executions with steps, messages, survey answers)'
    : 'lists, metrics, search and analytics at 100k workflows and 1M executions (365 days); executions/s on that history vs an empty database; a 1M-row export',

  async run(ctx) {
    const scale = historyScaleFromEnv();
    // First, while nothing else runs: the empty database's executions/s.
    const emptyExecutions = analyticsOnly ? null : await executionsOnEmptyDatabase(ctx);
    if (emptyExecutions) console.log(`  empty database: ${emptyExecutions.requests_per_s} executions/s, ${emptyExecutions.wal_bytes_per_execution} WAL bytes per execution`);

    // The app first: its start-up creates the schema and the organization of the API key.
    const api = await ctx.startApp({ role: 'api' });
    const db = new pg.Client({ connectionString: ctx.databaseUrl });
    await db.connect();
    try {
      const seeded = await seedHistory(db, { scale, log: (line) => console.log(line) });
      console.log(`  seeded in ${seeded.seconds} s (${JSON.stringify(seeded.steps_s)}): ${JSON.stringify(seeded.counts)}`);
      const { workflowId, triggerId } = seeded;
      const headers = { authorization: `Bearer ${ctx.apiKey}` };
      const executions = `/v1/workflows/${workflowId}/executions`;
      const total = seeded.counts.executions;
      // The deepest page a client reaches by `page` at limit 20 is the list's middle (reading from
      // the nearer end); the cursor page starts there too.
      const deepPage = Math.max(1, Math.floor(total / 20 / 2));
      const middle = await db.query(
        `SELECT (EXTRACT(EPOCH FROM started_at) * 1000000)::bigint::text AS micros, id FROM workflow_executions
          WHERE workflow_id = $1 ORDER BY started_at DESC, id DESC OFFSET $2 LIMIT 1`,
        [workflowId, (deepPage - 1) * 20],
      );
      const cursor = Buffer.from(`${middle.rows[0].micros}:${middle.rows[0].id}`).toString('base64url');
      const now = Date.now();
      const day = 86_400_000;
      const iso = (ms) => new Date(ms).toISOString();
      const targets = [
        { name: 'GET executions?limit=20 (page 1)', path: `${executions}?limit=20`, p95: LIST_P95_MS },
        { name: `GET executions?limit=20&page=${deepPage} (deepest by page)`, path: `${executions}?limit=20&page=${deepPage}`, p95: LIST_P95_MS },
        { name: 'GET executions?limit=20&after=<cursor> (same depth)', path: `${executions}?limit=20&after=${cursor}`, p95: LIST_P95_MS },
        { name: 'GET executions?status=failed&limit=20 (page 1)', path: `${executions}?status=failed&limit=20`, p95: LIST_P95_MS },
        {
          name: `GET executions?status=success&page=${Math.floor(deepPage / 2)}`,
          path: `${executions}?status=success&limit=20&page=${Math.floor(deepPage / 2)}`,
          p95: LIST_P95_MS,
        },
        { name: 'GET executions?start_date=-7d&status=success', path: `${executions}?limit=20&status=success&start_date=${iso(now - 7 * day)}`, p95: LIST_P95_MS },
        { name: 'GET triggers/{id}/executions?limit=20', path: `/v1/triggers/${triggerId}/executions?limit=20`, p95: LIST_P95_MS },
        { name: 'GET workflows/{id}/metrics (30 days)', path: `/v1/workflows/${workflowId}/metrics`, p95: METRICS_30_P95_MS },
        {
          name: 'GET workflows/{id}/metrics (365 days)',
          path: `/v1/workflows/${workflowId}/metrics?start_date=${iso(now - 365 * day)}&granularity=month`,
          p95: METRICS_365_P95_MS,
        },
        { name: 'GET triggers/{id}/metrics (30 days)', path: `/v1/triggers/${triggerId}/metrics`, p95: METRICS_30_P95_MS },
        // Repeated, the common term's total is the one counted at the organization's workflows version
        // (only the first request after a change counts every match; see docs/PERFORMANCE.md).
        { name: 'GET workflows?search=refund&limit=20 (total remembered)', path: '/v1/workflows?search=refund&limit=20', p95: SEARCH_P95_MS },
        { name: 'GET workflows?search=Workflow 0123&limit=20', path: `/v1/workflows?search=${encodeURIComponent('Workflow 0123')}&limit=20`, p95: SEARCH_P95_MS },
        { name: 'GET workflows?limit=20&page=500', path: '/v1/workflows?limit=20&page=500', p95: LIST_P95_MS },
        { name: 'GET analytics/workflows/{id} (30 days)', path: `/v1/analytics/workflows/${workflowId}`, p95: ANALYTICS_30_P95_MS },
        {
          name: 'GET analytics/workflows/{id} (365 days, by month)',
          path: `/v1/analytics/workflows/${workflowId}?start_date=${iso(now - 365 * day)}&granularity=month`,
          p95: ANALYTICS_365_P95_MS,
        },
        {
          name: 'GET analytics/workflows/{id}/performance (365 days)',
          path: `/v1/analytics/workflows/${workflowId}/performance?start_date=${iso(now - 365 * day)}`,
          p95: PERFORMANCE_365_P95_MS,
        },
        { name: 'GET analytics/customers/engagement (30 days)', path: '/v1/analytics/customers/engagement', p95: ENGAGEMENT_JOURNEY_P95_MS },
        {
          name: 'GET analytics/customers/engagement (30 days, channel=whatsapp)',
          path: '/v1/analytics/customers/engagement?channel=whatsapp',
          p95: ENGAGEMENT_JOURNEY_P95_MS,
        },
        {
          name: 'GET analytics/customers/engagement (30 days, customer_segment=returning)',
          path: '/v1/analytics/customers/engagement?customer_segment=returning',
          p95: ENGAGEMENT_JOURNEY_P95_MS,
        },
        { name: 'GET analytics/customers/journey (30 days)', path: `/v1/analytics/customers/journey?journey_type=${workflowId}`, p95: ENGAGEMENT_JOURNEY_P95_MS },
        // journey_type=all: the most-executed workflow from the outcome rollups, then its journey.
        { name: 'GET analytics/customers/journey?journey_type=all (30 days)', path: '/v1/analytics/customers/journey?journey_type=all', p95: ENGAGEMENT_JOURNEY_P95_MS },
        {
          name: 'GET analytics/workflows/{id}/performance?include_nodes=true (365 days)',
          path: `/v1/analytics/workflows/${workflowId}/performance?include_nodes=true&start_date=${iso(now - 365 * day)}`,
          p95: PERFORMANCE_365_P95_MS,
        },
        { name: 'GET analytics/realtime', path: '/v1/analytics/realtime', p95: REALTIME_P95_MS },
        {
          name: `GET workflows?limit=20&page=${Math.floor(seeded.counts.workflows / 20 / 2)} (deepest by page)`,
          path: `/v1/workflows?limit=20&page=${Math.floor(seeded.counts.workflows / 20 / 2)}`,
          p95: LIST_P95_MS,
        },
      ];
      if (analyticsOnly) targets.splice(0, targets.length, ...targets.filter((t) => t.name.includes('analytics/')));
      for (const t of targets) await ctx.expectStatus(`${api.url}${t.path}`, 200);
      // Latency targets are measured at a moderate concurrency (BENCH_HISTORY_CONNECTIONS, default 4):
      // at saturation a closed loop's latency is connections / throughput whatever the query costs.
      const connections = Number(process.env.BENCH_HISTORY_CONNECTIONS ?? '4');
      const measured = await ctx.measureInterleaved(targets.map((t) => ({ url: `${api.url}${t.path}`, headers, connections })));
      const rows = targets.map((t, i) => ({ name: t.name, measurement: measured[i], max_p95_ms: t.p95 }));

      // Executions/s on top of the history (same process layout as on the empty database).
      await ctx.startApp({ role: 'worker', env: { ...SEEDED_YEAR_WORKER_ENV, WORKER_CONCURRENCY: '10' } });
      if (analyticsOnly) {
        rows.push(await measureExport(ctx, api.url, { workflowId, rows: total }));
        return rows;
      }
      const historyExecutions = await measureExecutionsPerSecond(ctx, api.url, db);
      // A 1,000,000-row CSV export of the history workflow (the worker makes the file).
      const exportRow = await measureExport(ctx, api.url, { workflowId, rows: total });
      const ratio = emptyExecutions.requests_per_s > 0 ? round(historyExecutions.requests_per_s / emptyExecutions.requests_per_s, 3) : null;
      const walRatio =
        emptyExecutions.wal_bytes_per_execution > 0 ? round(historyExecutions.wal_bytes_per_execution / emptyExecutions.wal_bytes_per_execution, 2) : null;
      const minPerS = round(emptyExecutions.requests_per_s * 0.95, 1);
      rows.push(
        {
          name: 'executions/s, empty database',
          measurement: emptyExecutions,
          note: `${emptyExecutions.wal_bytes_per_execution} WAL bytes/execution, ${emptyExecutions.machine_cpu_ms_per_execution} ms CPU/execution`,
        },
        {
          name: `executions/s on the history (${total} executions)`,
          measurement: historyExecutions,
          min_per_s: minPerS,
          note:
            `${ratio}x the empty database's (target >= 0.95); WAL ${historyExecutions.wal_bytes_per_execution} bytes/execution = ${walRatio}x ` +
            `(target <= 1.5x${walRatio !== null && walRatio > 1.5 ? ': MISSED' : ''}); ${historyExecutions.machine_cpu_ms_per_execution} ms CPU/execution. ` +
            'WAL is cluster-wide: other databases\' writes count too',
        },
        {
          name: 'seeding (INSERT ... SELECT generate_series)',
          measurement: { requests_per_s: 0, requests_total: 0, p50_ms: null, p95_ms: null, p99_ms: null, errors: 0, non_2xx: 0, duration_s: seeded.seconds },
          note: `${seeded.seconds} s for ${JSON.stringify(seeded.counts)}; steps ${JSON.stringify(seeded.steps_s)}`,
        },
        exportRow,
      );
      return rows;
    } finally {
      await db.end();
    }
  },
  };
}

export default historyScenario({ analyticsOnly: false });

/** Run by name only (`BENCH_SCENARIOS=analytics`): a full run measures the same rows in `history`. */
export const analytics = historyScenario({ analyticsOnly: true });
