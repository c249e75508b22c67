import os from 'node:os';
import { requestDurationTotals } from '../metrics/metrics.middleware.js';

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
 * the process's Prometheus histogram (http_request_duration_seconds), from the sum and count the
 * metrics middleware keeps beside it.
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

  /** Mean duration of the requests timed so far, in ms (the histogram's sum / count, kept beside it); null before any. */
  apiResponseTimeMs(): number | null {
    const { seconds, count } = requestDurationTotals();
    return count > 0 ? (seconds / count) * 1000 : null;
  }
}

/**
 * A reading that requests of about the same moment share: a caller gets the result of the check
 * still in flight, or of one that finished at most `maxAgeMs` ago; otherwise a new check starts.
 * A check that fails is not kept. Under load this makes one check per `maxAgeMs` instead of one per
 * request; every result is still a real check, at most `maxAgeMs` old.
 */
export class RecentReading<T> {
  private last?: { value: Promise<T>; settledAt?: number };

  constructor(
    private readonly check: () => Promise<T>,
    private readonly maxAgeMs: number,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  get(): Promise<T> {
    const last = this.last;
    if (last && (last.settledAt === undefined || this.clock() - last.settledAt <= this.maxAgeMs)) return last.value;
    const entry: { value: Promise<T>; settledAt?: number } = { value: this.check() };
    this.last = entry;
    entry.value.then(
      () => (entry.settledAt = this.clock()),
      () => {
        if (this.last === entry) this.last = undefined;
      },
    );
    return entry.value;
  }
}
