import { Global, Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import { AppConfig } from '../config/app-config.js';
import { RateLimiter } from './rate-limiter.js';
import { namedThrottlers } from './rate-limit-policies.js';
import { RateLimitGuard } from './rate-limit.guard.js';
import { RedisThrottlerStorage } from './redis-throttler.storage.js';
import { OrganizationLimits, OrganizationLimitsStore } from './organization-limits.js';
import { RequestLimits } from './request-limits.service.js';
import { TriggerRateLimits } from './trigger-rate-limits.service.js';

/**
 * Provider-only, global: every rate limit of the service. The request throttler (a global guard
 * in AppModule) and the limits the authentication guard counts; the api trigger's own limit
 * (TriggerRateLimits, found by the throttler through `@CountsResourceLimit`); an organization's
 * overrides of the figures (OrganizationLimits, held in memory); and the Redis
 * counters all of them use (RateLimiter, also used by the OAuth login and the inbound webhooks'
 * per-trigger limits). Global so that the throttler's storage and every module share one
 * RateLimiter and its batching.
 */
@Global()
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [AppConfig, RateLimiter],
      useFactory: (config: AppConfig, limiter: RateLimiter) => ({ throttlers: namedThrottlers(config), storage: new RedisThrottlerStorage(limiter) }),
    }),
  ],
  providers: [RateLimiter, OrganizationLimits, OrganizationLimitsStore, RequestLimits, RateLimitGuard, TriggerRateLimits],
  exports: [RateLimiter, OrganizationLimits, OrganizationLimitsStore, RequestLimits, RateLimitGuard, TriggerRateLimits],
})
export class RateLimitsModule {}
