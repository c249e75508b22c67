// The engine's write path in miniature, for measuring what triggers on it cost: a database of its own
// (migrated from the built dist), one organization, workflow, api trigger and customer, and the two
// statements an execution costs — the firing (the execution and its trigger execution) and the commit
// (both finished, 2 sent messages, consumed messages marked, the workflow's counter; optionally 2 steps).
// Used by bench/rollup-write-cost.mjs and bench/journey-write-cost.mjs.
import pg from 'pg';
import { DataSource } from 'typeorm';

const FIRE = `
  WITH f AS (SELECT uuid_v7() AS id, uuid_v7() AS te_id, 'customer-' || (random() * 5000)::int AS customer FROM generate_series(1, $4::int)),
  e AS (INSERT INTO workflow_executions (id, organization_id, workflow_id, workflow_version, trigger_id, trigger_execution_id, customer_id, customer_ref, channel, status, input, state, started_at)
        SELECT id, $1, $2, 1, $3, te_id, $5, customer, 'whatsapp', 'running', '{}', '{}', now() FROM f)
  INSERT INTO trigger_executions (id, organization_id, trigger_id, workflow_id, workflow_execution_id, status, input, triggered_at)
  SELECT te_id, $1, $3, $2, id, 'running', jsonb_build_object('customer_id', customer, 'channel', 'whatsapp'), now() FROM f
  RETURNING workflow_execution_id AS id`;

const STEPS = `
  ), steps AS (
    INSERT INTO execution_steps (execution_id, node_id, type, status, started_at, completed_at, duration_ms, input, output)
    SELECT e.id, n.node, 'message', 'completed', now(), now(), 3, '{}', '{"message_sent":true}' FROM execution e CROSS JOIN (VALUES ('greet'), ('status')) n(node)
    ON CONFLICT (execution_id, node_id) DO NOTHING`;

const commitStatement = (withSteps) => `
  WITH execution AS (
    UPDATE workflow_executions e SET status = 'success', completed_at = now(), duration_ms = 1200, state = '{}', updated_at = now()
     WHERE e.id = ANY ($1::uuid[]) RETURNING e.id, e.trigger_execution_id, e.workflow_id, e.status, e.completed_at
  ${withSteps ? STEPS : ''}), sent AS (
    INSERT INTO messages (organization_id, customer_id, channel, direction, content, execution_id)
    SELECT $2, $3, 'whatsapp', 'outbound', 'hi', e.id FROM execution e CROSS JOIN generate_series(1, 2)
  ), consumed AS (
    UPDATE messages m SET consumed_at = now() WHERE m.id = ANY (ARRAY[]::uuid[])
  ), trigger_execution AS (
    UPDATE trigger_executions t SET status = e.status, completed_at = e.completed_at, duration_ms = 1200
      FROM execution e WHERE t.id = ANY (ARRAY[e.trigger_execution_id])
  )
  UPDATE workflows w SET success_count = w.success_count + (SELECT count(*) FROM execution) WHERE w.id = $4`;

export const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];

/**
 * Runs `measure(path)` against a fresh, migrated database named `<prefix>_<time>` and drops it afterwards.
 * `path` offers: `db` (one pg client, synchronous_commit off), `ds` (TypeORM, to undo/redo migrations),
 * `round()` (ms per execution over `n` executions in batches of `batch`), and `explain(extra)` (one firing
 * and one commit — plus the statements `extra` returns — under EXPLAIN ANALYZE: their trigger lines as
 * [phase, trigger name, ms per execution]).
 */
export async function withWritePath({ prefix, n, batch, steps = false }, measure) {
  const server = (process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
  const name = `${prefix}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: `${server}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const { dataSourceOptions } = await import('../../dist/src/database/data-source.options.js');
  const ds = new DataSource(dataSourceOptions({ databaseUrl: `${server}/${name}` }));
  const db = new pg.Client({ connectionString: `${server}/${name}` });
  try {
    await ds.initialize();
    await ds.runMigrations({ transaction: 'each' });
    await db.connect();
    // CPU, not the disk's flush latency (which the machine's other load makes noisy).
    await db.query('SET synchronous_commit = off');
    const one = async (sql, values) => (await db.query(sql, values)).rows[0].id;
    const org = await one(`INSERT INTO organizations (name) VALUES ('w') RETURNING id`);
    const wf = await one(`INSERT INTO workflows (organization_id, name, configuration) VALUES ($1, 'w', '{"nodes":[]}') RETURNING id`, [org]);
    const tr = await one(`INSERT INTO triggers (organization_id, workflow_id, name, type, configuration) VALUES ($1, $2, 't', 'api', '{}') RETURNING id`, [org, wf]);
    const customer = await one(`INSERT INTO customers (organization_id, external_id, first_seen_at, last_seen_at) VALUES ($1, 'c', now(), now()) RETURNING id`, [org]);
    const COMMIT = commitStatement(steps);
    const fireValues = [org, wf, tr, batch, customer];
    const commitValues = (ids) => [ids, org, customer, wf];

    async function round() {
      const start = process.hrtime.bigint();
      for (let i = 0; i < n; i += batch) {
        const { rows } = await db.query({ name: 'fire', text: FIRE, values: fireValues });
        await db.query({ name: 'commit', text: COMMIT, values: commitValues(rows.map((r) => r.id)) });
      }
      return Number(process.hrtime.bigint() - start) / 1e6 / n;
    }

    async function explain(extra = () => []) {
      const fired = await db.query({ text: `EXPLAIN (ANALYZE, FORMAT JSON) ${FIRE}`, values: fireValues });
      const ids = (await db.query(`SELECT id FROM workflow_executions WHERE status = 'running' ORDER BY started_at DESC LIMIT $1`, [batch])).rows;
      const committed = await db.query({ text: `EXPLAIN (ANALYZE, FORMAT JSON) ${COMMIT}`, values: commitValues(ids.map((r) => r.id)) });
      const phases = [['fire', fired], ['commit', committed]];
      for (const [phase, sql, values] of extra({ org, customer })) phases.push([phase, await db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, values)]);
      return phases.flatMap(([phase, r]) => (r.rows[0]['QUERY PLAN'][0].Triggers ?? []).map((t) => [phase, t['Trigger Name'], t.Time / batch]));
    }

    await measure({ db, ds, round, explain });
  } finally {
    await db.end().catch(() => {});
    await ds.destroy().catch(() => {});
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
}
