import { Module } from '@nestjs/common';
import { HealthModule } from '../health/health.module.js';
import { WorkflowsModule } from '../workflows/workflows.module.js';
import { AnalyticsController } from './analytics.controller.js';
import { AnalyticsService } from './analytics.service.js';

@Module({
  imports: [WorkflowsModule, HealthModule],
  controllers: [AnalyticsController],
  providers: [AnalyticsService],
})
export class AnalyticsModule {}
