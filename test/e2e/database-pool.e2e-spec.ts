import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';

/** The connections an app of `role` holds to this file's database, by their application_name. */
async function connections(db: pg.Client, role: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1`,
    [`workflow-automation-service ${role}`],
  );
  return rows[0]!.n;
}

describe('the PostgreSQL pool', { timeout: 60_000 }, () => {
  let db: pg.Client;
  const apps: TestApp[] = [];

  beforeAll(async () => {
    const probe = await startTestApp({ APP_ROLE: 'api', DATABASE_POOL_MIN: '0' });
    db = new pg.Client({ connectionString: probe.config.databaseUrl });
    await db.connect();
    await probe.close();
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
    await db?.end();
  });

  it('an API process opens DATABASE_POOL_MIN connections before it is ready, named by its role', async () => {
    const app = await startTestApp({ APP_ROLE: 'api', DATABASE_POOL_MIN: '5' });
    apps.push(app);
    // Five, and perhaps the one reading PostgreSQL's zone names as the process starts (AnalyticsService).
    expect(await connections(db, 'api')).toBeGreaterThanOrEqual(5);
    expect(await connections(db, 'api')).toBeLessThanOrEqual(6);
    // Closed with the app.
    await app.close();
    apps.pop();
    await waitFor("the app's connections to close", async () => (await connections(db, 'api')) === 0, 5000);
  });

  it('with DATABASE_POOL_MIN=0 nothing is opened ahead', async () => {
    const app = await startTestApp({ APP_ROLE: 'api', DATABASE_POOL_MIN: '0' });
    apps.push(app);
    // At most the one reading the zone names, were it still at it.
    expect(await connections(db, 'api')).toBeLessThanOrEqual(1);
  });
});
