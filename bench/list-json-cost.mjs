// What building GET /v1/workflows?limit=20's JSON in PostgreSQL would save (measured, not adopted): the page
// statement as the service runs it (rows parsed by pg, WorkflowSummaryResponse.from, paginate, JSON.stringify)
// beside one statement returning the page's JSON text (json_agg/json_build_object), timed in a closed loop on one
// connection: this process's CPU and the PostgreSQL backend's CPU (/proc/<backend pid>/stat) per page.
// Usage (after npm run build): N=3000 ROUNDS=4 node bench/list-json-cost.mjs
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { BenchContext } from './lib/context.mjs';
import { loadConfig } from './lib/config.mjs';
import { WORKFLOW_LIST_STATEMENTS } from '../dist/src/workflows/workflows.repository.js';
import { WorkflowSummaryResponse } from '../dist/src/workflows/dto/workflow.response.js';
import { paginate } from '../dist/src/common/pagination/page.query.js';
import { isoTimeSql } from '../dist/src/common/iso-time.js';

const ticks = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10; // ms
};
const ctx = await BenchContext.create(loadConfig(), { baselines: new Map() }, 'list-json');
try {
  const app = await ctx.startApp({ role: 'api', env: { RATE_LIMITS_ENABLED: 'false' } });
  for (let i = 0; i < 60; i++) await ctx.api(app.url, 'POST', '/v1/workflows', { name: `w${i}`, channel: 'whatsapp', configuration: { nodes: [{ id: 'a', type: 'message', content: 'hi' }] } });
  await app.process.stop();
  const client = new pg.Client({ connectionString: ctx.databaseUrl });
  await client.connect();
  const [{ org }] = (await client.query('SELECT organization_id AS org FROM workflows LIMIT 1')).rows;
  const backend = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
  const page = WORKFLOW_LIST_STATEMENTS.get('').page;
  const query = { page: 1, limit: 20, offset: 0 };
  const rowsWay = async () => {
    const { rows } = await client.query({ name: 'rows', text: page.text ?? page.sql, values: [org, 20, 0] });
    return JSON.stringify(paginate(rows.map(WorkflowSummaryResponse.from), rows[0].total, query, null));
  };
  const iso = (c) => isoTimeSql(c);
  const jsonSql = `SELECT json_build_object('data', coalesce(json_agg(json_build_object(
      'id', id, 'name', name, 'description', description, 'status', status, 'channel', channel, 'version', version,
      'execution_count', execution_count,
      'success_rate', CASE WHEN success_count + failure_count = 0 THEN NULL ELSE success_count::float8 / (success_count + failure_count) END,
      'activated_at', ${iso('activated_at')}, 'deactivated_at', ${iso('deactivated_at')},
      'created_at', ${iso('created_at')}, 'updated_at', ${iso('updated_at')}) ORDER BY created_at DESC, id DESC), '[]'),
    'pagination', json_build_object('page', 1, 'limit', $2::int, 'total', max(total), 'pages', ceil(max(total)::numeric / $2::int)::int, 'next_cursor', NULL))::text AS body
    FROM (SELECT w.*, (SELECT workflow_count FROM organizations WHERE id = $1) AS total FROM workflows w
           WHERE organization_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3) p`;
  const jsonWay = async () => (await client.query({ name: 'json', text: jsonSql, values: [org, 20, 0] })).rows[0].body;
  const a = JSON.parse(await rowsWay());
  const b = JSON.parse(await jsonWay());
  const same = JSON.stringify(a.data.map((x) => Object.fromEntries(Object.entries(x).sort()))) === JSON.stringify(b.data.map((x) => Object.fromEntries(Object.entries(x).sort())));
  console.log(`same page data: ${same}; pagination ${JSON.stringify(a.pagination)} vs ${JSON.stringify(b.pagination)}`);
  const N = Number(process.env.N ?? 3000);
  const results = { rows: [], json: [] };
  for (let round = 0; round <= Number(process.env.ROUNDS ?? 4); round++) {
    for (const [name, way] of [['rows', rowsWay], ['json', jsonWay]]) {
      const c0 = process.cpuUsage();
      const b0 = ticks(backend);
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < N; i++) await way();
      const wall = Number(process.hrtime.bigint() - t0) / 1000 / N;
      const c = process.cpuUsage(c0);
      const node = (c.user + c.system) / N;
      const pgUs = ((ticks(backend) - b0) * 1000) / N;
      if (round > 0) results[name].push({ node, pg: pgUs, wall });
    }
  }
  const med = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  for (const [name, rs] of Object.entries(results)) {
    console.log(`${name.padEnd(5)} client ${med(rs.map((r) => r.node)).toFixed(0)} µs/page, PostgreSQL backend ${med(rs.map((r) => r.pg)).toFixed(0)} µs/page, wall ${med(rs.map((r) => r.wall)).toFixed(0)} µs`);
  }
  await client.end();
} finally {
  for (const p of await ctx.dispose()) console.error(`cleanup: ${p}`);
}
