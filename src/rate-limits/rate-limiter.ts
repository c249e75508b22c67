import { Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { Counter, register } from 'prom-client';
import { AppConfig } from '../config/app-config.js';
import { RedisService } from '../redis/redis.service.js';

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

const LOST = new Set(['reconnecting', 'close', 'end']);

type LimiterRedis = { rateLimit(numKeys: number, ...args: (string | number)[]): Promise<number[]> };

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
    let timer: NodeJS.Timeout | undefined;
    let reply: number[];
    try {
      reply = await Promise.race([
        this.send([keys.length, ...keys, ...args]),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${this.config.rateLimits.redisTimeoutMs} ms`)), this.config.rateLimits.redisTimeoutMs))),
      ]);
    } catch (error) {
      return this.failOpen(error);
    } finally {
      clearTimeout(timer);
    }
    if (this.failing) {
      this.failing = false;
      this.logger.log('Rate limits: Redis answers again; limits apply');
    }
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
