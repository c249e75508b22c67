import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AnswerDays1769100000000 } from '../../migrations/1769100000000-AnswerDays.js';
import { MIGRATIONS } from '../../migrations/index.js';
import { WorkflowVersionHistory1771300000000 } from '../../migrations/1771300000000-WorkflowVersionHistory.js';
import { dataSourceOptions } from '../../src/database/data-source.options.js';
import { expectJourneyRollupsMatchRows } from '../utils/journey-rollups.js';
import { expectPerformanceRollupsMatchRows } from '../utils/performance-rollups.js';
import { expectRollupsMatchRows } from '../utils/rollups.js';
import { TEST_POSTGRES_URL } from '../utils/test-env.js';

/**
 * The migrations on a database that already holds data, as a deployment meets them: each later
 * migration applied over the earlier schema with rows in it, then undone and applied again.
 * Its own throwaway database (the file's clone of the run's template is fully migrated).
 */
describe('migrations', () => {
  // Named after the run, so that the run's end drops it even if this file crashed.
  const databaseName = `${inject('testRunId')}_migrations_${randomBytes(3).toString('hex')}`;
  const admin = new Client({ connectionString: `${TEST_POSTGRES_URL}/postgres` });
  let db: DataSource;

  const indexes = async () =>
    (await db.query(`SELECT indexname FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname`)).map((r: { indexname: string }) => r.indexname);
  const counts = async () =>
    Object.fromEntries(
      (await db.query(`SELECT name, workflow_count FROM organizations ORDER BY name`)).map((r: { name: string; workflow_count: number }) => [r.name, r.workflow_count]),
    );

  /** Executions over several hours (some running, some finishing in a later hour), firings, messages. */
  const seedHistory = async (organizationId: string) => {
    const [w] = await db.query(`SELECT id FROM workflows WHERE organization_id = $1 ORDER BY name DESC LIMIT 1`, [organizationId]);
    const [tr] = await db.query(
      `INSERT INTO triggers (organization_id, workflow_id, name, type, configuration) VALUES ($1, $2, 'tr-' || gen_random_uuid(), 'api', '{}') RETURNING id`,
      [organizationId, w.id],
    );
    const [c] = await db.query(
      `INSERT INTO customers (organization_id, external_id, first_seen_at, last_seen_at) VALUES ($1, 'c-' || gen_random_uuid(), now(), now()) RETURNING id`,
      [organizationId],
    );
    await db.query(
      `WITH e AS (
         INSERT INTO workflow_executions (organization_id, workflow_id, workflow_version, customer_ref, channel, status, started_at, completed_at, duration_ms)
         SELECT $1, $2, 1, 'cust-' || (i % 4), (ARRAY['whatsapp', NULL])[1 + i % 2], (ARRAY['success', 'failed', 'running'])[1 + i % 3],
                timestamptz '2025-01-01' + i * interval '23 minutes',
                CASE WHEN i % 3 <> 2 THEN timestamptz '2025-01-01' + i * interval '23 minutes' + i * interval '7 minutes' END,
                CASE WHEN i % 3 <> 2 THEN i * 7 * 60000 END
           FROM generate_series(1, 40) i
         RETURNING id, status, started_at, completed_at, duration_ms, customer_ref, channel
       ), te AS (
         INSERT INTO trigger_executions (organization_id, trigger_id, workflow_id, workflow_execution_id, status, input, triggered_at, completed_at, duration_ms)
         SELECT $1, $3, $2, id, status, jsonb_build_object('customer_id', customer_ref, 'channel', channel), started_at, completed_at, duration_ms FROM e
       )
       INSERT INTO messages (organization_id, customer_id, channel, direction, content, execution_id)
       SELECT $1, $4, 'whatsapp', (ARRAY['outbound', 'inbound'])[1 + g % 2], 'hi', e.id FROM e CROSS JOIN generate_series(1, 3) g`,
      [organizationId, w.id, tr.id, c.id],
    );
    return { workflowId: w.id as string, triggerId: tr.id as string };
  };

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE "${databaseName}"`);
    // Only the first two migrations: the schema as the previous release left it.
    db = new DataSource({ ...dataSourceOptions({ databaseUrl: `${TEST_POSTGRES_URL}/${databaseName}` }), migrations: MIGRATIONS.slice(0, 2) });
    await db.initialize();
    await db.runMigrations({ transaction: 'each' });
    const [a] = await db.query(`INSERT INTO organizations (name) VALUES ('a') RETURNING id`);
    const [b] = await db.query(`INSERT INTO organizations (name) VALUES ('b') RETURNING id`);
    await db.query(`INSERT INTO organizations (name) VALUES ('c')`);
    await db.query(`INSERT INTO workflows (organization_id, name, configuration) SELECT $1, 'w' || g, '{"nodes":[]}' FROM generate_series(1, 5) g`, [a.id]);
    await db.query(`INSERT INTO workflows (organization_id, name, configuration) VALUES ($1, 'only', '{"nodes":[]}')`, [b.id]);
    await seedHistory(a.id);
    await db.destroy();
    db = new DataSource(dataSourceOptions({ databaseUrl: `${TEST_POSTGRES_URL}/${databaseName}` }));
    await db.initialize();
  });

  afterAll(async () => {
    if (db?.isInitialized) await db.destroy();
    await admin.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await admin.end();
  });

  it('counts the existing workflows of each organization, then keeps counting', async () => {
    await db.runMigrations({ transaction: 'each' });
    expect(await counts()).toEqual({ a: 5, b: 1, c: 0 });
    await db.query(`DELETE FROM workflows WHERE name = 'w1'`);
    // Moving a workflow to another organization moves its count.
    await db.query(`UPDATE workflows SET organization_id = (SELECT id FROM organizations WHERE name = 'c') WHERE name = 'w2'`);
    expect(await counts()).toEqual({ a: 3, b: 1, c: 1 });
  });

  it('drops the organization-wide indexes of the execution tables nothing reads; analytics brings back the two it reads', async () => {
    const now = await indexes();
    for (const gone of ['idx_outbox_events_org_occurred', 'idx_trigger_executions_org_triggered']) {
      expect(now).not.toContain(gone);
    }
    // AnalyticsReadIndexes: organization-wide messages and executions of a period.
    expect(now).toEqual(expect.arrayContaining(['idx_workflow_executions_workflow_started', 'idx_workflow_executions_org_started', 'idx_messages_org_created']));
  });

  it('adds the status indexes of the execution lists', async () => {
    expect(await indexes()).toEqual(expect.arrayContaining(['idx_workflow_executions_workflow_status_started', 'idx_trigger_executions_trigger_status_triggered']));
  });

  it('plans every trigger function on the execution history tables with sequential scans disabled (TriggerPlans: add each new one)', async () => {
    // A trigger function plans its statements once per connection, often while its tables are empty; without
    // this setting those plans scan sequentially for the connection's life (migration TriggerPlans says more).
    const functions: { fn: string; config: string[] | null }[] = await db.query(
      `SELECT DISTINCT p.oid::regprocedure::text AS fn, p.proconfig AS config
         FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
        WHERE NOT t.tgisinternal
          AND t.tgrelid::regclass::text IN ('workflow_executions', 'execution_steps', 'trigger_executions', 'messages', 'execution_answers')
          AND p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'plpgsql')
        ORDER BY 1`,
    );
    // Eight since RollupFolding: change-log functions replaced the rollups' own (one per table and rollup family);
    // seven since ExecutionsPartitioned: one statement-level function replaced the two row-level ones of a deleted execution.
    expect(functions.length).toBeGreaterThanOrEqual(7);
    expect(functions.filter((f) => !f.config?.includes('enable_seqscan=off')).map((f) => f.fn)).toEqual([]);
  });

  it('adds the trigram indexes of the workflow search, with their extensions', async () => {
    expect(await indexes()).toEqual(expect.arrayContaining(['idx_workflows_org_name_trgm', 'idx_workflows_org_description_trgm']));
    const extensions = (await db.query(`SELECT extname FROM pg_extension ORDER BY extname`)).map((r: { extname: string }) => r.extname);
    expect(extensions).toEqual(expect.arrayContaining(['btree_gin', 'pg_trgm']));
  });

  it('backfills the hourly rollups from the executions, firings and messages already recorded, then keeps them', async () => {
    const [a] = await db.query(`SELECT id FROM organizations WHERE name = 'a'`);
    const [{ n }] = await db.query(`SELECT sum(executions)::int AS n FROM workflow_execution_hours WHERE organization_id = $1`, [a.id]);
    expect(n).toBe(40);
    await expectRollupsMatchRows(db, a.id);
    await expectSketchesMatchRows(a.id);
    await seedHistory(a.id);
    await expectRollupsMatchRows(db, a.id);
  });

  it('backfills the performance rollups (duration buckets, error codes per day) from the executions already recorded', async () => {
    const [a] = await db.query(`SELECT id FROM organizations WHERE name = 'a'`);
    const [{ n }] = await db.query(`SELECT sum(executions)::int AS n FROM workflow_duration_days WHERE organization_id = $1`, [a.id]);
    expect(n).toBeGreaterThan(0);
    await expectPerformanceRollupsMatchRows(db, a.id);
  });

  /** Every stored day and month sketch of the organization is current and counts its distinct customers exactly (sparse). */
  const expectSketchesMatchRows = async (organizationId: string) => {
    const stored = await db.query(
      `SELECT s.workflow_id, s.span, s.start, s.customers, s.checksum::text AS checksum FROM workflow_customer_sketches s
         JOIN workflows w ON w.id = s.workflow_id WHERE w.organization_id = $1 ORDER BY 1, 2, 3`,
      [organizationId],
    );
    const rows = await db.query(
      `SELECT workflow_id, span, date_trunc(span, started_at, 'UTC') AS start, count(DISTINCT customer_ref)::int AS customers,
              COALESCE(sum(hashtextextended(customer_ref, 0) & 2147483647), 0)::bigint::text AS checksum
         FROM workflow_executions CROSS JOIN (VALUES ('day'), ('month')) AS v(span)
        WHERE organization_id = $1 AND customer_ref IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
      [organizationId],
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(stored).toEqual(rows);
  };

  it('keys new rows of the execution tables with time-ordered UUIDs (version 7); existing rows keep theirs', async () => {
    const [a] = await db.query(`SELECT id FROM organizations WHERE name = 'a'`);
    const before = (await db.query(`SELECT id FROM workflow_executions ORDER BY id`)).map((r: { id: string }) => r.id);
    // The rows of the previous release (random keys) are there.
    expect(before.filter((id: string) => id[14] === '4')).toHaveLength(40);
    await seedHistory(a.id);
    const rows: { id: string }[] = await db.query(`SELECT id FROM workflow_executions WHERE NOT (id = ANY ($1::uuid[])) ORDER BY created_at, id`, [before]);
    expect(rows).toHaveLength(40);
    expect(rows.every((r) => r.id[14] === '7' && '89ab'.includes(r.id[19]))).toBe(true);
    const all = (await db.query(`SELECT id FROM workflow_executions ORDER BY id`)).map((r: { id: string }) => r.id);
    expect(all.filter((id: string) => before.includes(id))).toEqual(before);
    // The key's first 48 bits are the insert time in milliseconds.
    const [{ skew }] = await db.query(
      `SELECT abs(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 - ('x' || substr(replace(uuid_v7()::text, '-', ''), 1, 12))::bit(48)::bigint) AS skew`,
    );
    expect(Number(skew)).toBeLessThan(1000);
    for (const table of ['trigger_executions', 'execution_steps', 'messages', 'outbox_events']) {
      const [{ d }] = await db.query(`SELECT column_default AS d FROM information_schema.columns WHERE table_name = $1 AND column_name = 'id'`, [table]);
      expect(d).toBe('uuid_v7()');
    }
  });

  it('versions each organization\'s workflows: inserts, deletes, moves and changes of what a filter matches bump it; counters do not', async () => {
    const version = async (name: string) => Number((await db.query(`SELECT workflows_version FROM organizations WHERE name = $1`, [name]))[0].workflows_version);
    const [a] = await db.query(`SELECT id FROM organizations WHERE name = 'a'`);
    const [b] = await db.query(`SELECT id FROM organizations WHERE name = 'b'`);
    let [va, vb] = [await version('a'), await version('b')];
    // One bump per statement, however many rows it inserts.
    await db.query(`INSERT INTO workflows (organization_id, name, configuration) SELECT $1, 'v' || g, '{"nodes":[]}' FROM generate_series(1, 3) g`, [a.id]);
    expect(await version('a')).toBe(va + 1);
    va += 1;
    for (const change of [`name = 'v1 renamed'`, `description = 'now described'`, `status = 'active'`, `channel = 'voice'`]) {
      await db.query(`UPDATE workflows SET ${change} WHERE organization_id = $1 AND name LIKE 'v1%'`, [a.id]);
      expect(await version('a'), change).toBe(++va);
    }
    await db.query(`UPDATE workflows SET execution_count = execution_count + 1, configuration = '{"nodes":[{"id":"x"}]}', updated_at = now() WHERE organization_id = $1`, [a.id]);
    expect(await version('a')).toBe(va);
    await db.query(`UPDATE workflows SET organization_id = $2 WHERE organization_id = $1 AND name = 'v2'`, [a.id, b.id]);
    expect([await version('a'), await version('b')]).toEqual([va + 1, vb + 1]);
    [va, vb] = [va + 1, vb + 1];
    await db.query(`DELETE FROM workflows WHERE name LIKE 'v%'`);
    expect([await version('a'), await version('b')]).toEqual([va + 1, vb + 1]);
  });

  it('undoes every later migration and applies them again', async () => {
    // Back to the previous release's schema, newest first.
    for (let left = MIGRATIONS.length; left > 4; left--) await db.undoLastMigration({ transaction: 'each' });
    expect(await indexes()).not.toContain('idx_workflow_executions_workflow_status_started');
    expect(await indexes()).not.toContain('idx_workflows_org_name_trgm');
    const [{ d }] = await db.query(`SELECT column_default AS d FROM information_schema.columns WHERE table_name = 'messages' AND column_name = 'id'`);
    expect(d).toBe('gen_random_uuid()');
    const rollups = await db.query(`SELECT tablename FROM pg_tables WHERE tablename LIKE '%_hours' OR tablename LIKE '%_days' OR tablename LIKE '%_sketches'`);
    expect(rollups).toEqual([]);
    expect(await db.query(`SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'webhook%' OR table_name = 'jwt_clients'`)).toEqual([]);
    expect(await db.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'organizations' AND column_name = 'workflows_version'`)).toEqual([]);
    await db.undoLastMigration({ transaction: 'each' });
    expect(await indexes()).toContain('idx_messages_org_created');
    await db.undoLastMigration({ transaction: 'each' });
    const columns = await db.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'organizations' AND column_name = 'workflow_count'`);
    expect(columns).toEqual([]);
    // Without the trigger, a workflow added now is only counted by the backfill of the next up.
    const [c] = await db.query(`SELECT id FROM organizations WHERE name = 'c'`);
    await db.query(`INSERT INTO workflows (organization_id, name, configuration) VALUES ($1, 'later', '{"nodes":[]}')`, [c.id]);
    await seedHistory((await db.query(`SELECT id FROM organizations WHERE name = 'a'`))[0].id);
    // Steps of those executions (two each; a failed one's second step failed), for the journey rollups' backfill.
    await db.query(
      `INSERT INTO execution_steps (execution_id, node_id, type, status, started_at, completed_at, duration_ms)
       SELECT e.id, n.node, 'message', CASE WHEN e.status = 'failed' AND n.node = 'b' THEN 'failed' ELSE 'completed' END, e.started_at, e.started_at, n.ms
         FROM workflow_executions e CROSS JOIN (VALUES ('a', 5), ('b', 9)) n(node, ms)`,
    );

    await db.runMigrations({ transaction: 'each' });
    expect(await counts()).toEqual({ a: 3, b: 1, c: 2 });
    expect(await indexes()).not.toContain('idx_trigger_executions_org_triggered');
    expect(await indexes()).toEqual(expect.arrayContaining(['idx_workflow_executions_workflow_status_started', 'idx_workflows_org_name_trgm', 'idx_messages_org_created']));
    // Rows written while the rollups were gone are backfilled by the next up.
    const [a] = await db.query(`SELECT id FROM organizations WHERE name = 'a'`);
    await expectRollupsMatchRows(db, a.id);
    const [{ n }] = await db.query(`SELECT sum(executions)::int AS n FROM workflow_execution_hours WHERE organization_id = $1`, [a.id]);
    expect(n).toBe(160);
    await expectSketchesMatchRows(a.id);
    // The journey rollups (JourneyRollups) are backfilled from the executions and steps already recorded.
    expect(await expectJourneyRollupsMatchRows(db, a.id)).toEqual({ executions: 160, steps: 320 });
  });

  it('backfills the answer day rollup (AnswerDays) from the answers already recorded, then keeps it', async () => {
    const [a] = await db.query(`SELECT id FROM organizations WHERE name = 'a'`);
    const days = () =>
      db.query(
        `SELECT workflow_id, day, answered, rating_sum, ratings, promoters, detractors, nps_answers FROM workflow_answer_days
          WHERE organization_id = $1 AND answered <> 0 ORDER BY 1, 2`,
        [a.id],
      );
    const rows = () =>
      db.query(
        `SELECT workflow_id, date_trunc('day', started_at, 'UTC') AS day, count(*)::int AS answered, sum(rating_sum)::float8 AS rating_sum,
                sum(ratings)::int AS ratings, sum(promoters)::int AS promoters, sum(detractors)::int AS detractors, sum(nps_answers)::int AS nps_answers
           FROM execution_answers WHERE organization_id = $1 GROUP BY 1, 2 ORDER BY 1, 2`,
        [a.id],
      );
    const answer = (where: string) =>
      db.query(
        `INSERT INTO execution_answers (execution_id, organization_id, workflow_id, customer_id, channel, started_at, rating_sum, ratings, promoters, detractors, nps_answers)
         SELECT id, organization_id, workflow_id, customer_id, channel, started_at, 1 + i % 5, 1, (i % 3 = 0)::int, (i % 3 = 1)::int, 1
           FROM (SELECT e.*, row_number() OVER (ORDER BY e.started_at) AS i FROM workflow_executions e
                  WHERE e.organization_id = $1 AND ${where} AND NOT EXISTS (SELECT 1 FROM execution_answers x WHERE x.execution_id = e.id)) e`,
        [a.id],
      );
    // Answers recorded while the rollup did not exist yet.
    const migration = new AnswerDays1769100000000();
    const runner = db.createQueryRunner();
    try {
      await migration.down(runner);
      await answer(`e.status = 'success'`);
      // In a transaction, as the migrations run.
      await runner.startTransaction();
      await migration.up(runner);
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
    const backfilled = await days();
    expect(backfilled.length).toBeGreaterThan(0);
    expect(backfilled).toEqual(await rows());
    await answer(`e.status = 'failed'`);
    await db.query(`DELETE FROM execution_answers WHERE execution_id IN (SELECT execution_id FROM execution_answers WHERE organization_id = $1 ORDER BY started_at LIMIT 5)`, [a.id]);
    expect(await days()).toEqual(await rows());
  });

  it('backfills the version history (WorkflowVersionHistory): the organization of every version, the definition of each current one, a row for a workflow without', async () => {
    const [b] = await db.query(`SELECT id FROM organizations WHERE name = 'b'`);
    const migration = new WorkflowVersionHistory1771300000000();
    const runner = db.createQueryRunner();
    let edited: string;
    let bare: string;
    try {
      await migration.down(runner);
      // As the service wrote them before: a workflow edited twice (versions 1 to 3), and one whose versions were never written.
      [{ id: edited }] = await db.query(
        `INSERT INTO workflows (organization_id, name, description, channel, configuration, version) VALUES ($1, 'edited', 'now', 'instagram', '{"nodes":[{"id":"c"}]}', 3) RETURNING id`,
        [b.id],
      );
      await db.query(
        `INSERT INTO workflow_versions (workflow_id, version, configuration) SELECT $1, v, jsonb_build_object('nodes', jsonb_build_array(jsonb_build_object('id', chr(96 + v)))) FROM generate_series(1, 3) v`,
        [edited],
      );
      [{ id: bare }] = await db.query(`INSERT INTO workflows (organization_id, name, configuration, version) VALUES ($1, 'bare', '{"nodes":[]}', 4) RETURNING id`, [b.id]);
      await runner.startTransaction();
      await migration.up(runner);
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
    const history = await db.query(
      `SELECT workflow_id, version, organization_id, name, description, channel, configuration->'nodes'->0->>'id' AS node, created_by_type
         FROM workflow_versions WHERE workflow_id = ANY ($1::uuid[]) ORDER BY name, version`,
      [[edited, bare]],
    );
    expect(history).toEqual([
      { workflow_id: bare, version: 4, organization_id: b.id, name: 'bare', description: null, channel: null, node: null, created_by_type: null },
      { workflow_id: edited, version: 3, organization_id: b.id, name: 'edited', description: 'now', channel: 'instagram', node: 'c', created_by_type: null },
      // Older versions: their definition was not recorded.
      { workflow_id: edited, version: 1, organization_id: b.id, name: null, description: null, channel: null, node: 'a', created_by_type: null },
      { workflow_id: edited, version: 2, organization_id: b.id, name: null, description: null, channel: null, node: 'b', created_by_type: null },
    ]);
    // Every workflow has its current version, and every version an organization (the column is NOT NULL).
    expect(await db.query(`SELECT w.name FROM workflows w WHERE NOT EXISTS (SELECT 1 FROM workflow_versions v WHERE v.workflow_id = w.id AND v.version = w.version)`)).toEqual([]);
    expect(await db.query(`SELECT v.id FROM workflow_versions v JOIN workflows w ON w.id = v.workflow_id WHERE v.organization_id <> w.organization_id`)).toEqual([]);
    const [{ nullable }] = await db.query(`SELECT is_nullable AS nullable FROM information_schema.columns WHERE table_name = 'workflow_versions' AND column_name = 'organization_id'`);
    expect(nullable).toBe('NO');
  });
});
