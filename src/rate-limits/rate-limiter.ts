import { Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { Counter, register } from 'prom-client';
import { AppConfig } from '../config/app-config.js';
import { RedisService } from '../redis/redis.service.js';
import { withRedisDeadline } from '../redis/redis-errors.js';

export interface RateLimitResult {
  /** The policy's name, as RateLimit-Policy names it (`credential`, `workflows-write`, `hook`, ...). */
  policy: string;
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Window length in seconds (RateLimit-Policy `w`). */
  windowSeconds: number;
  /** Unix seconds when the window resets. */
  resetAt: number;
  /** Seconds until the window resets (for Retry-After). */
  retryAfter: number;
}

/** One limit of a request: a counter key (without the service prefix), its allowance and window. */
export interface RateLimitEntry {
  policy: string;
  key: string;
  limit: number;
  windowSeconds: number;
  /**
   * false: only checked, not counted (e.g. the source address's failed-authentication count, which
   * a successful request must not raise but which, once exhausted, refuses the request).
   */
  count?: boolean;
}

export interface RateLimitOutcome {
  allowed: boolean;
  /** Per entry, in order. */
  results: RateLimitResult[];
  /** false when Redis could not be asked (fail open: `allowed` is true and `results` is empty). */
  checked: boolean;
}

function counter(name: string, help: string, labelNames: string[]): Counter<string> {
  return (register.getSingleMetric(name) as Counter<string> | undefined) ?? new Counter({ name, help, labelNames });
}

/** Rate-limit checks that could not reach Redis and let the request through (fail open). */
export const rateLimitStorageFailures = counter('rate_limit_storage_failures_total', 'Rate-limit checks skipped because Redis did not answer (request served)', []);
/** Requests refused with 429, by the policy that refused them. */
export const rateLimitRefusals = counter('rate_limit_exceeded_total', 'Requests refused with 429 by rate-limit policy', ['policy']);

/**
 * Checks and counts every limit of a request in ONE Redis round trip (fixed windows).
 * KEYS[i]; ARGV: limit, window ms and whether to count ('1') or only check ('0'), per key.
 * Counted keys are incremented at once (the common case, a request within its limits, costs one
 * INCR and one PTTL per counted key and one GET per checked one); a request over any limit is
 * refused and its increments are taken back, so a 429 uses up none of the other limits. A
 * checked-only key refuses once it has reached its limit. Returns the refusal flag, then count
 * and ms left per key (ms left is -1 for a checked-only key of an allowed request: not shown).
 */
const SCRIPT = `
local n = #KEYS
local refused = 0
local counts = {}
for i = 1, n do
  local limit = tonumber(ARGV[i * 3 - 2])
  if ARGV[i * 3] == '1' then
    local c = redis.call('INCR', KEYS[i])
    if c == 1 then redis.call('PEXPIRE', KEYS[i], ARGV[i * 3 - 1]) end
    counts[i] = c
    if c > limit then refused = 1 end
  else
    local c = tonumber(redis.call('GET', KEYS[i]) or '0')
    counts[i] = c
    if c >= limit then refused = 1 end
  end
end
local out = { refused }
for i = 1, n do
  local counted = ARGV[i * 3] == '1'
  local c = counts[i]
  if refused == 1 and counted then c = redis.call('DECR', KEYS[i]) end
  local ttl = -1
  if counted or refused == 1 then
    ttl = redis.call('PTTL', KEYS[i])
    if ttl < 0 then ttl = tonumber(ARGV[i * 3 - 1]) end
  end
  out[#out + 1] = c
  out[#out + 1] = ttl
end
return out
`;

/**
 * Reserves up to ARGV[3] of the fixed window's allowance ARGV[1] (window ARGV[2] ms) of KEYS[1] at once:
 * what is left of it, at most that many. Returns the count granted (0 when the window is used up) and
 * the ms left in the window.
 */
const RESERVE_SCRIPT = `
local wanted = tonumber(ARGV[3])
local c = redis.call('INCRBY', KEYS[1], wanted)
if c == wanted then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
local over = c - tonumber(ARGV[1])
if over > wanted then over = wanted end
if over > 0 then redis.call('DECRBY', KEYS[1], over) else over = 0 end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then ttl = tonumber(ARGV[2]) end
return { wanted - over, ttl }
`;

/** What reserve() got: `granted` of the allowance, to be used within `windowMs` (what is left of the window). */
export interface Reservation {
  granted: number;
  windowMs: number;
}

const LOST = new Set(['reconnecting', 'close', 'end']);

type LimiterRedis = {
  rateLimit(numKeys: number, ...args: (string | number)[]): Promise<number[]>;
  rateReserve(key: string, limit: number, windowMs: number, wanted: number): Promise<number[]>;
};

interface Queued {
  args: (string | number)[];
  resolve(reply: number[]): void;
  reject(error: unknown): void;
}

/**
 * The rate-limit storage shared by every API process (the throttler guard, the api trigger's own
 * rate_limit, inbound webhooks). If Redis is down or slow the request is served: the outage is
 * logged once and counted in `rate_limit_storage_failures_total`.
 */
@Injectable()
export class RateLimiter {
  private readonly logger = new Logger(RateLimiter.name);
  private failing = false;
  private readonly client: Redis;
  /** Scripts asked for in this turn of the event loop, sent together at its end (see send). */
  private queue: Queued[] = [];

  constructor(
    private readonly redis: RedisService,
    private readonly config: AppConfig,
  ) {
    // The service's command connection. (ioredis auto-pipelining on a connection of its own was
    // tried: more CPU per request, not less, as it flushes per tick; send() batches per loop turn.)
    this.client = redis.client;
    // EVALSHA with a fallback to EVAL, handled by ioredis.
    if (!(this.client as unknown as { rateLimit?: unknown }).rateLimit) this.client.defineCommand('rateLimit', { lua: SCRIPT });
    if (!(this.client as unknown as { rateReserve?: unknown }).rateReserve) this.client.defineCommand('rateReserve', { lua: RESERVE_SCRIPT, numberOfKeys: 1 });
  }

  /**
   * Takes up to `wanted` of a limit's allowance in the current window at once, for a caller that counts
   * them out itself (the channel sender's budget per account): never more than the window has left, so
   * the limit holds however many processes reserve; what a caller does not use before the window ends is
   * lost to it. Null when Redis could not be asked (fail open, as hit).
   */
  async reserve(policy: string, key: string, limit: number, windowSeconds: number, wanted: number): Promise<Reservation | null> {
    const client = this.client;
    if (LOST.has(client.status)) {
      this.failOpen(new Error(`Redis connection is ${client.status}`));
      return null;
    }
    try {
      const reserving = (client as unknown as LimiterRedis).rateReserve(this.redis.key('rl', policy, key), limit, windowSeconds * 1000, Math.max(1, Math.floor(wanted)));
      const [granted, windowMs] = await withRedisDeadline(reserving, this.config.rateLimits.redisTimeoutMs, 'rate limits');
      this.answered();
      return { granted: Number(granted), windowMs: Math.max(0, Number(windowMs)) };
    } catch (error) {
      this.failOpen(error);
      return null;
    }
  }

  private answered(): void {
    if (this.failing) {
      this.failing = false;
      this.logger.log('Rate limits: Redis answers again; limits apply');
    }
  }

  /** One limit; see hitMany. Null when Redis could not be asked (served, fail open). */
  async hit(policy: string, key: string, limit: number, windowSeconds: number): Promise<RateLimitResult | null> {
    const outcome = await this.hitMany([{ policy, key, limit, windowSeconds }]);
    return outcome.results[0] ?? null;
  }

  async hitMany(entries: readonly RateLimitEntry[]): Promise<RateLimitOutcome> {
    if (entries.length === 0) return { allowed: true, results: [], checked: true };
    const client = this.client;
    // A lost connection would queue the command until it comes back: fail open at once instead.
    // (While first connecting, the command waits, within the timeout below.)
    if (LOST.has(client.status)) return this.failOpen(new Error(`Redis connection is ${client.status}`));
    const keys = entries.map((e) => this.redis.key('rl', e.policy, e.key));
    const args: (string | number)[] = [];
    for (const e of entries) args.push(e.limit, e.windowSeconds * 1000, e.count === false ? '0' : '1');
    let reply: number[];
    try {
      reply = await withRedisDeadline(this.send([keys.length, ...keys, ...args]), this.config.rateLimits.redisTimeoutMs, 'rate limits');
    } catch (error) {
      return this.failOpen(error);
    }
    this.answered();
    const now = Date.now();
    const refused = reply[0] === 1;
    const results = entries.map((e, i): RateLimitResult => {
      const count = Number(reply[1 + i * 2]);
      const ttlMs = Math.max(0, Number(reply[2 + i * 2]));
      // Refused: counts are as before the request, and the limits at their allowance are the refusing ones.
      return {
        policy: e.policy,
        allowed: !refused || count < e.limit,
        limit: e.limit,
        remaining: Math.max(0, e.limit - count),
        windowSeconds: e.windowSeconds,
        resetAt: Math.ceil((now + ttlMs) / 1000),
        retryAfter: Math.max(1, Math.ceil(ttlMs / 1000)),
      };
    });
    if (refused) for (const r of results) if (!r.allowed) rateLimitRefusals.inc({ policy: r.policy });
    return { allowed: !refused, results, checked: true };
  }

  /**
   * One script per request, but one socket write per turn of the event loop: the requests whose
   * bytes arrived in the same poll phase reach the guard in it, and their scripts go out together
   * as one pipeline at setImmediate (the check phase of the same turn, so no request waits for
   * another turn). A write to the socket is the limiter's main cost (a system call),
   * and under load several requests share one. Each request still gets its own script, atomic and
   * exact; a lone request is sent as a plain command.
   */
  private send(args: (string | number)[]): Promise<number[]> {
    return new Promise<number[]>((resolve, reject) => {
      if (this.queue.push({ args, resolve, reject }) === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 1) {
      const [only] = batch;
      (this.client as unknown as LimiterRedis).rateLimit(...(only.args as [number, ...(string | number)[]])).then(only.resolve, only.reject);
      return;
    }
    const pipeline = this.client.pipeline() as unknown as LimiterRedis & { exec(): Promise<[Error | null, unknown][] | null> };
    for (const queued of batch) void pipeline.rateLimit(...(queued.args as [number, ...(string | number)[]]));
    pipeline.exec().then(
      (replies) =>
        batch.forEach((queued, i) => {
          const [error, reply] = replies?.[i] ?? [new Error('no reply in the pipeline'), null];
          if (error) queued.reject(error);
          else queued.resolve(reply as number[]);
        }),
      (error: unknown) => batch.forEach((queued) => queued.reject(error)),
    );
  }

  private failOpen(error: unknown): RateLimitOutcome {
    rateLimitStorageFailures.inc();
    if (!this.failing) {
      this.failing = true;
      this.logger.error(`Rate limits: Redis unreachable, serving requests without limits (${error instanceof Error ? error.message : String(error)})`);
    }
    return { allowed: true, results: [], checked: false };
  }
}

/**
 * The limit a client is closest to: a refusing one first, else the fewest requests left
 * (then the latest reset, the longer wait).
 */
export function tightest(results: readonly RateLimitResult[]): RateLimitResult | undefined {
  let best: RateLimitResult | undefined;
  for (const r of results) {
    if (!best) best = r;
    else if (r.allowed !== best.allowed) best = r.allowed ? best : r;
    else if (r.remaining < best.remaining || (r.remaining === best.remaining && r.resetAt > best.resetAt)) best = r;
  }
  return best;
}

/**
 * The specification's X-RateLimit-* headers for the tightest limit, and the IETF draft's
 * (draft-ietf-httpapi-ratelimit-headers) RateLimit-Policy (every policy applied) and RateLimit
 * (the tightest).
 */
export function rateLimitHeaders(results: RateLimitResult | readonly RateLimitResult[]): Record<string, string> {
  const all = Array.isArray(results) ? (results as readonly RateLimitResult[]) : [results as RateLimitResult];
  const chosen = tightest(all);
  if (!chosen) return {};
  const now = Math.floor(Date.now() / 1000);
  return {
    'X-RateLimit-Limit': String(chosen.limit),
    'X-RateLimit-Remaining': String(chosen.remaining),
    'X-RateLimit-Reset': String(chosen.resetAt),
    'RateLimit-Policy': all.map((r) => `"${r.policy}";q=${r.limit};w=${r.windowSeconds}`).join(', '),
    RateLimit: `"${chosen.policy}";r=${chosen.remaining};t=${Math.max(0, chosen.resetAt - now)}`,
  };
}
