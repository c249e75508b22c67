// Per-execution cost of the rollup triggers on the write path: N executions written as the engine
// writes them (a firing statement inserting the execution and its trigger execution; a commit
// statement finishing both, inserting 2 sent messages, marking consumed messages, counting on the
// workflow), in batches of B executions per statement (and a commit writing no row), one client, in a database of its own.
// Rounds alternate between: the triggers of the previous release (migration MetricsCustomerSketches
// undone), the current triggers, and no rollup triggers; prints the median ms per execution of each.
// After `npm run build`:  node bench/rollup-write-cost.mjs [executions-per-round=2000] [batch=1] [rounds=3]
import pg from 'pg';
import { DataSource } from 'typeorm';

const server = (process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const [n = 2000, batch = 1, rounds = 3] = process.argv.slice(2).map(Number);
const name = `was_rollup_write_${Date.now().toString(36)}`;
const admin = new pg.Client({ connectionString: `${server}/postgres` });
await admin.connect();
await admin.query(`CREATE DATABASE "${name}"`);
const { dataSourceOptions } = await import('../dist/src/database/data-source.options.js');
const ds = new DataSource(dataSourceOptions({ databaseUrl: `${server}/${name}` }));
await ds.initialize();
await ds.runMigrations({ transaction: 'each' });
const db = new pg.Client({ connectionString: `${server}/${name}` });
await db.connect();
// CPU, not the disk's flush latency (which the machine's other load makes noisy).
await db.query('SET synchronous_commit = off');
try {
  const { rows: [{ id: org }] } = await db.query(`INSERT INTO organizations (name) VALUES ('w') RETURNING id`);
  const { rows: [{ id: wf }] } = await db.query(`INSERT INTO workflows (organization_id, name, configuration) VALUES ($1, 'w', '{"nodes":[]}') RETURNING id`, [org]);
  const { rows: [{ id: tr }] } = await db.query(
    `INSERT INTO triggers (organization_id, workflow_id, name, type, configuration) VALUES ($1, $2, 't', 'api', '{}') RETURNING id`,
    [org, wf],
  );
  const { rows: [{ id: customer }] } = await db.query(
    `INSERT INTO customers (organization_id, external_id, first_seen_at, last_seen_at) VALUES ($1, 'c', now(), now()) RETURNING id`,
    [org],
  );
  const FIRE = `
    WITH f AS (SELECT uuid_v7() AS id, uuid_v7() AS te_id, 'customer-' || (random() * 5000)::int AS customer FROM generate_series(1, $4::int)),
    e AS (INSERT INTO workflow_executions (id, organization_id, workflow_id, workflow_version, trigger_id, trigger_execution_id, customer_id, customer_ref, channel, status, input, state, started_at)
          SELECT id, $1, $2, 1, $3, te_id, $5, customer, 'whatsapp', 'running', '{}', '{}', now() FROM f)
    INSERT INTO trigger_executions (id, organization_id, trigger_id, workflow_id, workflow_execution_id, status, input, triggered_at)
    SELECT te_id, $1, $3, $2, id, 'running', jsonb_build_object('customer_id', customer, 'channel', 'whatsapp'), now() FROM f
    RETURNING workflow_execution_id AS id`;
  const COMMIT = `
    WITH execution AS (
      UPDATE workflow_executions e SET status = 'success', completed_at = now(), duration_ms = 1200, state = '{}', updated_at = now()
       WHERE e.id = ANY ($1::uuid[]) RETURNING e.id, e.trigger_execution_id, e.workflow_id, e.status, e.completed_at
    ), sent AS (
      INSERT INTO messages (organization_id, customer_id, channel, direction, content, execution_id)
      SELECT $2, $3, 'whatsapp', 'outbound', 'hi', e.id FROM execution e CROSS JOIN generate_series(1, 2)
    ), consumed AS (
      UPDATE messages m SET consumed_at = now() WHERE m.id = ANY (ARRAY[]::uuid[])
    ), trigger_execution AS (
      UPDATE trigger_executions t SET status = e.status, completed_at = e.completed_at, duration_ms = 1200
        FROM execution e WHERE t.id = ANY (ARRAY[e.trigger_execution_id])
    )
    UPDATE workflows w SET success_count = w.success_count + (SELECT count(*) FROM execution) WHERE w.id = $4`;
  const ROLLUP_TRIGGERS = ['workflow_executions', 'trigger_executions', 'messages'].flatMap((t) =>
    ['insert', 'update', 'delete'].map((op) => `ALTER TABLE ${t} %s TRIGGER ${t === 'messages' ? 'messages' : t}_rollup_${op}`),
  ).concat(['insert', 'update', 'delete'].map((op) => `ALTER TABLE workflow_executions %s TRIGGER workflow_executions_rollup_performance_${op}`));
  async function round() {
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i += batch) {
      const { rows } = await db.query({ name: 'fire', text: FIRE, values: [org, wf, tr, batch, customer] });
      await db.query({ name: 'commit', text: COMMIT, values: [rows.map((r) => r.id), org, customer, wf] });
    }
    return Number(process.hrtime.bigint() - start) / 1e6 / n;
  }
  // Server time of each rollup trigger per execution, from EXPLAIN ANALYZE's trigger lines: the
  // median over the statements (robust to the machine's other load), alternating the two versions.
  const samples = { previous: {}, current: {} };
  async function triggerTimes(mode) {
    const runs = Math.min(n, 300);
    for (let i = 0; i < runs; i += batch) {
      const fired = await db.query({ text: `EXPLAIN (ANALYZE, FORMAT JSON) ${FIRE}`, values: [org, wf, tr, batch, customer] });
      const ids = (await db.query(`SELECT id FROM workflow_executions WHERE status = 'running' ORDER BY started_at DESC LIMIT $1`, [batch])).rows;
      const committed = await db.query({ text: `EXPLAIN (ANALYZE, FORMAT JSON) ${COMMIT}`, values: [ids.map((r) => r.id), org, customer, wf] });
      // A commit that finishes nothing and sends nothing still fires these (statement triggers).
      const empty = await db.query(
        `EXPLAIN (ANALYZE, FORMAT JSON) WITH t AS (UPDATE trigger_executions SET status = 'success' WHERE id = ANY (ARRAY[]::uuid[]))
         INSERT INTO messages (organization_id, customer_id, channel, direction, content) SELECT $1, $2, 'whatsapp', 'outbound', 'x' WHERE false`,
        [org, customer],
      );
      for (const [phase, r] of [['fire', fired], ['commit', committed], ['empty', empty]]) {
        for (const t of r.rows[0]['QUERY PLAN'][0].Triggers ?? []) {
          if (!t['Trigger Name'].includes('rollup')) continue;
          const key = `${phase}: ${t['Trigger Name']}`;
          (samples[mode][key] ??= []).push(t.Time / batch);
        }
      }
    }
  }
  for (let r = 0; r < rounds; r++) {
    await ds.undoLastMigration({ transaction: 'each' });
    await triggerTimes('previous');
    await ds.runMigrations({ transaction: 'each' });
    await triggerTimes('current');
  }
  const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
  for (const [mode, byTrigger] of Object.entries(samples)) {
    const medians = Object.entries(byTrigger).map(([k, v]) => [k, median(v)]);
    console.log(`${mode}: rollup trigger ms per execution (batch ${batch}, median of ${Object.values(byTrigger)[0].length} statements), total ${medians.reduce((a, [, v]) => a + v, 0).toFixed(3)}`);
    for (const [k, v] of medians) console.log(`  ${k.padEnd(48)} ${v.toFixed(3)}`);
  }

  const results = { previous: [], current: [], none: [] };
  for (let r = 0; r < rounds; r++) {
    for (const mode of ['previous', 'current', 'none']) {
      if (mode === 'previous') await ds.undoLastMigration({ transaction: 'each' });
      if (mode === 'current') await ds.runMigrations({ transaction: 'each' });
      if (mode === 'none') for (const s of ROLLUP_TRIGGERS) await db.query(s.replace('%s', 'DISABLE'));
      await db.query('CHECKPOINT');
      results[mode].push(await round());
      if (mode === 'none') for (const s of ROLLUP_TRIGGERS) await db.query(s.replace('%s', 'ENABLE'));
    }
  }
  const none = median(results.none);
  for (const [mode, times] of Object.entries(results)) {
    const m = median(times);
    console.log(`${mode.padEnd(9)} ${m.toFixed(3)} ms/execution (rounds ${times.map((t) => t.toFixed(3)).join(', ')})${mode === 'none' ? '' : `, triggers +${(m - none).toFixed(3)} ms`}`);
  }
} finally {
  await db.end();
  await ds.destroy();
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end();
}
