import type { NextFunction, Request, Response } from 'express';
import { Histogram, register } from 'prom-client';

const httpDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request duration by method, route template and status',
  labelNames: ['method', 'route', 'status'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
});

/**
 * The histogram's sum and count over all label sets, added up beside it from the same observed
 * values: reading them is free, where the histogram's get() builds every bucket of every label set
 * (the realtime endpoint reads the mean on every request).
 */
const observed = { seconds: 0, count: 0 };

/** Every request timed so far: seconds in all and how many (the histogram's `_sum` and `_count` summed over label sets). */
export function requestDurationTotals(): { seconds: number; count: number } {
  return { seconds: observed.seconds, count: observed.count };
}

/** Times every request; the label is the route template (never the raw path, to bound cardinality). */
export function metricsMiddleware(req: Request, res: Response, next: NextFunction): void {
  const end = httpDuration.startTimer();
  res.on('finish', () => {
    const route = req.route?.path ? `${req.baseUrl}${req.route.path as string}` : 'unmatched';
    observed.seconds += end({ method: req.method, route, status: String(res.statusCode) });
    observed.count += 1;
  });
  next();
}

export { register as metricsRegistry };
