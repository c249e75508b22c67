// The cost of counting, as CPU time per request (throughput on a shared machine is too noisy): two app
// processes of the built app on one database, rate limits on (figures out of reach) and off, and a private
// redis-server on a free loopback port so that its CPU is this run's alone. Alternating autocannon runs of
// N (3000) GET /v1/workflows/{id}; the first round is a warm-up. PROF=1 writes --cpu-prof profiles to
// /tmp/rlprof. Usage (after npm run build): node bench/rate-limits-cpu.mjs   (docs/PERFORMANCE.md, rate limits)
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { BenchContext } from './lib/context.mjs';
import { loadConfig } from './lib/config.mjs';
import { freePort } from './lib/processes.mjs';
import { RATE_LIMITS_ON_OUT_OF_REACH } from './scenarios/workflows-read.mjs';

const ticks = (pid) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) * 10; }; // ms
const config = loadConfig();
const redisPort = await freePort();
const redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 500));
config.redisUrl = `redis://127.0.0.1:${redisPort}`;
if (process.env.PROF) config.appNodeArgs = ['--cpu-prof', '--cpu-prof-dir=/tmp/rlprof'];
const ctx = await BenchContext.create(config, { baselines: new Map() }, 'cpu-ab');
try {
  const on = await ctx.startApp({ role: 'api', env: { ...RATE_LIMITS_ON_OUT_OF_REACH } });
  const off = await ctx.startApp({ role: 'api', env: { RATE_LIMITS_ENABLED: 'false' } });
  const ids = [];
  for (let i = 0; i < 50; i++) ids.push((await ctx.api(on.url, 'POST', '/v1/workflows', { name: `w${i}`, channel: 'whatsapp', configuration: { nodes: [{ id: 'a', type: 'message', content: 'hi' }] } })).body.data.id);
  const headers = { authorization: `Bearer ${ctx.apiKey}` };
  const N = Number(process.env.N ?? 3000);
  const run = (url) => new Promise((resolve, reject) => autocannon({ url, connections: 10, amount: N, headers, requests: ids.map((id) => ({ method: 'GET', path: `/v1/workflows/${id}` })) }, (e, r) => (e ? reject(e) : resolve(r))));
  const rows = { on: [], off: [] };
  for (let round = 0; round < 4; round++) {
    for (const [name, app] of [['on', on], ['off', off]]) {
      const a0 = ticks(app.process.child.pid), r0 = ticks(redis.pid);
      const r = await run(app.url);
      const a1 = ticks(app.process.child.pid), r1 = ticks(redis.pid);
      if (round > 0) rows[name].push({ app: ((a1 - a0) * 1000) / r.requests.total, redis: ((r1 - r0) * 1000) / r.requests.total, non2xx: r.non2xx, rps: r.requests.average });
    }
  }
  for (const [name, list] of Object.entries(rows)) {
    const avg = (k) => (list.reduce((s, x) => s + x[k], 0) / list.length).toFixed(0);
    console.log(`pid ${name === 'on' ? on.process.child.pid : off.process.child.pid} limits ${name}: app CPU ${avg('app')} µs/request, redis-server CPU ${avg('redis')} µs/request, ${avg('rps')} req/s, non-2xx ${list.map((x) => x.non2xx).join('/')}; rounds app µs: ${list.map((x) => x.app.toFixed(0)).join(' ')}`);
  }
} finally {
  await ctx.dispose();
  redis.kill('SIGTERM');
}
