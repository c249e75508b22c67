import { Controller, Get, Header, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../auth/decorators/access.decorators.js';
import { NoRateLimit } from '../rate-limits/rate-limit.decorators.js';
import { MetricsAccessGuard } from './metrics-access.guard.js';
import { metricsRegistry } from './metrics.middleware.js';

/**
 * Prometheus scrape endpoint: process metrics, HTTP timings, the service's counters and the
 * scrape-time gauges (queues, outbox lag, backlogs). Public to the API's credentials; METRICS_TOKEN
 * guards it (MetricsAccessGuard).
 */
@ApiExcludeController()
@Public()
@NoRateLimit('scrapes of the metrics collector')
@UseGuards(MetricsAccessGuard)
@Controller('metrics')
export class MetricsController {
  @Get()
  @Header('Content-Type', metricsRegistry.contentType)
  scrape(): Promise<string> {
    return metricsRegistry.metrics();
  }
}
