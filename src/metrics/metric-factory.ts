import { Counter, Gauge, Histogram, register, type CollectFunction } from 'prom-client';

/**
 * Metrics of the process's default registry (`/metrics` on the API, the worker's health port), made
 * once: a module evaluated again (a test that loads it twice) gets the metric already registered
 * instead of prom-client's "already registered" error. Label values are bounded sets (queue, status,
 * channel, provider, class…), never an id: one series per value.
 */
export function counter(name: string, help: string, labelNames: string[] = []): Counter<string> {
  return (register.getSingleMetric(name) as Counter<string> | undefined) ?? new Counter({ name, help, labelNames });
}

export function histogram(name: string, help: string, buckets: number[], labelNames: string[] = []): Histogram<string> {
  return (register.getSingleMetric(name) as Histogram<string> | undefined) ?? new Histogram({ name, help, buckets, labelNames });
}

/** A gauge read at scrape time: `collect` sets its values (prom-client awaits it before rendering). */
export function gauge(name: string, help: string, labelNames: string[], collect: CollectFunction<Gauge<string>>): Gauge<string> {
  return (register.getSingleMetric(name) as Gauge<string> | undefined) ?? new Gauge({ name, help, labelNames, collect });
}

/** The class of an HTTP answer or of its absence, as outcome counters label it. */
export type StatusClass = '1xx' | '2xx' | '3xx' | '4xx' | '5xx' | 'timeout' | 'network';

export function statusClass(statusCode: number | null | undefined, timedOut = false): StatusClass {
  if (statusCode === null || statusCode === undefined) return timedOut ? 'timeout' : 'network';
  const hundreds = Math.floor(statusCode / 100);
  return hundreds >= 1 && hundreds <= 5 ? (`${hundreds}xx` as StatusClass) : 'network';
}
