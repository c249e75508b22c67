// The throwaway PostgreSQL database and Redis key prefix of one bench run.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';

export function randomSuffix() {
  return `${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

async function withAdmin(postgresUrl, fn) {
  const client = new pg.Client({ connectionString: `${postgresUrl}/postgres`, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const quoteIdent = (name) => `"${name.replace(/"/g, '""')}"`;

export async function createDatabase(postgresUrl, name) {
  await withAdmin(postgresUrl, (c) => c.query(`CREATE DATABASE ${quoteIdent(name)}`));
}

export async function dropDatabase(postgresUrl, name) {
  await withAdmin(postgresUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`));
}

/** Deletes every key under `<prefix>:`; returns how many were deleted. */
export async function deleteRedisPrefix(redisUrl, prefix) {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2 });
  await redis.connect();
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) deleted += await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}
