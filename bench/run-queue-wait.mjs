// How much of each app process's time its main thread spent running and how much waiting for a CPU (Linux
// /proc/<pid>/task/<pid>/schedstat: time on a CPU, time runnable on a run queue), every second, while a bench runs:
//   node bench/run-queue-wait.mjs [seconds=90] & BENCH_SCENARIOS=channels node bench/run.mjs
// It follows every `node dist/src/main.js` on the machine and names each by its APP_ROLE. Read it beside a
// --cpu-prof profile: V8 counts a sample as busy whenever the thread is not idle in the event loop, so time the thread
// spent runnable but waiting for a CPU (on a saturated machine, after waking a PostgreSQL backend with a query) shows
// up there as time in the function it was in, mostly `writev`; this tool tells the two apart.
import { readdirSync, readFileSync } from 'node:fs';

const seconds = Number(process.argv[2] ?? 90);
if (!Number.isInteger(seconds) || seconds < 1) throw new Error(`seconds must be a positive integer (got ${process.argv[2]})`);

function appProcesses() {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (!cmdline.some((a) => a.endsWith('dist/src/main.js'))) continue;
      const role = /(?:^|\0)APP_ROLE=([^\0]*)/.exec(readFileSync(`/proc/${entry}/environ`, 'utf8'))?.[1] ?? 'all';
      found.push({ pid: Number(entry), role });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

/** [ns on a CPU, ns runnable waiting for one] of a process's main thread; null once it is gone. */
function schedstat(pid) {
  try {
    const [onCpu, waiting] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
    return [onCpu, waiting];
  } catch {
    return null;
  }
}

const last = new Map();
for (let s = 0; s <= seconds; s++) {
  const lines = [];
  for (const { pid, role } of appProcesses()) {
    const now = schedstat(pid);
    const before = last.get(pid);
    if (now) last.set(pid, now);
    if (now && before) {
      const ms = (i) => Math.round((now[i] - before[i]) / 1e6);
      lines.push(`${role} (${pid}) running ${ms(0)} ms, waiting for a CPU ${ms(1)} ms`);
    }
  }
  if (lines.length > 0) console.log(`${new Date().toISOString().slice(11, 19)}  ${lines.join(' | ')}`);
  await new Promise((resolve) => setTimeout(resolve, 1000));
}
