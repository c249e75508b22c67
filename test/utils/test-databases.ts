import { Redis } from 'ioredis';
import { Client } from 'pg';
import { TEST_POSTGRES_URL, TEST_REDIS_URL } from './test-env.js';

/**
 * The databases and Redis keys of an e2e run. The run migrates one template database once
 * (global-setup.ts); each e2e file then gets a clone of it (`CREATE DATABASE … TEMPLATE`, a file
 * copy: no migration) and a Redis key prefix of its own (file-isolation.ts), so that no file sees
 * another's rows, queues, schedule jobs or rate-limit keys. Every name starts with the run's id, so
 * that the end of the run can drop whatever a crashed file left behind.
 */

/** The URL of a database on the shared test PostgreSQL. */
export function databaseUrlOf(name: string): string {
  return `${TEST_POSTGRES_URL}/${name}`;
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

async function withAdmin<T>(work: (admin: Client) => Promise<T>): Promise<T> {
  const admin = new Client({ connectionString: databaseUrlOf('postgres'), connectionTimeoutMillis: 10_000 });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

/**
 * A new database, a copy of `template` (which nobody may be connected to). PostgreSQL refuses a
 * copy while another session is on the template (a backend that has not yet exited after its
 * client left, or two copies starting together on an older server): try again for a while.
 */
export async function cloneDatabase(template: string, name: string): Promise<void> {
  await withAdmin(async (admin) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await admin.query(`CREATE DATABASE ${quote(name)} TEMPLATE ${quote(template)}`);
        return;
      } catch (error) {
        // 55006 object_in_use: "source database … is being accessed by other users".
        if ((error as { code?: string }).code !== '55006' || Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  });
}

/** Drops the named databases, ending the sessions still on them. */
export async function dropDatabases(names: string[]): Promise<void> {
  if (names.length === 0) return;
  await withAdmin(async (admin) => {
    for (const name of names) await admin.query(`DROP DATABASE IF EXISTS ${quote(name)} WITH (FORCE)`);
  });
}

/** The databases whose name starts with `prefix` (a run id: the end of the run drops them all). */
export function databasesStartingWith(prefix: string): Promise<string[]> {
  return withAdmin(async (admin) => {
    const pattern = `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const { rows } = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [pattern]);
    return rows.map((r) => r.datname);
  });
}

/** Deletes every Redis key that starts with `prefix` (a file's or a run's prefix). */
export async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 3 });
  await redis.connect();
  try {
    const pattern = `${prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      if (keys.length > 0) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    await redis.quit();
  }
}
