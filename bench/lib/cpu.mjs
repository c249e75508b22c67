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

/** CPU milliseconds (user + system) a process has used, from /proc/<pid>/stat (Linux); null elsewhere or once it is gone. */
export function processCpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ; // utime, stime
  } catch {
    return null;
  }
}

/**
 * CPU of the processes serving one scenario, unlike machineCpu not counting anything else running on
 * a shared machine: the given pids plus the PostgreSQL backends connected to the database of `db`
 * (a pg client). Returns { total, byName } to diff with cpuOfProcessesBetween.
 */
export async function processesCpu(db, pids) {
  const { rows } = await db.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`);
  const byName = {};
  for (const [name, pid] of Object.entries(pids)) byName[name] = processCpuMs(pid) ?? 0;
  const backends = new Map(rows.map((r) => [r.pid, processCpuMs(r.pid) ?? 0]));
  return { byName, backends };
}

/** CPU ms used between two processesCpu readings, per name and `postgres` (backends; new ones counted whole). */
export function processesCpuBetween(start, end) {
  const out = {};
  for (const name of Object.keys(end.byName)) out[name] = end.byName[name] - (start.byName[name] ?? 0);
  let postgres = 0;
  for (const [pid, ms] of end.backends) postgres += ms - (start.backends.get(pid) ?? 0);
  out.postgres = postgres;
  out.total = Object.values(out).reduce((a, b) => a + b, 0);
  return out;
}
