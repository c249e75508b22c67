// The plans of docs/PERFORMANCE.md: seeds the history scenario's data (bench/lib/history-seed.mjs)
// into a database of its own, then prints EXPLAIN (ANALYZE, BUFFERS) of each list, metric and
// lookup statement the API sends for it, with the values a request would bind. After `npm run build`:
//   node bench/explain-history.mjs [database-name]     (BENCH_HISTORY_SCALE=1 by default; KEEP=1 keeps the database)
// Only 127.0.0.1. A second run with the same database name and KEEP=1 reuses the seeded data.
import { randomBytes, createHash } from 'node:crypto';
import pg from 'pg';
import { seedHistory } from './lib/history-seed.mjs';

const server = (process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const name = process.argv[2] ?? `was_explain_${Date.now().toString(36)}`;
const scale = Number(process.env.BENCH_HISTORY_SCALE ?? '1');
const url = `${server}/${name}`;

const { prepareDatabase } = await import('../dist/src/database/prepare-database.js');
await prepareDatabase({ databaseUrl: url });
const db = new pg.Client({ connectionString: url });
await db.connect();
// As the service's connections (src/database/data-source.options.ts).
await db.query('SET jit = off');

let seeded;
const existing = await db.query(`SELECT w.id AS workflow_id, t.id AS trigger_id, w.organization_id FROM workflows w JOIN triggers t ON t.workflow_id = w.id WHERE w.name = 'history'`);
if (existing.rows.length > 0) {
  seeded = { workflowId: existing.rows[0].workflow_id, triggerId: existing.rows[0].trigger_id, organizationId: existing.rows[0].organization_id };
} else {
  const { rows: [org] } = await db.query(`INSERT INTO organizations (name) VALUES ('explain') RETURNING id`);
  const key = `wfk_${randomBytes(32).toString('base64url')}`;
  await db.query(`INSERT INTO api_keys (organization_id, name, prefix, key_hash, permission_level) VALUES ($1, 'explain', $2, $3, 'full_access')`, [
    org.id, key.slice(0, 12), createHash('sha256').update(key).digest('hex'),
  ]);
  seeded = await seedHistory(db, { scale, log: (l) => console.error(l) });
  console.log(`Seeded in ${seeded.seconds} s: ${JSON.stringify(seeded.counts)} (steps ${JSON.stringify(seeded.steps_s)})\n`);
}
const { workflowId, triggerId, organizationId } = seeded;

async function explain(title, sql, values) {
  // The statement as the API sends it, planned with its values (as a custom plan would be).
  const { rows } = await db.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, values);
  console.log(`### ${title}\n\n\`\`\`\n${rows.map((r) => r['QUERY PLAN']).join('\n')}\n\`\`\`\n`);
}

export { explain, db, workflowId, triggerId, organizationId };
const { statements } = await import('./lib/history-statements.mjs');
for (const s of await statements({ db, workflowId, triggerId, organizationId })) await explain(s.title, s.sql, s.values);
await db.end();
if (process.env.KEEP !== '1') {
  const admin = new pg.Client({ connectionString: `${server}/postgres` });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end();
}
