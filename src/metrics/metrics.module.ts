import { Module } from '@nestjs/common';
import { MetricsAccessGuard } from './metrics-access.guard.js';
import { MetricsCollector } from './metrics-collector.js';
import { MetricsController } from './metrics.controller.js';

@Module({ controllers: [MetricsController], providers: [MetricsCollector, MetricsAccessGuard] })
export class MetricsModule {}
