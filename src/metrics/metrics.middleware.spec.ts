import { EventEmitter } from 'node:events';
import type { NextFunction, Request, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { metricsMiddleware, metricsRegistry, requestDurationTotals } from './metrics.middleware.js';

/** The histogram's `_sum` and `_count` over every label set, as prom-client reports them. */
async function histogramTotals(): Promise<{ seconds: number; count: number }> {
  const { values } = await metricsRegistry.getSingleMetric('http_request_duration_seconds')!.get();
  let seconds = 0;
  let count = 0;
  for (const v of values) {
    const name = (v as { metricName?: string }).metricName ?? '';
    if (name.endsWith('_sum')) seconds += v.value;
    else if (name.endsWith('_count')) count += v.value;
  }
  return { seconds, count };
}

describe('metrics middleware', () => {
  it('keeps the sum and count of every timed request beside the histogram, equal to its _sum and _count', async () => {
    const before = requestDurationTotals();
    const routes = [
      { method: 'GET', baseUrl: '/v1', path: '/workflows', status: 200 },
      { method: 'POST', baseUrl: '/v1', path: '/messages', status: 202 },
      { method: 'GET', baseUrl: '', path: undefined, status: 404 },
    ];
    for (const r of routes) {
      const res = Object.assign(new EventEmitter(), { statusCode: r.status }) as unknown as Response;
      const req = { method: r.method, baseUrl: r.baseUrl, route: r.path ? { path: r.path } : undefined } as unknown as Request;
      metricsMiddleware(req, res, (() => undefined) as NextFunction);
      await new Promise((resolve) => setTimeout(resolve, 2));
      (res as unknown as EventEmitter).emit('finish');
    }
    const after = requestDurationTotals();
    expect(after.count - before.count).toBe(3);
    expect(after.seconds - before.seconds).toBeGreaterThan(0.003);
    const histogram = await histogramTotals();
    expect(after.count).toBe(histogram.count);
    expect(after.seconds).toBeCloseTo(histogram.seconds, 12);
  });
});
