// Self time of a V8 .cpuprofile (node --cpu-prof; BENCH_APP_NODE_ARGS of the bench) by function and by package,
// as shares of the non-idle samples:   node bench/profile-self-time.mjs /tmp/prof/CPU.*.cpuprofile [top=15]
// FROM_S / TO_S keep only the samples in that window of seconds from the profile's start (leave out start-up);
// the busy time per second is printed to choose it. Busy is every sample not idle in the event loop, including time the
// thread waited for a CPU (on a saturated machine mostly inside `writev`, after waking a PostgreSQL backend);
// run-queue-wait.mjs beside the bench tells the two apart.
import { readFileSync } from 'node:fs';
const [file, top = 15] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map();
const from = Number(process.env.FROM_S ?? 0) * 1e6, to = Number(process.env.TO_S ?? Infinity) * 1e6;
const idleId = new Set(p.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
const perSecond = [];
for (let i = 0, t = 0; i < p.samples.length; i++) {
  t += p.timeDeltas[i] ?? 0;
  if (!idleId.has(p.samples[i])) perSecond[Math.floor(t / 1e6)] = (perSecond[Math.floor(t / 1e6)] ?? 0) + (p.timeDeltas[i] ?? 0);
  if (t >= from && t < to) self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
}
console.log(`busy ms per second from the start: ${Array.from(perSecond, (v) => Math.round((v ?? 0) / 1e3)).join(' ')}`);
const pkg = (cf) => {
  const u = cf.url || '';
  if (!u) return `(${cf.functionName || 'native'})`;
  const m = u.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/g);
  if (m) return m[m.length - 1].replace('node_modules/', '');
  if (u.startsWith('node:')) return u.replace(/^node:internal\/(\w+).*/, 'node:$1');
  const d = u.match(/dist\/src\/([^/]+)/);
  return d ? `app: ${d[1]}/` : u;
};
const fns = new Map(), pkgs = new Map();
let busy = 0, idle = 0;
for (const [id, us] of self) {
  const cf = byId.get(id).callFrame;
  if (cf.functionName === '(idle)') { idle += us; continue; }
  busy += us;
  const f = `${cf.functionName || '(anonymous)'} ${pkg(cf)}:${cf.lineNumber + 1}`;
  fns.set(f, (fns.get(f) ?? 0) + us);
  pkgs.set(pkg(cf), (pkgs.get(pkg(cf)) ?? 0) + us);
}
const show = (title, m) => {
  console.log(title);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, Number(top))) console.log(`  ${((100 * v) / busy).toFixed(1).padStart(5)}%  ${k}`);
};
console.log(`${file}: busy ${(busy / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s`);
show('self time by package (share of busy):', pkgs);
show('self time by function:', fns);
