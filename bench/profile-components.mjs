// Folds a V8 .cpuprofile (node --cpu-prof; bench/auth-cpu.mjs with PROF=1) into self time per component of a
// request (docs/PERFORMANCE.md), as shares of the request work and µs at US µs/request (default 800):
//   US=840 node bench/profile-components.mjs /tmp/authprof/CPU.*.cpuprofile     (SHOWOTHER=1: the unclassified)
import { readFileSync } from 'node:fs';
const p = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map();
for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
const mod = (cf) => { const u = cf.url || ''; if (!u) return `(${cf.functionName || 'native'})`; let m = u.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/g); if (m) return m[m.length - 1].replace('node_modules/', ''); if (u.startsWith('node:')) return u; m = u.match(/dist\/(.*)$/); return m ? 'app:' + m[1] : u; };
const rules = [
  ['idle', /^\(\(idle\)\)$/], ['kernel: writev (pg + HTTP answer)', /^\(writev\)$/], ['garbage collector', /garbage collector/],
  ['start-up (module loading, OpenAPI, TypeORM metadata)', /modules|esm|cjs|swagger|openapi|typeorm|es-toolkit|class-validator|class-transformer|compile|evaluate|lexer|\(parse\)|package_json|fs|openFileHandle|internalModule|libphonenumber|unicode|brotli|inflate|semver|validator/],
  ['Passport (passport, @nestjs/passport, bearer strategy, auth guard, credential resolvers)', /passport|auth\/|jsonwebtoken|jose|crypto\/hash/],
  ['rate limits (guard, RequestLimits, limiter, ioredis, redis-parser)', /rate-limit|redis|ioredis|cluster-key|denque|throttler/],
  ['Express router + path-to-regexp + parseurl', /^router$|path-to-regexp|parseurl/],
  ['Express app/response (res.json, send, status, headers)', /^express$|mime|content-type|on-finished|etag|fresh|type-is|vary|proxy-addr|forwarded|ipaddr|qs|querystring/],
  ['body parsers (GET: checks only) + debug', /body-parser|debug|raw-body|iconv/],
  ['Nest core (guards, pipes, params, reply) + reflect-metadata + rxjs', /@nestjs\/core|@nestjs\/common|platform-express|reflect-metadata|rxjs|validation.pipe|common\/errors|reflection/],
  ['our middlewares (request id, request log, metrics, input guard) + pino + prom-client', /common\/http|metrics|pino|prom-client|sonic-boom|crypto\/random|storable/],
  ['pg (query, protocol, row parsing, dates) + SQL statement', /^pg$|pg-|postgres-|sql-statement|database/],
  ['workflows controller/service/repository/DTO', /workflows/],
  ['Node HTTP server, sockets, streams, events, timers, buffers', /^node:|writeUtf8String|utf8|latin1|\(hrtime\)|getLibuvNow|\(writeBuffer\)|\(get length\)|\(close\)|RegExp|base64/],
  ['microtasks (promise jobs) / program', /runMicrotasks|\(program\)|\(root\)/],
];
const cats = new Map(); let total = 0;
for (const [id, t] of self) {
  const m = mod(byId.get(id).callFrame);
  const c = (rules.find(([, r]) => r.test(m)) ?? ['other: ' + m])[0];
  cats.set(c, (cats.get(c) ?? 0) + t);
}
const idle = cats.get('idle') ?? 0, start = cats.get('start-up (module loading, OpenAPI, TypeORM metadata)') ?? 0;
for (const [, t] of cats) total += t;
const work = total - idle - start;
const perReq = Number(process.env.US ?? 800);
const others = [...cats].filter(([c]) => c.startsWith('other: ')).reduce((s, [, t]) => s + t, 0);
console.log(`request work ${(work / 1000).toFixed(0)} ms (idle ${(idle / 1000).toFixed(0)}, start-up ${(start / 1000).toFixed(0)})`);
for (const [c, t] of [...cats].filter(([c]) => c !== 'idle' && !c.startsWith('start-up') && !c.startsWith('other: ')).sort((a, b) => b[1] - a[1])) console.log(`| ${c} | ${(100 * t / work).toFixed(1)}% | ${(perReq * t / work).toFixed(0)} |`);
console.log(`| other | ${(100 * others / work).toFixed(1)}% | ${(perReq * others / work).toFixed(0)} |`);
if (process.env.SHOWOTHER) for (const [c, t] of [...cats].filter(([c]) => c.startsWith('other: ')).sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(c, (t / 1000).toFixed(0));
