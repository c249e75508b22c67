import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request } from 'express';
import type { DataSource } from 'typeorm';
import { principalAllows, type AccessRequirement, type Principal } from '../auth/access.js';
import { isUuid } from '../common/ids/uuid.js';
import { AppConfig } from '../config/app-config.js';
import type { RequestLimitSource } from './rate-limit.decorators.js';
import type { RateLimitEntry } from './rate-limiter.js';
import { RedisService } from '../redis/redis.service.js';
import { Trigger } from '../triggers/entities/trigger.entity.js';
import { credentialMayFire, DEFAULT_API_RATE_LIMIT } from '../triggers/trigger-types/api.trigger-type.js';

const CHANGED_CHANNEL = 'triggers:limit-changed';
const MAX_CACHED = 10_000;
/** How long a trigger's limit is trusted from memory (a change is published at once; this bounds a missed message). */
const CACHE_MS = 60_000;
/** The policy of an api trigger's own rate_limit (RateLimit-Policy's name), per trigger, per hour. */
export const TRIGGER_RATE_LIMIT_POLICY = 'trigger-rate-limit';
const WINDOW_SECONDS = 3600;
/** What the fire route requires (@RequireAccess on TriggersController.fire); AccessGuard runs after the throttler. */
const FIRE_ACCESS: AccessRequirement = { resource: 'triggers', action: 'write' };

interface Known {
  organizationId: string;
  /** The rate_limit per hour of an api trigger; null for other types. */
  rateLimit: number | null;
  authentication: unknown;
  expiresAt: number;
}

/**
 * The api trigger's own `rate_limit` for the request throttler (RateLimitGuard), so that it is
 * counted in the same Redis round trip as the credential's and the class's limits. The trigger's
 * figures come from a short-lived cache in memory (a database read on a miss, scoped to the
 * caller's organization); an update or deletion evicts the trigger here and, through Redis, on
 * every other process; a lost subscription drops the whole cache.
 */
@Injectable()
export class TriggerRateLimits implements RequestLimitSource, OnModuleInit {
  private readonly logger = new Logger(TriggerRateLimits.name);
  private readonly cache = new Map<string, Known>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly redis: RedisService,
    private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    if (!this.config.rateLimitsEnabled) return;
    await this.redis.subscribe(CHANGED_CHANNEL, (id) => {
      if (id === null) this.cache.clear();
      else this.cache.delete(id);
    });
  }

  /** The trigger's limit for a fire request, when it is an api trigger of the caller's organization that this credential may fire. */
  async limitFor(req: Request, principal: Principal): Promise<RateLimitEntry | undefined> {
    // A caller the route refuses (403, after the throttler) does not use up the trigger's allowance.
    if (!principalAllows(principal, FIRE_ACCESS)) return undefined;
    const id = req.params?.trigger_id;
    if (typeof id !== 'string' || !isUuid(id)) return undefined;
    const known = await this.lookup(id, principal.organizationId);
    if (!known || known.organizationId !== principal.organizationId || known.rateLimit === null) return undefined;
    // A credential type the trigger refuses (403) does not use up the trigger's allowance.
    if (!credentialMayFire(known.authentication, principal.credentialType)) return undefined;
    return { policy: TRIGGER_RATE_LIMIT_POLICY, key: id, limit: known.rateLimit, windowSeconds: WINDOW_SECONDS };
  }

  /** After a trigger's configuration changed or it was deleted: forgotten here and on every process. */
  async forget(id: string): Promise<void> {
    this.cache.delete(id);
    if (!this.config.rateLimitsEnabled) return;
    try {
      await this.redis.publish(CHANGED_CHANNEL, id);
    } catch (error) {
      this.logger.error(`Could not publish a trigger's changed limit; other processes use the old one for up to ${CACHE_MS / 1000}s: ${(error as Error).message}`);
    }
  }

  private async lookup(id: string, organizationId: string): Promise<Known | undefined> {
    const cached = this.cache.get(id);
    if (cached && cached.expiresAt > Date.now() && cached.organizationId === organizationId) return cached;
    this.cache.delete(id);
    const trigger = await this.dataSource.manager.findOne(Trigger, { select: { id: true, organizationId: true, type: true, configuration: true }, where: { id, organizationId } });
    if (!trigger) return undefined;
    const known: Known = {
      organizationId: trigger.organizationId,
      rateLimit: trigger.type === 'api' ? Number(trigger.configuration.rate_limit ?? DEFAULT_API_RATE_LIMIT) : null,
      authentication: trigger.configuration.authentication,
      expiresAt: Date.now() + CACHE_MS,
    };
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(id, known);
    return known;
  }
}
