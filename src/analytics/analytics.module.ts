import { Module } from '@nestjs/common';
import { ExecutionMetricsModule } from '../execution-metrics/execution-metrics.module.js';
import { HealthModule } from '../health/health.module.js';
import { WorkflowsModule } from '../workflows/workflows.module.js';
import { AnalyticsController } from './analytics.controller.js';
import { AnalyticsService } from './analytics.service.js';

@Module({
  imports: [WorkflowsModule, HealthModule, ExecutionMetricsModule],
  controllers: [AnalyticsController],
  providers: [AnalyticsService],
  exports: [AnalyticsService],
})
export class AnalyticsModule {}
