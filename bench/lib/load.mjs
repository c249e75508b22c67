// Load measurements with autocannon: one target (warm-up, then the measured run), or several
// compared with each other, interleaved.
import autocannon from 'autocannon';

/** Runs autocannon; the result also carries `samples`, every response's latency in ms (for p95, which autocannon does not report). */
function runAutocannon(options) {
  return new Promise((resolve, reject) => {
    const samples = [];
    const instance = autocannon(options, (error, result) => (error ? reject(error) : resolve({ ...result, samples })));
    // Without a listener autocannon would not report errors per request; keep it quiet.
    instance.on('error', () => {});
    instance.on('response', (_client, _status, _bytes, responseTime) => samples.push(responseTime));
  });
}

/** The q-quantile (0..1) of latencies, nearest rank; null without samples. */
export function quantile(samples, q) {
  if (samples.length === 0) return null;
  const sorted = Float64Array.from(samples).sort();
  return round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)], 2);
}

/**
 * autocannon options for a target: { url, headers?, paths?, requests?, connections? } — with
 * `paths`, requests rotate over them (one counter shared by all connections); with `requests`,
 * they are autocannon's own request list (method, body, setupRequest); otherwise every request
 * goes to `url` itself. `connections` overrides the run's setting.
 */
function optionsFor(target, defaultConnections) {
  const { url, headers = {}, paths, connections = defaultConnections } = target;
  const origin = new URL(url);
  if (origin.hostname !== '127.0.0.1') throw new Error(`bench load must target 127.0.0.1, not ${origin.hostname}`);
  let next = 0;
  const requests =
    target.requests ?? (paths?.length ? [{ method: 'GET', setupRequest: (req) => ({ ...req, path: paths[next++ % paths.length] }) }] : undefined);
  return { url, headers, connections, pipelining: 1, timeout: 10, requests };
}

function summary(r, connections, window) {
  const completed = r['1xx'] + r['2xx'] + r['3xx'] + r['4xx'] + r['5xx'];
  return {
    requests_per_s: round(r.requests.average, 1),
    requests_total: completed,
    p50_ms: r.latency.p50,
    p90_ms: r.latency.p90,
    p95_ms: quantile(r.samples, 0.95),
    p99_ms: r.latency.p99,
    max_ms: r.latency.max,
    errors: r.errors,
    timeouts: r.timeouts,
    non_2xx: r.non2xx,
    status_codes: Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, s]) => [code, s.count])),
    duration_s: r.duration,
    connections,
    window,
  };
}

/**
 * One target: a warm-up run that is thrown away, then the measured run.
 * `hooks.beforeMeasured()` runs between warm-up and the measured run (e.g. to snapshot state).
 * The result carries the measured window as `window: { start, end }` (epoch ms).
 */
export async function measure(target, { durationS, warmupS, connections: defaultConnections }, hooks = {}) {
  const options = optionsFor(target, defaultConnections);
  if (warmupS > 0) await runAutocannon({ ...options, duration: warmupS });
  await hooks.drain?.();
  await hooks.beforeMeasured?.();
  const start = Date.now();
  const r = await runAutocannon({ ...options, duration: durationS });
  return summary(r, options.connections, { start, end: Date.now() });
}

/**
 * Several targets compared with each other (a baseline and the rows judged against it): each is
 * warmed up, then they take turns in `rounds` slices of durationS / rounds seconds (A B C A B C
 * ...), so that a machine whose speed drifts over tens of seconds (a shared VM's does) slows
 * every target alike instead of whichever happened to run in the slow stretch. Each target is
 * measured durationS seconds in all. Merged per target: requests/s = all requests / all measured
 * time; p50 = the slices' median p50; p99 and max = the worst slice's (conservative);
 * errors and status codes summed.
 */
export async function measureInterleaved(targets, { durationS, warmupS, connections: defaultConnections }, rounds, { drain } = {}) {
  const options = targets.map((t) => optionsFor(t, defaultConnections));
  for (const o of options) {
    if (warmupS > 0) await runAutocannon({ ...o, duration: warmupS });
    await drain?.();
  }
  const sliceS = Math.max(1, Math.round(durationS / rounds));
  const slices = targets.map(() => []);
  for (let r = 0; r < rounds; r += 1) {
    for (const [i, o] of options.entries()) {
      // autocannon stops at the slice's end without waiting for the answers still owed: a slow
      // target's queued requests would run on in the server during the next slice and count
      // against it. The next slice starts only once the server has finished them.
      await drain?.();
      const start = Date.now();
      const result = await runAutocannon({ ...o, duration: sliceS });
      slices[i].push(summary(result, o.connections, { start, end: Date.now() }));
    }
  }
  return slices.map(merge);
}

function merge(slices) {
  const sum = (key) => slices.reduce((n, s) => n + s[key], 0);
  const durationS = sum('duration_s');
  const p50s = slices.map((s) => s.p50_ms).sort((a, b) => a - b);
  const codes = {};
  for (const s of slices) for (const [code, n] of Object.entries(s.status_codes)) codes[code] = (codes[code] ?? 0) + n;
  return {
    requests_per_s: round(sum('requests_total') / durationS, 1),
    requests_total: sum('requests_total'),
    p50_ms: p50s[Math.floor((p50s.length - 1) / 2)],
    p90_ms: Math.max(...slices.map((s) => s.p90_ms)),
    p95_ms: Math.max(...slices.map((s) => s.p95_ms ?? 0)),
    p99_ms: Math.max(...slices.map((s) => s.p99_ms)),
    max_ms: Math.max(...slices.map((s) => s.max_ms)),
    errors: sum('errors'),
    timeouts: sum('timeouts'),
    non_2xx: sum('non_2xx'),
    status_codes: codes,
    duration_s: round(durationS, 2),
    connections: slices[0].connections,
    slices: slices.map((s) => ({ requests_per_s: s.requests_per_s, p50_ms: s.p50_ms, p95_ms: s.p95_ms, p99_ms: s.p99_ms, window: s.window })),
    window: { start: slices[0].window.start, end: slices.at(-1).window.end },
  };
}

export function round(value, digits = 2) {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
