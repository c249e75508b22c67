// App CPU per request (µs) of the workflows-read requests, per credential type and for the list, with
// rate limits ON (figures out of reach), measured from /proc/<pid>/stat over alternating autocannon runs:
// steadier than req/s on a shared machine. With BEFORE_DIR=<dir holding dist/ and node_modules> a second
// app of that build runs on the same database and Redis and is measured interleaved (A/B of two builds).
// PROF=1 writes --cpu-prof profiles to /tmp/authprof; ONLY=<text> keeps the rows whose name has it (ONLY=list).
// Usage (after npm run build):
//   BEFORE_DIR=/tmp/limits-before N=2000 ROUNDS=4 C=50 node bench/auth-cpu.mjs      (docs/PERFORMANCE.md)
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { BenchContext, ROOT } from './lib/context.mjs';
import { loadConfig } from './lib/config.mjs';
import { obtainOAuthToken } from './lib/oauth-token.mjs';
import { ChildProcess, freePort } from './lib/processes.mjs';
import { JWT_AUDIENCE, mintJwt, RATE_LIMITS_ON_OUT_OF_REACH } from './scenarios/workflows-read.mjs';

const ticks = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10; // ms
};
/** Read and write system calls of a process so far (/proc/<pid>/io: syscr, syscw). */
const syscalls = (pid) => {
  const io = Object.fromEntries(readFileSync(`/proc/${pid}/io`, 'utf8').trim().split('\n').map((l) => l.split(': ')));
  return { r: Number(io.syscr), w: Number(io.syscw) };
};
const config = loadConfig();
if (process.env.PROF) config.appNodeArgs = ['--cpu-prof', '--cpu-prof-dir=/tmp/authprof'];
const ctx = await BenchContext.create(config, { baselines: new Map() }, 'auth-cpu');
// One signing key for both apps, so that the OAuth token minted on one is valid on the other.
const env = { ...RATE_LIMITS_ON_OUT_OF_REACH, JWT_AUDIENCE, TOKEN_SIGNING_KEY: randomBytes(32).toString('hex'), PUBLIC_BASE_URL: 'http://127.0.0.1:3000' };
try {
  const apps = [{ name: 'this build', ...(await ctx.startApp({ role: 'api', env })) }];
  if (process.env.BEFORE_DIR) {
    const port = await freePort();
    const child = new ChildProcess('before', join(process.env.BEFORE_DIR, 'dist/src/main.js'), {
      cwd: ROOT,
      nodeArgs: config.appNodeArgs,
      env: ctx.childEnv({ PORT: String(port), REDIS_URL: config.redisUrl, REDIS_KEY_PREFIX: ctx.redisKeyPrefix, BOOTSTRAP_API_KEY: ctx.apiKey, APP_ROLE: 'api', LOG_LEVEL: 'warn', ...env }),
    });
    ctx.children.push(child);
    await child.waitForHttp(`http://127.0.0.1:${port}/health/ready`, 90_000);
    apps.push({ name: 'before', url: `http://127.0.0.1:${port}`, process: child });
  }
  const ids = [];
  for (let i = 0; i < 50; i++) ids.push((await ctx.api(apps[0].url, 'POST', '/v1/workflows', { name: `w${i}`, channel: 'whatsapp', configuration: { nodes: [{ id: 'a', type: 'message', content: 'hi' }] } })).body.data.id);
  const tokens = { 'API key': ctx.apiKey, JWT: await mintJwt(ctx, apps[0].url), OAuth: await obtainOAuthToken(ctx, apps[0].url) };
  const rows = [
    ...Object.entries(tokens).map(([name, token]) => ({ name: `by id, ${name}`, token, paths: ids.map((id) => `/v1/workflows/${id}`) })),
    { name: 'list ?limit=20, API key', token: ctx.apiKey, paths: ['/v1/workflows?limit=20'] },
  ].filter((row) => !process.env.ONLY || row.name.includes(process.env.ONLY));
  const N = Number(process.env.N ?? 2000);
  const ROUNDS = Number(process.env.ROUNDS ?? 4);
  const run = (url, row) =>
    new Promise((resolve, reject) =>
      autocannon({ url, connections: Number(process.env.C ?? 50), amount: N, headers: { authorization: `Bearer ${row.token}` }, requests: row.paths.map((path) => ({ method: 'GET', path })) }, (e, r) => (e ? reject(e) : resolve(r))),
    );
  const results = new Map();
  const sys = new Map();
  for (let round = 0; round <= ROUNDS; round++) {
    for (const row of rows) {
      for (const app of round % 2 === 0 ? apps : [...apps].reverse()) {
        const pid = app.process.child.pid;
        const a0 = ticks(pid);
        const s0 = syscalls(pid);
        const r = await run(app.url, row);
        const us = ((ticks(pid) - a0) * 1000) / r.requests.total;
        const s1 = syscalls(pid);
        if (r.non2xx > 0) throw new Error(`${app.name} ${row.name}: ${r.non2xx} non-2xx answers`);
        if (round === 0) continue; // warm-up
        const key = `${row.name} | ${app.name}`;
        results.set(key, [...(results.get(key) ?? []), us]);
        sys.set(key, [...(sys.get(key) ?? []), `${((s1.r - s0.r) / r.requests.total).toFixed(2)}r/${((s1.w - s0.w) / r.requests.total).toFixed(2)}w`]);
      }
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  for (const [key, xs] of results) console.log(`${key.padEnd(40)} median ${median(xs).toFixed(0)} µs  (${xs.map((x) => x.toFixed(0)).join(', ')})  syscalls/request ${sys.get(key).join(' ')}`);
} finally {
  const problems = await ctx.dispose();
  for (const p of problems) console.error(`cleanup: ${p}`);
}
