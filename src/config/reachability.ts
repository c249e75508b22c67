import { Redis } from 'ioredis';
import { Client } from 'pg';
import { ConfigError } from './env.schema.js';

const CONNECT_TIMEOUT_MS = 5000;

/** `host:port` of a URL, without credentials. */
function address(url: string, defaultPort: number): string {
  const u = new URL(url);
  return `${u.hostname || '127.0.0.1'}:${u.port || defaultPort}`;
}

function reason(error: unknown): string {
  const e = error as { code?: string; message?: string };
  return e.code ?? e.message ?? String(error);
}

/**
 * Start-up's first contact with PostgreSQL and Redis: when one does not answer, one line naming the
 * variable and the address (a ConfigError, printed without a stack) instead of a driver's trace or a
 * client retrying forever.
 */
export async function checkReachable(config: { databaseUrl: string; redisUrl: string }): Promise<void> {
  const admin = new URL(config.databaseUrl);
  admin.pathname = '/postgres';
  const pg = new Client({ connectionString: admin.toString(), connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  pg.on('error', () => undefined);
  try {
    await pg.connect();
  } catch (error) {
    throw new ConfigError(`PostgreSQL does not answer at ${address(config.databaseUrl, 5432)} (DATABASE_URL): ${reason(error)}`);
  } finally {
    await pg.end().catch(() => undefined);
  }
  const redis = new Redis(config.redisUrl, { lazyConnect: true, connectTimeout: CONNECT_TIMEOUT_MS, maxRetriesPerRequest: 0, retryStrategy: () => null });
  // The socket's own error (ECONNREFUSED, ENOTFOUND) arrives here; the command only says the connection closed.
  let socketError: unknown;
  redis.on('error', (error) => (socketError ??= error));
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new ConfigError(`Redis does not answer at ${address(config.redisUrl, 6379)} (REDIS_URL): ${reason(socketError ?? error)}`);
  } finally {
    redis.disconnect();
  }
}
