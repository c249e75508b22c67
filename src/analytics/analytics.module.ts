import { Module } from '@nestjs/common';
import { ExecutionMetricsModule } from '../execution-metrics/execution-metrics.module.js';
import { HealthModule } from '../health/health.module.js';
import { RollupsModule } from '../rollups/rollups.module.js';
import { WorkflowsModule } from '../workflows/workflows.module.js';
import { AnalyticsController } from './analytics.controller.js';
import { AnalyticsService } from './analytics.service.js';
import { EngagementRepository } from './engagement.repository.js';
import { JourneysRepository } from './journeys.repository.js';
import { PerformanceRepository } from './performance.repository.js';
import { RealtimeRepository } from './realtime.repository.js';
import { WorkflowAnalyticsRepository } from './workflow-analytics.repository.js';

@Module({
  imports: [WorkflowsModule, HealthModule, ExecutionMetricsModule, RollupsModule],
  controllers: [AnalyticsController],
  providers: [AnalyticsService, WorkflowAnalyticsRepository, PerformanceRepository, EngagementRepository, JourneysRepository, RealtimeRepository],
  // RollupsModule: the file generator catches the rollups up before its snapshot.
  exports: [AnalyticsService, RollupsModule],
})
export class AnalyticsModule {}
