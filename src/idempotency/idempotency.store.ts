import { randomBytes } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { Counter, register } from 'prom-client';
import { RedisService } from '../redis/redis.service.js';

/** How long a stored answer is replayed (Stripe: at least 24 h). */
export const RESPONSE_TTL_SECONDS = 24 * 60 * 60;
/**
 * How long a claim holds without an answer: a request whose process died releases its key after
 * this. Longer than any /v1 POST takes (the slowest, a webhook test, waits at most 10 s).
 */
export const LOCK_TTL_SECONDS = 60;
/** How long a request waits for Redis before it is answered 503. */
export const REDIS_DEADLINE_MS = 2000;

/** An answer as it was sent: replayed byte for byte. */
export interface StoredResponse {
  status: number;
  /** The headers that describe the body or the result (Content-Type, Location). */
  headers: Record<string, string>;
  body: string;
}

export type ClaimOutcome =
  | { kind: 'claimed'; token: string }
  | { kind: 'in_use' }
  | { kind: 'mismatch' }
  | { kind: 'stored'; response: StoredResponse };

/**
 * One hash per key: `fp` (the request fingerprint) and, while in flight, `token` (the claimant's);
 * once answered, `status`, `headers` and `body`. Claimed with a lock TTL, answered with the 24 h TTL.
 * KEYS[1]; ARGV: fingerprint, token, lock ms. Returns {'claimed'} | {'mismatch'} | {'in_use'} |
 * {'stored', status, headers, body}.
 */
const CLAIM = `
local v = redis.call('HMGET', KEYS[1], 'fp', 'status', 'headers', 'body')
if not v[1] then
  redis.call('HSET', KEYS[1], 'fp', ARGV[1], 'token', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {'claimed'}
end
if v[1] ~= ARGV[1] then return {'mismatch'} end
if not v[2] then return {'in_use'} end
return {'stored', v[2], v[3], v[4]}
`;

/** KEYS[1]; ARGV: token, status, headers, body, ttl ms. Only the claimant answers (its claim may have expired and been taken). */
const COMPLETE = `
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[1], 'token')
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'headers', ARGV[3], 'body', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`;

/** KEYS[1]; ARGV: token. Forgets an unanswered claim, so that the key can be used again. */
const RELEASE = `
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
`;

type IdempotencyRedis = {
  idempotencyClaim(key: string, fingerprint: string, token: string, lockMs: number): Promise<(string | null)[]>;
  idempotencyComplete(key: string, token: string, status: number, headers: string, body: string, ttlMs: number): Promise<number>;
  idempotencyRelease(key: string, token: string): Promise<number>;
};

const LOST = new Set(['reconnecting', 'close', 'end']);

function counter(name: string, help: string, labelNames: string[]): Counter<string> {
  return (register.getSingleMetric(name) as Counter<string> | undefined) ?? new Counter({ name, help, labelNames });
}

/** Requests with an Idempotency-Key, by outcome (claimed, replayed, in_use, mismatch, unavailable). */
export const idempotencyRequests = counter('idempotency_requests_total', 'Requests carrying an Idempotency-Key, by outcome', ['outcome']);

export class IdempotencyStoreUnavailable extends Error {}

/** The Idempotency-Key records, in the service's Redis under REDIS_KEY_PREFIX, shared by every API process. */
@Injectable()
export class IdempotencyStore {
  private readonly logger = new Logger(IdempotencyStore.name);
  private readonly client: Redis;

  constructor(private readonly redis: RedisService) {
    this.client = redis.client;
    const commands = this.client as unknown as Partial<IdempotencyRedis>;
    if (!commands.idempotencyClaim) this.client.defineCommand('idempotencyClaim', { numberOfKeys: 1, lua: CLAIM });
    if (!commands.idempotencyComplete) this.client.defineCommand('idempotencyComplete', { numberOfKeys: 1, lua: COMPLETE });
    if (!commands.idempotencyRelease) this.client.defineCommand('idempotencyRelease', { numberOfKeys: 1, lua: RELEASE });
  }

  /** The Redis key of a scope (see idempotencyScope). */
  key(scope: readonly string[]): string {
    return this.redis.key('idem', ...scope);
  }

  /** Claims the key for this request, or tells what holds it. Throws IdempotencyStoreUnavailable when Redis cannot answer. */
  async claim(key: string, fingerprint: string): Promise<ClaimOutcome> {
    const token = randomBytes(16).toString('hex');
    const reply = await this.withDeadline(() => this.commands.idempotencyClaim(key, fingerprint, token, LOCK_TTL_SECONDS * 1000));
    switch (reply[0]) {
      case 'claimed':
        return { kind: 'claimed', token };
      case 'mismatch':
        return { kind: 'mismatch' };
      case 'in_use':
        return { kind: 'in_use' };
      default:
        return { kind: 'stored', response: { status: Number(reply[1]), headers: JSON.parse(reply[2] ?? '{}') as Record<string, string>, body: reply[3] ?? '' } };
    }
  }

  /** Stores the answer for 24 h. False when the claim was lost (expired) or Redis could not answer: logged, the lock then expires. */
  async complete(key: string, token: string, response: StoredResponse): Promise<boolean> {
    try {
      const done = await this.withDeadline(() =>
        this.commands.idempotencyComplete(key, token, response.status, JSON.stringify(response.headers), response.body, RESPONSE_TTL_SECONDS * 1000),
      );
      if (done !== 1) this.logger.warn({ key }, 'Idempotency-Key: the claim expired before the answer; the answer is not stored');
      return done === 1;
    } catch (error) {
      this.logger.warn({ key, err: error }, 'Idempotency-Key: the answer could not be stored; the key frees itself when its lock expires');
      return false;
    }
  }

  /** Forgets an unanswered claim (the request was refused before doing anything, or failed with a 5xx). */
  async release(key: string, token: string): Promise<void> {
    try {
      await this.withDeadline(() => this.commands.idempotencyRelease(key, token));
    } catch (error) {
      this.logger.warn({ key, err: error }, 'Idempotency-Key: the claim could not be released; it frees itself when its lock expires');
    }
  }

  private get commands(): IdempotencyRedis {
    return this.client as unknown as IdempotencyRedis;
  }

  /** A lost connection would queue the command until Redis returns: refused at once instead, and any command bounded in time. */
  private async withDeadline<T>(command: () => Promise<T>): Promise<T> {
    if (LOST.has(this.client.status)) throw new IdempotencyStoreUnavailable(`Redis connection is ${this.client.status}`);
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        command(),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new IdempotencyStoreUnavailable(`no answer within ${REDIS_DEADLINE_MS} ms`)), REDIS_DEADLINE_MS))),
      ]);
    } catch (error) {
      throw error instanceof IdempotencyStoreUnavailable ? error : new IdempotencyStoreUnavailable((error as Error)?.message ?? String(error));
    } finally {
      clearTimeout(timer);
    }
  }
}
