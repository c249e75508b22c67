import os from 'node:os';
import { metricsRegistry } from '../metrics/metrics.middleware.js';

interface CpuSample {
  idle: number;
  total: number;
}

function sampleCpu(): CpuSample {
  let idle = 0;
  let total = 0;
  for (const cpu of os.cpus()) {
    const t = cpu.times;
    idle += t.idle;
    total += t.user + t.nice + t.sys + t.irq + t.idle;
  }
  return { idle, total };
}

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

/**
 * Real host and process readings for the realtime endpoint: CPU busy fraction of all cores since
 * the previous reading (since boot on the first), memory in use, and the mean request duration of
 * the process's Prometheus histogram (http_request_duration_seconds).
 */
export class SystemReadings {
  private last = sampleCpu();

  cpuUsage(): number {
    const now = sampleCpu();
    const total = now.total - this.last.total;
    const idle = now.idle - this.last.idle;
    const since = total > 0 ? { idle, total } : now;
    if (total > 0) this.last = now;
    return since.total > 0 ? clamp01(1 - since.idle / since.total) : 0;
  }

  memoryUsage(): number {
    return clamp01(1 - os.freemem() / os.totalmem());
  }

  async apiResponseTimeMs(): Promise<number | null> {
    const metric = metricsRegistry.getSingleMetric('http_request_duration_seconds');
    if (!metric) return null;
    const { values } = await metric.get();
    let sum = 0;
    let count = 0;
    for (const v of values) {
      const name = (v as { metricName?: string }).metricName ?? '';
      if (name.endsWith('_sum')) sum += v.value;
      else if (name.endsWith('_count')) count += v.value;
    }
    return count > 0 ? (sum / count) * 1000 : null;
  }
}
