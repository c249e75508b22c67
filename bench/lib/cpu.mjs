// The whole machine's CPU time, from /proc/stat (Linux): busy = every state but idle and iowait.
// Throughput on a shared 2-core machine moves with whatever else runs; CPU time per unit of work
// moves much less, so it is the figure to compare when judging a change.
import { readFileSync } from 'node:fs';

const USER_HZ = 100; // /proc/stat counts in USER_HZ ticks, 100 on every Linux architecture we run on

/** Busy and total CPU milliseconds since boot, summed over all CPUs; null where /proc/stat is missing. */
export function machineCpu() {
  let line;
  try {
    line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
  } catch {
    return null;
  }
  const [user, nice, system, idle, iowait = 0, irq = 0, softirq = 0, steal = 0] = line.trim().split(/\s+/).slice(1).map(Number);
  const busy = user + nice + system + irq + softirq + steal;
  return { busyMs: (busy * 1000) / USER_HZ, totalMs: ((busy + idle + iowait) * 1000) / USER_HZ };
}

/** Busy CPU milliseconds and the share of the machine used between two readings. */
export function cpuBetween(start, end) {
  if (!start || !end) return null;
  const busyMs = end.busyMs - start.busyMs;
  const totalMs = end.totalMs - start.totalMs;
  return { busyMs, utilisation: totalMs > 0 ? busyMs / totalMs : null };
}
