// A closed loop of HTTP requests: `connections` clients, each sending its next request when its last
// answer came back. Unlike autocannon (lib/load.mjs) it knows which answer belongs to which request
// (`answered(status)` of each), and at the deadline it stops sending but lets the requests in flight
// finish instead of hanging up on them: a server that does its work after the answer (the channel
// webhook applies a payload once its 200 is written) does not see a client vanish mid-request.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { quantile, round } from './load.mjs';

const TIMEOUT_MS = 10_000;

/**
 * Warm-up (`warmupS`, not counted), `hooks.drain()` and `hooks.beforeMeasured()`, then the measured
 * `durationS`; `hooks.atEnd()` is called the moment the measured window ends (before the requests
 * still in flight are answered). `request(i)` gives the i-th request's `{ method, path, body,
 * headers?, answered?, until? }` (headers over `headers`; `answered(status)` once, null for an error;
 * `until(status)`, when given, returns a promise the client also waits for before its next request,
 * e.g. the work the request started, at most `untilTimeoutMs` and never past the window's end).
 * Figures count the requests answered within the window; `window` is { start, end } (epoch ms).
 */
export async function measureClosedLoop({ url, headers = {}, connections, durationS, warmupS = 0, request, untilTimeoutMs = 30_000 }, hooks = {}) {
  const origin = new URL(url);
  if (origin.hostname !== '127.0.0.1') throw new Error(`bench load must target 127.0.0.1, not ${origin.hostname}`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  let sent = 0;

  const send = ({ method, path, body, headers: own }) =>
    new Promise((resolve) => {
      let settled = false;
      const settle = (status) => {
        if (settled) return;
        settled = true;
        resolve(status);
      };
      const req = http.request(
        { host: origin.hostname, port: origin.port, method, path, agent, headers: { ...headers, ...own, ...(body ? { 'content-length': Buffer.byteLength(body) } : {}) } },
        (res) => {
          res.resume();
          res.on('end', () => settle(res.statusCode));
          res.on('error', () => settle(null));
        },
      );
      req.setTimeout(TIMEOUT_MS, () => req.destroy(new Error('timeout')));
      req.on('error', () => settle(null));
      req.end(body);
    });

  async function phase(seconds, atEnd) {
    const latencies = [];
    let errors = 0;
    let non2xx = 0;
    let stopped = false;
    let endEpoch = null;
    let endPerf = null;
    let windowEnded;
    const ended = new Promise((resolve) => (windowEnded = resolve));
    const start = performance.now();
    const startEpoch = Date.now();
    const timer = setTimeout(() => {
      stopped = true;
      endPerf = performance.now();
      endEpoch = Date.now();
      atEnd?.();
      windowEnded();
    }, seconds * 1000);
    const client = async () => {
      while (!stopped) {
        const r = request(sent++);
        const t0 = performance.now();
        const status = await send(r);
        const t1 = performance.now();
        r.answered?.(status);
        if (r.until && !stopped) {
          let timeout;
          await Promise.race([r.until(status), ended, new Promise((resolve) => (timeout = setTimeout(resolve, untilTimeoutMs)))]);
          clearTimeout(timeout);
        }
        if (endPerf !== null && t1 > endPerf) continue; // answered after the window: not counted
        if (status === null) errors += 1;
        else if (status < 200 || status > 299) non2xx += 1;
        else latencies.push(t1 - t0);
        // A refused connection would otherwise spin.
        if (status === null) await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    await Promise.all(Array.from({ length: connections }, client));
    clearTimeout(timer);
    const elapsedS = ((endPerf ?? performance.now()) - start) / 1000;
    return {
      requests_per_s: round(latencies.length / elapsedS, 1),
      requests_total: latencies.length + errors + non2xx,
      p50_ms: quantile(latencies, 0.5),
      p90_ms: quantile(latencies, 0.9),
      p95_ms: quantile(latencies, 0.95),
      p99_ms: quantile(latencies, 0.99),
      max_ms: latencies.length > 0 ? round(latencies.reduce((a, b) => Math.max(a, b)), 2) : null,
      errors,
      non_2xx: non2xx,
      duration_s: round(elapsedS, 2),
      connections,
      window: { start: startEpoch, end: endEpoch ?? Date.now() },
    };
  }

  try {
    if (warmupS > 0) await phase(warmupS);
    await hooks.drain?.();
    await hooks.beforeMeasured?.();
    return await phase(durationS, hooks.atEnd);
  } finally {
    agent.destroy();
  }
}
