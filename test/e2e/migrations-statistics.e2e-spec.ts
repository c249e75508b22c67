import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { dataSourceOptions } from '../../src/database/data-source.options.js';
import { SqlStatement } from '../../src/database/sql-statement.js';
import { TEST_POSTGRES_URL } from '../utils/test-env.js';

/**
 * The statistics a new deployment starts with. A table analyzed while empty is planned as empty until
 * autovacuum's next analyze, and the hot statements' cached generic plans then scan each month's partition
 * whole as it fills; so the migrations analyze only the tables that hold rows. Its own database, migrated
 * from nothing (the run's template already holds the test suites' rows).
 */
describe('migrations on an empty database', () => {
  const databaseName = `${inject('testRunId')}_statistics_${randomBytes(3).toString('hex')}`;
  const admin = new Client({ connectionString: `${TEST_POSTGRES_URL}/postgres` });
  let db: DataSource;

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE "${databaseName}"`);
    db = new DataSource(dataSourceOptions({ databaseUrl: `${TEST_POSTGRES_URL}/${databaseName}` }));
    await db.initialize();
    await db.runMigrations({ transaction: 'each' });
  }, 120_000);

  afterAll(async () => {
    if (db?.isInitialized) await db.destroy();
    await admin.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await admin.end();
  });

  it('leaves every month partition of the high-volume tables unanalyzed, so that the planner takes their indexes', async () => {
    const partitions: { parent: string; partition: string; reltuples: number }[] = await db.query(
      `SELECT p.relname AS parent, c.relname AS partition, c.reltuples
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
        WHERE p.relkind = 'p' AND p.relnamespace = 'public'::regnamespace
        ORDER BY 1, 2`,
    );
    const parents = new Set(partitions.map((p) => p.parent));
    for (const table of ['workflow_executions', 'execution_steps', 'trigger_executions', 'messages', 'message_deliveries', 'webhook_deliveries']) {
      expect(parents).toContain(table);
    }
    // -1: never analyzed (an empty table analyzed says 0).
    expect(partitions.filter((p) => p.reltuples !== -1)).toEqual([]);
  });

  it('keeps the folds on plans made once per connection: a function defined again must say so again', async () => {
    // CREATE OR REPLACE FUNCTION drops a function's settings; the folds would then plan their statements at each
    // of a connection's first five runs (a third of a fold's time while a service warms up).
    const settings: { name: string; config: string[] | null }[] = await db.query(
      `SELECT proname AS name, proconfig AS config FROM pg_proc WHERE proname IN ('rollups_fold', 'delivery_rollups_fold') ORDER BY proname`,
    );
    expect(settings.map((s) => s.name)).toEqual(['delivery_rollups_fold', 'rollups_fold']);
    for (const { config } of settings) expect(config).toContain('plan_cache_mode=force_generic_plan');
  });

  it("plans the named statements of a conversation's path and of the webhook relay to read every table by key, and no named statement to read an index whole, as each connection's cached plan does", async () => {
    // Every module of the service, so that every named statement is registered. Those of a conversation's path and
    // of the webhook relay read no table whole either (the reads of lists and metrics may scan a table planned as
    // empty; autovacuum's first analyze plans them again while the table is still small).
    await import('../../src/app.module.js');
    const named = [...SqlStatement.named()];
    const hot = (name: string) => /^(conversations|executions|runs|channels|voice|webhooks)\./.test(name);
    expect(named.map(([name]) => name)).toEqual(expect.arrayContaining(['conversations.receive', 'executions.start', 'runs.commit', 'channels.claim', 'channels.accepted', 'voice.open-call', 'webhooks.record', 'metrics.workflow']));
    const scans: string[] = [];
    await db.transaction(async (manager) => {
      // The plan a named statement keeps for the connection's life (generic: made without the values), made
      // while the tables are new, as on a new deployment and each month's first partition rows.
      await manager.query(`SET LOCAL plan_cache_mode = force_generic_plan`);
      for (const [name, statement] of named) {
        await manager.query(`PREPARE checked AS ${statement.text}`);
        const [{ count }] = await manager.query(`SELECT cardinality(parameter_types) AS count FROM pg_prepared_statements WHERE name = 'checked'`);
        const [{ 'QUERY PLAN': [explained] }] = await manager.query(`EXPLAIN (FORMAT JSON) EXECUTE checked(${Array.from({ length: count }, () => 'NULL').join(', ')})`);
        await manager.query(`DEALLOCATE checked`);
        const walk = (n: Record<string, unknown>) => {
          // `webhooks`: the subscriptions, a few per organization, whose health the relay updates when it changes.
          if (hot(name) && n['Node Type'] === 'Seq Scan' && n['Relation Name'] !== 'webhooks') scans.push(`${name}: ${n['Relation Name'] as string}`);
          // An index read without a condition reads it whole: a partial index of every running execution or pending
          // send, say, whose predicate a status test in the statement implied, with the key left as a filter.
          if (/Index/.test(n['Node Type'] as string) && !n['Index Cond']) scans.push(`${name}: all of ${n['Index Name'] as string}`);
          for (const c of (n.Plans as Record<string, unknown>[] | undefined) ?? []) walk(c);
        };
        walk(explained.Plan as Record<string, unknown>);
      }
    });
    expect(scans).toEqual([]);
  });
});
