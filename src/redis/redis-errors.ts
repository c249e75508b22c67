/**
 * Thrown instead of waiting on a Redis that does not answer (a client that is reconnecting would
 * queue the command until it does, and the caller with it).
 */
export class RedisUnavailableError extends Error {
  constructor(what: string) {
    super(`Redis is unavailable: ${what}`);
    this.name = 'RedisUnavailableError';
  }
}

/** ioredis's messages when a command could not be delivered (it sets no code on them). */
const UNAVAILABLE_MESSAGES = /^(Connection is closed|Stream isn't writeable|Reached the max retries per request limit)/;

/** True when the error says Redis could not be reached, not that a command was wrong. */
export function isRedisUnavailable(error: unknown): boolean {
  if (error instanceof RedisUnavailableError) return true;
  if (!error || typeof error !== 'object') return false;
  const { name, message } = error as { name?: unknown; message?: unknown };
  return name === 'MaxRetriesPerRequestError' || (typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message));
}

/** Resolves as `promise`, or rejects with RedisUnavailableError after `ms` (the command may still run later). */
export async function withRedisDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new RedisUnavailableError(`${what}: no answer within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
