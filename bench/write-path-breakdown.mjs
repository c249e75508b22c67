// Where PostgreSQL's time and index writes per execution go (docs/PERFORMANCE.md, "Write path: where an
// execution's time goes"). Two modes, after `npm run build`:
//   node bench/write-path-breakdown.mjs explain [executions=300]
//     the engine's two statements in miniature (bench/lib/write-path.mjs, 2 steps, batch 1) under EXPLAIN
//     ANALYZE: median ms per execution of each statement and of each trigger inside it, and their shares;
//     then the indexes of the tables an execution writes (with the predicates of partial ones).
//   node bench/write-path-breakdown.mjs watch   (start it, then the executions scenario beside it:
//     BENCH_SCENARIOS=executions node bench/run.mjs)
//     samples pg_stat_activity of the newest was_bench_* database every 20 ms (share of active backends per
//     statement) and, until the database is dropped, its table counters: rows inserted and index entries
//     created (indexes × inserts, plus indexes × non-HOT updates) per execution inserted.
import pg from 'pg';
import { median, withWritePath } from './lib/write-path.mjs';

const [mode = 'explain', arg] = process.argv.slice(2);
const server = (process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const pct = (a, b) => `${((100 * a) / b).toFixed(1)}%`;

if (mode === 'explain') {
  const n = Number(arg ?? 300);
  await withWritePath({ prefix: 'was_wpath', n, batch: 1, steps: true }, async ({ db, explain, round }) => {
    await round(); // warm: plans cached, rollup rows of the hour/day exist
    const totals = { fire: [], commit: [] };
    const triggers = {};
    for (let i = 0; i < n; i++) {
      // explain() returns trigger lines only; wrap db.query to catch each statement's Execution Time.
      const seen = [];
      const query = db.query.bind(db);
      db.query = async (...a) => { const r = await query(...a); const p = r.rows?.[0]?.['QUERY PLAN']; if (p) seen.push(p[0]['Execution Time']); return r; };
      const one = {};
      try { for (const [phase, name, ms] of await explain()) { const k = `${phase}: ${name.startsWith('RI_ConstraintTrigger') ? 'foreign-key checks (RI_ConstraintTrigger_*)' : name}`; one[k] = (one[k] ?? 0) + ms; } } finally { db.query = query; }
      for (const [k, ms] of Object.entries(one)) (triggers[k] ??= []).push(ms);
      totals.fire.push(seen[0]); totals.commit.push(seen[1]);
    }
    const fire = median(totals.fire), commit = median(totals.commit), all = fire + commit;
    console.log(`statement medians over ${n} executions (ms per execution, server time from EXPLAIN ANALYZE):`);
    console.log(`  fire   ${fire.toFixed(3)}  ${pct(fire, all)}\n  commit ${commit.toFixed(3)}  ${pct(commit, all)}`);
    const rows = Object.entries(triggers).map(([k, v]) => [k, median(v)]).sort((a, b) => b[1] - a[1]);
    const trig = rows.reduce((s, [, v]) => s + v, 0);
    console.log(`triggers: ${trig.toFixed(3)} ms = ${pct(trig, all)} of both statements`);
    for (const [k, v] of rows) console.log(`  ${k.padEnd(62)} ${v.toFixed(3)}  ${pct(v, all)}`);
    // The indexes a row of the written tables enters (partial ones only when their predicate holds).
    const { rows: idx } = await db.query(`SELECT tablename, indexname, substring(indexdef from ' WHERE (.*)$') AS predicate FROM pg_indexes
      WHERE schemaname = 'public' AND tablename IN ('workflow_executions', 'trigger_executions', 'execution_steps', 'messages', 'outbox_events', 'customers', 'customer_sessions', 'customer_channels')
         OR tablename LIKE '%\\_hours' OR tablename LIKE '%\\_days' OR tablename LIKE '%\\_months' ORDER BY 1, 2`);
    console.log('indexes:');
    for (const r of idx) console.log(`  ${r.tablename.padEnd(28)} ${r.indexname}${r.predicate ? `  WHERE ${r.predicate}` : ''}`);
  });
} else {
  const admin = new pg.Client({ connectionString: `${server}/postgres` });
  await admin.connect();
  const before = new Set((await admin.query(`SELECT datname FROM pg_database WHERE datname LIKE 'was_bench_%'`)).rows.map((r) => r.datname));
  let name;
  while (!name) {
    const fresh = (await admin.query(`SELECT datname FROM pg_database WHERE datname LIKE 'was_bench_%'`)).rows.map((r) => r.datname).filter((d) => !before.has(d));
    if (fresh.length > 1) console.log(`several new bench databases (${fresh.join(', ')}); taking the first`);
    name = fresh[0];
    if (!name) await new Promise((r) => setTimeout(r, 200));
  }
  console.log(`watching ${name}`);
  const samples = new Map(); let ticks = 0;
  let last;
  const db = new pg.Client({ connectionString: `${server}/${name}` });
  db.on('error', () => {}); // terminated when the bench drops the database
  await db.connect().catch(() => {});
  const STATS = `
    SELECT s.relname, s.n_tup_ins::int AS ins, (s.n_tup_upd - s.n_tup_hot_upd)::int AS cold_upd, s.n_tup_hot_upd::int AS hot_upd,
           (SELECT count(*) FROM pg_index i WHERE i.indrelid = s.relid)::int AS indexes,
           (SELECT count(*) FROM pg_index i WHERE i.indrelid = s.relid AND i.indpred IS NOT NULL)::int AS partial
      FROM pg_stat_user_tables s WHERE s.n_tup_ins + s.n_tup_upd > 0`;
  // Exact rows per execution (the counters above lag by up to a second or so).
  const COUNTS = `SELECT (SELECT count(*) FROM workflow_executions) AS executions, (SELECT count(*) FROM trigger_executions) AS trigger_executions,
    (SELECT count(*) FROM execution_steps) AS steps, (SELECT count(*) FROM messages WHERE direction = 'inbound') AS inbound,
    (SELECT count(*) FROM messages WHERE direction = 'outbound') AS outbound, (SELECT count(*) FROM outbox_events) AS outbox_events,
    (SELECT count(*) FROM customer_sessions) AS customer_sessions`;
  let statsAt = 0, counted;
  for (;;) {
    try {
      const { rows } = await admin.query(`SELECT query, coalesce(wait_event_type, 'CPU') AS w FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND backend_type = 'client backend'`, [name]);
      ticks++;
      for (const r of rows) { const k = r.query.replace(/\s+/g, ' ').slice(0, 90) + ` [${r.w}]`; samples.set(k, (samples.get(k) ?? 0) + 1); }
      if (Date.now() - statsAt > 2000) { statsAt = Date.now(); try { last = (await db.query(STATS)).rows; counted = (await db.query(COUNTS)).rows[0]; } catch { /* not migrated yet, or dropped */ } }
    } catch { break; }
    if (!(await admin.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [name])).rowCount) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  await admin.end(); await db.end().catch(() => {});
  const busy = [...samples.values()].reduce((a, b) => a + b, 0);
  console.log(`\nactive backends over ${ticks} samples (mean ${(busy / ticks).toFixed(2)} active); share per statement [wait]:`);
  for (const [k, v] of [...samples].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`  ${pct(v, busy).padStart(6)}  ${k}`);
  const execs = last?.find((r) => r.relname === 'workflow_executions')?.ins;
  if (!execs) { console.log('no table counters seen'); process.exit(0); }
  console.log(`\nper execution inserted (${execs}): rows inserted, non-HOT/HOT updates, indexes (partial), index entries`);
  let total = 0;
  for (const r of last.sort((a, b) => b.ins * b.indexes - a.ins * a.indexes)) {
    const entries = ((r.ins + r.cold_upd) * r.indexes) / execs; total += entries;
    console.log(`  ${r.relname.padEnd(30)} ins ${(r.ins / execs).toFixed(2).padStart(6)}  upd ${(r.cold_upd / execs).toFixed(2)}/${(r.hot_upd / execs).toFixed(2)}  idx ${r.indexes}(${r.partial})  entries ${entries.toFixed(2)}`);
  }
  console.log(`  total index entries per execution (upper bound: partial indexes counted as if every row entered them) ${total.toFixed(1)}`);
  console.log(`rows per execution (exact count): ${Object.entries(counted).map(([k, v]) => `${k} ${(v / counted.executions).toFixed(2)}`).join(', ')}`);
}
