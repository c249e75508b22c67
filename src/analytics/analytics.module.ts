import { Module } from '@nestjs/common';
import { ExecutionsModule } from '../executions/executions.module.js';
import { HealthModule } from '../health/health.module.js';
import { WorkflowsModule } from '../workflows/workflows.module.js';
import { AnalyticsController } from './analytics.controller.js';
import { AnalyticsService } from './analytics.service.js';

@Module({
  imports: [WorkflowsModule, HealthModule, ExecutionsModule],
  controllers: [AnalyticsController],
  providers: [AnalyticsService],
  exports: [AnalyticsService],
})
export class AnalyticsModule {}
