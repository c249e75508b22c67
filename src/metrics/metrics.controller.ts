import { Controller, Get, Header } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { collectDefaultMetrics } from 'prom-client';
import { Public } from '../auth/decorators/access.decorators.js';
import { NoRateLimit } from '../rate-limits/rate-limit.decorators.js';
import { metricsRegistry } from './metrics.middleware.js';

let defaultsCollected = false;

/** Prometheus scrape endpoint: process metrics and HTTP timings. */
@ApiExcludeController()
@Public()
@NoRateLimit('scrapes of the metrics collector')
@Controller('metrics')
export class MetricsController {
  constructor() {
    if (!defaultsCollected) collectDefaultMetrics({ register: metricsRegistry });
    defaultsCollected = true;
  }

  @Get()
  @Header('Content-Type', metricsRegistry.contentType)
  scrape(): Promise<string> {
    return metricsRegistry.metrics();
  }
}
