// Times the engagement endpoint's reads (src/analytics/engagement.repository.ts: engagement, which
// runs its statements on a pool, and totalCustomers) on a seeded history database, as the endpoint
// runs them (in parallel), for
// 30 days ending at the newest execution: overall, channel=whatsapp, customer_segment=returning/new.
// Closed loop on CONNECTIONS clients for SECONDS each; prints p50/p95 per case. After `npm run build`:
//   node bench/engagement-timing.mjs <database-name> [connections=4] [seconds=10]
// WORK_MEM (default 4MB, the server's default) sets the sessions' work_mem. Only 127.0.0.1; read-only.
import pg from 'pg';

const server = (process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const [name, connections = '4', seconds = '10'] = process.argv.slice(2);
if (!name) throw new Error('usage: node bench/engagement-timing.mjs <database-name> [connections] [seconds]');
const { EngagementRepository } = await import('../dist/src/analytics/engagement.repository.js');
// The repository reads its pool as TypeORM's PostgreSQL driver holds it (SqlStatement).
const pool = new pg.Pool({ connectionString: `${server}/${name}`, max: 20, options: `-c jit=off -c work_mem=${process.env.WORK_MEM ?? '4MB'}` });
const repo = new EngagementRepository({ driver: { master: pool } });
const { rows: [h] } = await pool.query(`SELECT organization_id, max(started_at) AS last FROM workflow_executions GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`);
const end = new Date(h.last);
const start = new Date(end.getTime() - 30 * 86_400_000);
const middle = new Date(Math.floor((start.getTime() + (end.getTime() - start.getTime()) / 2) / 3_600_000) * 3_600_000);
const cases = [
  ['30 days', null, 'all'],
  ['30 days, channel=whatsapp', 'whatsapp', 'all'],
  ['30 days, customer_segment=returning', null, 'returning'],
  ['30 days, customer_segment=new', null, 'new'],
];
const pct = (xs, p) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
for (const [title, channel, segment] of cases) {
  const times = [];
  const until = Date.now() + Number(seconds) * 1000;
  await Promise.all(
    Array.from({ length: Number(connections) }, async () => {
      const filter = { channel, segment };
      while (Date.now() < until) {
        const t0 = performance.now();
        await Promise.all([repo.engagement(h.organization_id, start, end, filter, middle), repo.totalCustomers(h.organization_id, start, end, filter)]);
        times.push(performance.now() - t0);
      }
    }),
  );
  times.sort((x, y) => x - y);
  console.log(`${title}: n=${times.length} p50=${pct(times, 50).toFixed(1)} ms p95=${pct(times, 95).toFixed(1)} ms (${connections} connections)`);
}
await pool.end();
