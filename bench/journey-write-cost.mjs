// Per-execution cost of the journey rollup triggers (migration JourneyRollups) on the write path:
// N executions written as the engine writes them (a firing statement inserting the execution and
// its trigger execution; a commit statement finishing both with 2 steps and 2 sent messages,
// counting on the workflow), in batches of B executions per statement, one client, in a database
// of its own. Rounds alternate between the journey triggers enabled and disabled (every other
// rollup trigger on in both); prints the median ms per execution of each, and the server time of
// each journey trigger per execution from EXPLAIN ANALYZE's trigger lines.
// After `npm run build`:  node bench/journey-write-cost.mjs [executions-per-round=2000] [batch=1] [rounds=5]
import pg from 'pg';
import { DataSource } from 'typeorm';

const server = (process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const [n = 2000, batch = 1, rounds = 5] = process.argv.slice(2).map(Number);
const name = `was_journey_write_${Date.now().toString(36)}`;
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
const JOURNEY_TRIGGERS = [
  ...['insert', 'update', 'delete'].map((op) => ['workflow_executions', `workflow_executions_journey_${op}`]),
  ...['insert', 'update', 'delete'].map((op) => ['execution_steps', `execution_steps_journey_${op}`]),
  ['workflow_executions', '"A_workflow_executions_journey_forget_steps"'],
];
// JOURNEY_TABLE=workflow_executions or execution_steps toggles only that table's journey triggers.
const toggled = JOURNEY_TRIGGERS.filter(([table]) => !process.env.JOURNEY_TABLE || table === process.env.JOURNEY_TABLE);
const setJourneyTriggers = async (on) => {
  for (const [table, trigger] of toggled) await db.query(`ALTER TABLE ${table} ${on ? 'ENABLE' : 'DISABLE'} TRIGGER ${trigger}`);
};
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
    ), steps AS (
      INSERT INTO execution_steps (execution_id, node_id, type, status, started_at, completed_at, duration_ms, input, output)
      SELECT e.id, n.node, 'message', 'completed', now(), now(), 3, '{}', '{"message_sent":true}' FROM execution e CROSS JOIN (VALUES ('greet'), ('status')) n(node)
      ON CONFLICT (execution_id, node_id) DO NOTHING
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

  async function round() {
    const start = process.hrtime.bigint();
    for (let i = 0; i < n; i += batch) {
      const { rows } = await db.query({ name: 'fire', text: FIRE, values: [org, wf, tr, batch, customer] });
      await db.query({ name: 'commit', text: COMMIT, values: [rows.map((r) => r.id), org, customer, wf] });
    }
    return Number(process.hrtime.bigint() - start) / 1e6 / n;
  }
  // Server time of each journey trigger per execution, from EXPLAIN ANALYZE's trigger lines (median over the statements).
  const samples = {};
  const runs = Math.min(n, 300);
  for (let i = 0; i < runs; i += batch) {
    const fired = await db.query({ text: `EXPLAIN (ANALYZE, FORMAT JSON) ${FIRE}`, values: [org, wf, tr, batch, customer] });
    const ids = (await db.query(`SELECT id FROM workflow_executions WHERE status = 'running' ORDER BY started_at DESC LIMIT $1`, [batch])).rows;
    const committed = await db.query({ text: `EXPLAIN (ANALYZE, FORMAT JSON) ${COMMIT}`, values: [ids.map((r) => r.id), org, customer, wf] });
    for (const [phase, r] of [['fire', fired], ['commit', committed]]) {
      for (const t of r.rows[0]['QUERY PLAN'][0].Triggers ?? []) {
        // The journey triggers, and the other rollup triggers for scale.
        if (!/journey|rollup/.test(t['Trigger Name'])) continue;
        (samples[`${phase}: ${t['Trigger Name']}`] ??= []).push(t.Time / batch);
      }
    }
  }
  const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
  const medians = Object.entries(samples).map(([k, v]) => [k, median(v)]);
  const total = (re) => medians.filter(([k]) => re.test(k)).reduce((a, [, v]) => a + v, 0).toFixed(3);
  console.log(`trigger ms per execution (batch ${batch}, median of ${runs / batch} statements): journey triggers ${total(/journey/)}, other rollup triggers ${total(/rollup/)}`);
  for (const [k, v] of medians) console.log(`  ${k.padEnd(56)} ${v.toFixed(3)}`);

  // JOURNEY_OFF=1: every journey trigger off throughout (a reference for the rounds' drift).
  if (process.env.JOURNEY_OFF) for (const [table, trigger] of JOURNEY_TRIGGERS) await db.query(`ALTER TABLE ${table} DISABLE TRIGGER ${trigger}`);
  const results = { with: [], without: [] };
  for (let r = 0; r < rounds; r++) {
    for (const mode of r % 2 === 0 ? ['with', 'without'] : ['without', 'with']) {
      if (!process.env.JOURNEY_OFF) await setJourneyTriggers(mode === 'with');
      await db.query('CHECKPOINT');
      results[mode].push(await round());
    }
  }
  if (!process.env.JOURNEY_OFF) await setJourneyTriggers(true);
  const without = median(results.without);
  for (const [mode, times] of Object.entries(results)) {
    const m = median(times);
    console.log(`${mode.padEnd(8)} journey triggers: ${m.toFixed(3)} ms/execution (rounds ${times.map((t) => t.toFixed(3)).join(', ')})` +
      (mode === 'with' ? `, +${(m - without).toFixed(3)} ms = +${(((m - without) / without) * 100).toFixed(1)}%` : ''));
  }
} finally {
  await db.end();
  await ds.destroy();
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end();
}
