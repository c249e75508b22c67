import { describe, expect, it } from 'vitest';
import { RecentReading } from './system-readings.js';

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe('RecentReading (realtime system health shared for about a second)', () => {
  it('shares a check in flight and one finished at most maxAgeMs ago; then checks again', async () => {
    let now = 0;
    const checks: ReturnType<typeof deferred<string>>[] = [];
    const reading = new RecentReading(() => {
      const d = deferred<string>();
      checks.push(d);
      return d.promise;
    }, 1000, () => now);

    const a = reading.get();
    const b = reading.get();
    expect(checks).toHaveLength(1); // in flight: shared
    now = 5000; // however long the check takes
    checks[0].resolve('healthy');
    await expect(a).resolves.toBe('healthy');
    await expect(b).resolves.toBe('healthy');

    now = 6000; // 1000 ms after it finished: still reused
    await expect(reading.get()).resolves.toBe('healthy');
    expect(checks).toHaveLength(1);

    now = 6001; // older than that: a new check
    const c = reading.get();
    expect(checks).toHaveLength(2);
    checks[1].resolve('degraded');
    await expect(c).resolves.toBe('degraded');
  });

  it('does not keep a check that failed', async () => {
    let calls = 0;
    const reading = new RecentReading(async () => {
      calls += 1;
      if (calls === 1) throw new Error('down');
      return 'healthy';
    }, 1000, () => 0);
    await expect(reading.get()).rejects.toThrow('down');
    await expect(reading.get()).resolves.toBe('healthy');
    expect(calls).toBe(2);
  });
});
