// Cost of the workflows row triggers of migration WorkflowMessageTriggers (a workflow's managed message trigger), in a
// database of its own: 100,000 workflow inserts without a configuration.trigger (the history seed's shape) with the
// insert trigger on and off, then 2,000 active workflows with one (each writes its managed trigger), a counter update
// of those (the engine's: the trigger is not called) and their deactivation. The organization count trigger is off
// for the bulk inserts, as in the history seed (one row updated 100,000 times in one statement is quadratic).
// After `npm run build`:  node bench/workflow-trigger-cost.mjs
import pg from 'pg';
import { DataSource } from 'typeorm';
const { dataSourceOptions } = await import('../dist/src/database/data-source.options.js');
const { MIGRATIONS } = await import('../dist/migrations/index.js');
const name = `was_structure_cost_${Date.now().toString(36)}`;
const server = (process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const admin = new pg.Client({ connectionString: `${server}/postgres` });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const url = `${server}/${name}`;
const ds = new DataSource({ ...dataSourceOptions({ databaseUrl: url }), migrations: MIGRATIONS });
await ds.initialize();
try {
await ds.runMigrations();
const [{ id: org }] = await ds.query(`INSERT INTO organizations (name) VALUES ('cost') RETURNING id`);
await ds.query(`ALTER TABLE workflows DISABLE TRIGGER workflows_count_insert_delete`);
async function timed(label, sql, params) {
  const t = process.hrtime.bigint();
  await ds.query(sql, params);
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  console.log(`${label}: ${ms.toFixed(0)} ms`);
  return ms;
}
const plain = (tag, n) => `INSERT INTO workflows (organization_id, name, channel, status, configuration)
  SELECT $1, '${tag}' || i, 'whatsapp', (ARRAY['draft','active','inactive'])[1 + i % 3], '{"nodes":[{"id":"a","type":"message","content":"hi"}]}' FROM generate_series(1, ${n}) i`;
const withTrigger = (tag, n) => `INSERT INTO workflows (organization_id, name, channel, status, configuration)
  SELECT $1, '${tag}' || i, 'whatsapp', 'active', ('{"trigger":{"type":"message","keywords":["k' || i || '"]},"nodes":[{"id":"a","type":"message","content":"hi"}]}')::jsonb FROM generate_series(1, ${n}) i`;
for (let round = 0; round < 2; round++) {
  await timed(`round ${round} 100k plain, triggers on`, plain(`on${round}-`, 100000), [org]);
  await ds.query(`ALTER TABLE workflows DISABLE TRIGGER workflows_message_trigger_insert`);
  await timed(`round ${round} 100k plain, triggers off`, plain(`off${round}-`, 100000), [org]);
  await ds.query(`ALTER TABLE workflows ENABLE TRIGGER workflows_message_trigger_insert`);
  await timed(`round ${round} 2k with configuration.trigger (managed triggers written)`, withTrigger(`t${round}-`, 2000), [org]);
  await timed(`round ${round} counter update of 2k workflows (no call)`, `UPDATE workflows SET execution_count = execution_count + 1 WHERE name LIKE 't${round}-%'`);
  await timed(`round ${round} deactivate 2k workflows (managed triggers inactive)`, `UPDATE workflows SET status = 'inactive' WHERE name LIKE 't${round}-%'`);
}
console.log(await ds.query(`SELECT count(*) FILTER (WHERE managed) AS managed, count(*) FILTER (WHERE managed AND status = 'active') AS active FROM triggers`));
} finally {
  await ds.destroy();
  await admin.query(`DROP DATABASE ${name}`);
}
await admin.end();
