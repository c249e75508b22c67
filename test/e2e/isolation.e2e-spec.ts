import { Redis } from 'ioredis';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MIGRATIONS } from '../../migrations/index.js';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { databaseUrlOf } from '../utils/test-databases.js';
import { TEST_REDIS_URL } from '../utils/test-env.js';

/**
 * What test/utils/file-isolation.ts promises every e2e file (files run side by side): a database of
 * its own, cloned from the run's migrated template, and a Redis key prefix of its own, both what the
 * test app and the processes it spawns are given.
 */
describe('e2e file isolation', () => {
  const databaseUrl = inject('databaseUrl');
  const prefix = inject('redisKeyPrefix');
  const databaseName = new URL(databaseUrl).pathname.slice(1);
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t?.close());

  it("names a database and a key prefix of this file's own, under the run's id", () => {
    expect(databaseName).toBe(prefix);
    expect(databaseName.startsWith(`${inject('testRunId')}_isolation_`)).toBe(true);
    expect(databaseName).not.toBe(inject('templateDatabase'));
    expect(databaseUrl).toBe(databaseUrlOf(databaseName));
  });

  it("gives the test app (and through t.config, the processes it spawns) this file's database and prefix", async () => {
    expect([t.config.databaseUrl, t.config.redisKeyPrefix]).toEqual([databaseUrl, prefix]);
    const [{ name }] = await t.app.get(DataSource).query('SELECT current_database() AS name');
    expect(name).toBe(databaseName);
  });

  it('is a clone of the migrated template: every migration applied, no rows of another file', async () => {
    const db = t.app.get(DataSource);
    const [{ n }] = await db.query('SELECT count(*)::int AS n FROM schema_migrations');
    expect(n).toBe(MIGRATIONS.length);
    const [{ organizations }] = await db.query('SELECT count(*)::int AS organizations FROM organizations');
    expect(organizations).toBe(0);
  });

  it("keeps the app's Redis keys under the file's prefix", async () => {
    // The app's Bull queues exist once it has started: their keys are under the file's prefix.
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const keys = await redis.keys(`${prefix}:*`);
      expect(keys.length).toBeGreaterThan(0);
      expect(keys.every((k) => k.startsWith(`${prefix}:`))).toBe(true);
    } finally {
      await redis.quit();
    }
  });

  it('leaves nobody connected to the template (a clone needs it idle)', async () => {
    const admin = new Client({ connectionString: databaseUrlOf('postgres') });
    await admin.connect();
    try {
      const { rows } = await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [inject('templateDatabase')]);
      expect(rows[0].n).toBe(0);
    } finally {
      await admin.end();
    }
  });
});
