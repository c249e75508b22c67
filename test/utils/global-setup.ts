import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import type { TestProject } from 'vitest/node';
import { prepareDatabase } from '../../src/database/prepare-database.js';
import { TEST_POSTGRES_URL, TEST_REDIS_URL } from './test-env.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    redisKeyPrefix: string;
  }
}

/**
 * One database and one Redis key prefix per test run, created here with the real start-up
 * path (create database, run migrations) and dropped when the run ends.
 */
export default async function setup(project: TestProject) {
  const suffix = `${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const databaseName = `was_test_${suffix}`;
  const databaseUrl = `${TEST_POSTGRES_URL}/${databaseName}`;
  const redisKeyPrefix = `was_test_${suffix}`;
  await prepareDatabase({ databaseUrl });
  project.provide('databaseUrl', databaseUrl);
  project.provide('redisKeyPrefix', redisKeyPrefix);

  return async () => {
    const admin = new Client({ connectionString: `${TEST_POSTGRES_URL}/postgres` });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await admin.end();

    const redis = new Redis(TEST_REDIS_URL);
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisKeyPrefix}:*`, 'COUNT', 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
    await redis.quit();
  };
}
