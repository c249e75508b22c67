import { Global, Module } from '@nestjs/common';
import { RateLimiter } from '../rate-limits/rate-limiter.js';
import { RedisService } from './redis.service.js';

@Global()
@Module({ providers: [RedisService, RateLimiter], exports: [RedisService, RateLimiter] })
export class RedisModule {}
