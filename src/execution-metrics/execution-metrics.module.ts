import { Module } from '@nestjs/common';
import { RollupsModule } from '../rollups/rollups.module.js';
import { WorkflowsModule } from '../workflows/workflows.module.js';
import { ExecutionMetricsRepository } from './execution-metrics.repository.js';
import { ExecutionMetricsService } from './execution-metrics.service.js';
import { SketchLoop } from './sketch.loop.js';

/**
 * Provider-only: the execution metrics of a workflow or a trigger over a period (the data of
 * `GET /v1/workflows/{id}/metrics` and `GET /v1/triggers/{id}/metrics`, whose routes live in the
 * executions and triggers controllers), read from the hourly rollups and the customer sketches.
 */
@Module({
  imports: [WorkflowsModule, RollupsModule],
  providers: [ExecutionMetricsRepository, ExecutionMetricsService],
  exports: [ExecutionMetricsService],
})
export class ExecutionMetricsModule {}

/** The sketches of closed days and months kept stored (SketchLoop), loaded only in worker processes (APP_ROLE worker or all). */
@Module({ imports: [RollupsModule], providers: [SketchLoop] })
export class ExecutionMetricsWorkerModule {}
