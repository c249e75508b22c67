import { BullModule } from '@nestjs/bull';
import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AnalyticsFilesModule, AnalyticsFilesWorkerModule } from './analytics/files/analytics-files.module.js';
import { AnalyticsModule } from './analytics/analytics.module.js';
import { AuthModule } from './auth/auth.module.js';
import { AccessGuard } from './auth/guards/access.guard.js';
import { AuthenticationGuard } from './auth/guards/authentication.guard.js';
import { EARLY_ANSWER_LIMITS } from './common/errors/early-answer.js';
import { ErrorEnvelopeFilter } from './common/errors/error-envelope.filter.js';
import { ChannelAccountsModule } from './channels/channel-accounts.module.js';
import { ChannelsModule, ChannelsWorkerModule } from './channels/channels.module.js';
import { CryptoModule } from './common/crypto/crypto.module.js';
import { createValidationPipe } from './common/errors/validation.pipe.js';
import { LoggingModule } from './common/logging/app-logger.js';
import type { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { dataSourceOptions } from './database/data-source.options.js';
import { PoolWarmup } from './database/pool-warmup.js';
import { IdempotencyGuard } from './idempotency/idempotency.guard.js';
import { IdempotencyModule } from './idempotency/idempotency.module.js';
import { HealthModule } from './health/health.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { CustomersModule, CustomersWorkerModule } from './customers/customers.module.js';
import { ExecutionMetricsModule, ExecutionMetricsWorkerModule } from './execution-metrics/execution-metrics.module.js';
import { ExecutionsModule, ExecutionsWorkerModule } from './executions/executions.module.js';
import { KnowledgeBasesModule } from './knowledge-bases/knowledge-bases.module.js';
import { PetsModule } from './pets/pets.module.js';
import { TriggersModule, TriggersWorkerModule } from './triggers/triggers.module.js';
import { RateLimitGuard } from './rate-limits/rate-limit.guard.js';
import { EarlyAnswerLimits } from './rate-limits/early-answer-limits.js';
import { RateLimitsModule } from './rate-limits/rate-limits.module.js';
import { RedisModule } from './redis/redis.module.js';
import { RollupsWorkerModule } from './rollups/rollups.module.js';
import { WebhooksModule, WebhooksWorkerModule } from './webhooks/webhooks.module.js';
import { WorkflowsModule } from './workflows/workflows.module.js';

@Module({})
export class AppModule {
  /**
   * The whole service for one configuration. Modules with queue processors add a worker
   * module to `workerModules`, loaded only when APP_ROLE is worker or all.
   */
  static forRoot(config: AppConfig): DynamicModule {
    const workerModules = [ExecutionsWorkerModule, TriggersWorkerModule, WebhooksWorkerModule, AnalyticsFilesWorkerModule, RollupsWorkerModule, ChannelsWorkerModule, CustomersWorkerModule, ExecutionMetricsWorkerModule];
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot(config),
        TypeOrmModule.forRoot({ ...dataSourceOptions(config), retryAttempts: 3, retryDelay: 1000 }),
        BullModule.forRoot({
          url: config.redisUrl,
          prefix: `${config.redisKeyPrefix}:bull`,
          // Bull's own reconnect delay grows to 20 s (e^attempt): after a 10-second outage, workers
          // would stay idle for up to 20 s more. At most 1 s between attempts instead.
          redis: { retryStrategy: (attempt: number) => Math.min(100 * attempt, 1000) },
        }),
        RedisModule,
        CryptoModule,
        RateLimitsModule,
        AuthModule,
        IdempotencyModule,
        HealthModule,
        MetricsModule,
        WorkflowsModule,
        PetsModule,
        KnowledgeBasesModule,
        ExecutionsModule,
        ExecutionMetricsModule,
        CustomersModule,
        TriggersModule,
        ChannelAccountsModule,
        ChannelsModule,
        WebhooksModule,
        AnalyticsFilesModule,
        AnalyticsModule,
        ...(config.runsWorkers ? workerModules : []),
      ],
      providers: [
        PoolWarmup,
        { provide: APP_PIPE, useFactory: createValidationPipe },
        { provide: APP_FILTER, useClass: ErrorEnvelopeFilter },
        // The filter counts /v1 answers given before the guards ran against the caller's rate limits.
        { provide: EARLY_ANSWER_LIMITS, useClass: EarlyAnswerLimits },
        // In order: who is calling, how much they may still ask (docs/API.md, "Rate limits"), may they do this, then
        // has this request (its Idempotency-Key) been answered already (src/idempotency).
        { provide: APP_GUARD, useExisting: AuthenticationGuard },
        { provide: APP_GUARD, useExisting: RateLimitGuard },
        { provide: APP_GUARD, useExisting: AccessGuard },
        { provide: APP_GUARD, useExisting: IdempotencyGuard },
      ],
    };
  }
}
