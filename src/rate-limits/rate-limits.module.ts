import { Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import { AppConfig } from '../config/app-config.js';
import { RateLimiter } from './rate-limiter.js';
import { namedThrottlers } from './rate-limit-policies.js';
import { RateLimitGuard } from './rate-limit.guard.js';
import { RedisThrottlerStorage } from './redis-throttler.storage.js';
import { RequestLimits } from './request-limits.service.js';

/** Provider-only: the request throttler (a global guard in AppModule) and the limits the authentication guard counts. */
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [AppConfig, RateLimiter],
      useFactory: (config: AppConfig, limiter: RateLimiter) => ({ throttlers: namedThrottlers(config), storage: new RedisThrottlerStorage(limiter) }),
    }),
  ],
  providers: [RequestLimits, RateLimitGuard],
  exports: [RequestLimits, RateLimitGuard],
})
export class RateLimitsModule {}
