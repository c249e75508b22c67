import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../migrations/index.js';
import { dataSourceOptions } from '../../src/database/data-source.options.js';
import { TEST_POSTGRES_URL } from '../utils/test-env.js';

/**
 * The migrations on a database that already holds data, as a deployment meets them: each later
 * migration applied over the earlier schema with rows in it, then undone and applied again.
 * Its own throwaway database (the run's shared one is fully migrated at start).
 */
describe('migrations', () => {
  const databaseName = `was_test_migrations_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const admin = new Client({ connectionString: `${TEST_POSTGRES_URL}/postgres` });
  let db: DataSource;

  const indexes = async () =>
    (await db.query(`SELECT indexname FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname`)).map((r: { indexname: string }) => r.indexname);
  const counts = async () =>
    Object.fromEntries(
      (await db.query(`SELECT name, workflow_count FROM organizations ORDER BY name`)).map((r: { name: string; workflow_count: number }) => [r.name, r.workflow_count]),
    );

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

  it('drops the organization-wide indexes of the execution tables', async () => {
    const now = await indexes();
    for (const gone of ['idx_outbox_events_org_occurred', 'idx_workflow_executions_org_started', 'idx_trigger_executions_org_triggered', 'idx_messages_org_created']) {
      expect(now).not.toContain(gone);
    }
    expect(now).toContain('idx_workflow_executions_workflow_started');
  });

  it('undoes both and applies them again', async () => {
    // The webhooks migration (1765000000000) is the last one: undone first, and its tables go with it.
    await db.undoLastMigration({ transaction: 'each' });
    expect(await db.query(`SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'webhook%'`)).toEqual([]);
    await db.undoLastMigration({ transaction: 'each' });
    expect(await indexes()).toContain('idx_messages_org_created');
    await db.undoLastMigration({ transaction: 'each' });
    const columns = await db.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'organizations' AND column_name = 'workflow_count'`);
    expect(columns).toEqual([]);
    // Without the trigger, a workflow added now is only counted by the backfill of the next up.
    const [c] = await db.query(`SELECT id FROM organizations WHERE name = 'c'`);
    await db.query(`INSERT INTO workflows (organization_id, name, configuration) VALUES ($1, 'later', '{"nodes":[]}')`, [c.id]);

    await db.runMigrations({ transaction: 'each' });
    expect(await counts()).toEqual({ a: 3, b: 1, c: 2 });
    expect(await indexes()).not.toContain('idx_messages_org_created');
  });
});
