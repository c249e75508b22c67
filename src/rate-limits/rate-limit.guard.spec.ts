import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import type { Type } from '@nestjs/common';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { Reflector } from '@nestjs/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../auth/access.js';
import { DomainError } from '../common/errors/domain-error.js';
import { AppConfig } from '../config/app-config.js';
import { RateLimiter } from './rate-limiter.js';
import { RedisService } from '../redis/redis.service.js';
import { namedThrottlers, ROUTE_CLASSES, type RouteClass } from './rate-limit-policies.js';
import { CountsResourceLimit, NoRateLimit, RateLimitClass, type RequestLimitSource } from './rate-limit.decorators.js';
import { RateLimitGuard } from './rate-limit.guard.js';
import { RedisThrottlerStorage } from './redis-throttler.storage.js';
import { RequestLimits } from './request-limits.service.js';
import { OrganizationLimits } from './organization-limits.js';

/** Every class lowered to a distinct small figure, so that each reaches 429 after exactly its own count. */
const FIGURES: Record<RouteClass, number> = { read: 4, write: 3, delete: 2, execution: 5, realtime: 6, historical: 3, reports: 2, export: 1 };

/** A resource with a limit of its own (as an api trigger's rate_limit): 2 per hour per resource. */
class OwnLimits implements RequestLimitSource {
  limitFor() {
    return Promise.resolve({ policy: 'own', key: `resource-${credentials}`, limit: 2, windowSeconds: 3600 });
  }
}

class Routes {
  @RateLimitClass('triggers', 'execution') @CountsResourceLimit(OwnLimits, 'own: 2/h') ownLimit() {}
  @RateLimitClass('workflows', 'read') read() {}
  @RateLimitClass('workflows', 'write') write() {}
  @RateLimitClass('workflows', 'delete') delete() {}
  @RateLimitClass('triggers', 'execution') execution() {}
  @RateLimitClass('analytics', 'realtime') realtime() {}
  @RateLimitClass('analytics', 'historical') historical() {}
  @RateLimitClass('analytics', 'reports') reports() {}
  @RateLimitClass('analytics', 'export') export() {}
  unclassified() {}
  @NoRateLimit('probe') probe() {}
}

const config = AppConfig.fromEnv(
  {},
  {
    LOG_LEVEL: 'silent',
    REDIS_KEY_PREFIX: `was_unit_rl_${randomBytes(4).toString('hex')}`,
    RATE_LIMIT_PER_CREDENTIAL: '1000',
    RATE_LIMIT_READ: String(FIGURES.read),
    RATE_LIMIT_WRITE: String(FIGURES.write),
    RATE_LIMIT_DELETE: String(FIGURES.delete),
    RATE_LIMIT_EXECUTION: String(FIGURES.execution),
    RATE_LIMIT_ANALYTICS_REALTIME: String(FIGURES.realtime),
    RATE_LIMIT_ANALYTICS_HISTORICAL: String(FIGURES.historical),
    RATE_LIMIT_ANALYTICS_REPORTS: String(FIGURES.reports),
    RATE_LIMIT_ANALYTICS_EXPORT: String(FIGURES.export),
    RATE_LIMIT_PUBLIC_PER_IP: '2',
  },
);

let redis: RedisService;
let guard: RateLimitGuard;
let credentials = 0;

function principal(): Principal {
  return { credentialType: 'jwt', credentialId: `client-${++credentials}`, name: 'c', organizationId: 'org', scopes: [] };
}

/** The guard's answer for one request: the headers it set, or the 429 it threw. */
async function call(method: keyof Routes, who?: Principal, ip = '192.0.2.1'): Promise<{ status: number; headers: Record<string, string>; retryAfter?: number }> {
  const headers: Record<string, string> = {};
  const req = { principal: who, ip, headers: {}, socket: {} };
  const res = { setHeader: (name: string, value: string) => (headers[name] = value) };
  const context = new ExecutionContextHost([req, res, () => undefined], Routes as Type<unknown>, Routes.prototype[method] as Function);
  context.setType('http');
  try {
    expect(await guard.canActivate(context)).toBe(true);
    return { status: 200, headers };
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return { status: error.status, headers: error.extra.headers ?? {}, retryAfter: error.extra.retryAfter };
  }
}

beforeAll(async () => {
  redis = new RedisService(config);
  const options = { throttlers: namedThrottlers(config) };
  const storage = new RedisThrottlerStorage(new RateLimiter(redis, config));
  // Not started (no table read): no organization has overrides here; the e2e spec org-limits covers them.
  const organizationLimits = new OrganizationLimits(undefined as never, redis, config);
  const moduleRef = { get: () => new OwnLimits() } as unknown as ConstructorParameters<typeof RateLimitGuard>[4];
  guard = new RateLimitGuard(options, storage, new Reflector(), new RequestLimits(config, options, storage, organizationLimits), moduleRef);
  await guard.onModuleInit();
});

afterAll(async () => {
  const keys = await redis.client.keys(`${config.redisKeyPrefix}:*`);
  if (keys.length > 0) await redis.client.del(...keys);
  await redis.onApplicationShutdown();
});

describe('RateLimitGuard (real Redis)', () => {
  for (const routeClass of ROUTE_CLASSES) {
    it(`${routeClass}: ${FIGURES[routeClass]} requests, then 429 with the class's headers`, async () => {
      const who = principal();
      const method = routeClass as keyof Routes;
      const group = method === 'execution' ? 'triggers' : ['realtime', 'historical', 'reports', 'export'].includes(routeClass) ? 'analytics' : 'workflows';
      for (let i = 0; i < FIGURES[routeClass]; i++) {
        const answer = await call(method, who);
        expect(answer.status).toBe(200);
        expect(answer.headers['X-RateLimit-Limit']).toBe(String(FIGURES[routeClass]));
        expect(answer.headers['X-RateLimit-Remaining']).toBe(String(FIGURES[routeClass] - 1 - i));
        expect(answer.headers.RateLimit).toMatch(new RegExp(`^"${group}-${routeClass}";r=${FIGURES[routeClass] - 1 - i};t=\\d+$`));
      }
      const refused = await call(method, who);
      expect(refused.status).toBe(429);
      expect(refused.retryAfter).toBeGreaterThan(0);
      expect(refused.headers['X-RateLimit-Remaining']).toBe('0');
      expect(refused.headers['RateLimit-Policy']).toBe(`"credential";q=1000;w=3600, "${group}-${routeClass}";q=${FIGURES[routeClass]};w=3600`);
      // Another credential has its own allowance.
      expect((await call(method, principal())).status).toBe(200);
    });
  }

  it("a resource's own limit is checked and counted in the same ONE Redis command as the credential's and the class's", async () => {
    const who = principal();
    const client = redis.client;
    const original = client.sendCommand;
    const sent: string[] = [];
    client.sendCommand = function (this: typeof client, ...args: Parameters<typeof original>) {
      sent.push((args[0] as { name: string }).name);
      return original.apply(this, args);
    } as typeof original;
    try {
      const first = await call('ownLimit', who);
      expect(sent).toEqual(['evalsha']);
      expect(first.headers['RateLimit-Policy']).toBe(`"credential";q=1000;w=3600, "triggers-execution";q=${FIGURES.execution};w=3600, "own";q=2;w=3600`);
      // The tightest: own (2) has 1 left.
      expect(first.headers.RateLimit).toMatch(/^"own";r=1;t=\d+$/);
      expect((await call('ownLimit', who)).status).toBe(200);
      const refused = await call('ownLimit', who);
      expect(refused.status).toBe(429);
      expect(refused.headers.RateLimit).toMatch(/^"own";r=0;/);
      expect(sent).toEqual(['evalsha', 'evalsha', 'evalsha']);
    } finally {
      client.sendCommand = original;
    }
  });

  it('a route without a class counts against the credential only', async () => {
    const answer = await call('unclassified', principal());
    expect(answer.headers['RateLimit-Policy']).toBe('"credential";q=1000;w=3600');
    expect(answer.headers['X-RateLimit-Remaining']).toBe('999');
  });

  it('no credential: counted per source address', async () => {
    expect((await call('unclassified', undefined, '198.51.100.7')).headers.RateLimit).toMatch(/^"public";r=1;/);
    expect((await call('unclassified', undefined, '198.51.100.7')).status).toBe(200);
    expect((await call('unclassified', undefined, '198.51.100.7')).status).toBe(429);
    expect((await call('unclassified', undefined, '198.51.100.8')).status).toBe(200);
  });

  it('@NoRateLimit routes are neither counted nor given headers', async () => {
    for (let i = 0; i < 5; i++) expect(await call('probe', undefined, '198.51.100.9')).toEqual({ status: 200, headers: {} });
  });
});
