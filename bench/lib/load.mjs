// One load measurement with autocannon: a warm-up run that is thrown away, then the measured run.
import autocannon from 'autocannon';

function runAutocannon(options) {
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
    // Without a listener autocannon would not report errors per request; keep it quiet.
    instance.on('error', () => {});
  });
}

/**
 * `target`: { url, headers?, paths?, requests?, connections? } — with `paths`, requests rotate
 * over them (one counter shared by all connections); with `requests`, they are autocannon's own
 * request list (method, body, setupRequest); otherwise every request goes to `url` itself.
 * `connections` overrides the run's setting.
 * `hooks.beforeMeasured()` runs between warm-up and the measured run (e.g. to snapshot state).
 * The result carries the measured window as `window: { start, end }` (epoch ms).
 */
export async function measure(target, { durationS, warmupS, connections: defaultConnections }, hooks = {}) {
  const { url, headers = {}, paths, connections = defaultConnections } = target;
  const origin = new URL(url);
  if (origin.hostname !== '127.0.0.1') throw new Error(`bench load must target 127.0.0.1, not ${origin.hostname}`);
  let next = 0;
  const requests =
    target.requests ?? (paths?.length ? [{ method: 'GET', setupRequest: (req) => ({ ...req, path: paths[next++ % paths.length] }) }] : undefined);
  const options = { url, headers, connections, pipelining: 1, timeout: 10, requests };

  if (warmupS > 0) await runAutocannon({ ...options, duration: warmupS });
  await hooks.beforeMeasured?.();
  const start = Date.now();
  const r = await runAutocannon({ ...options, duration: durationS });
  const end = Date.now();
  const completed = r['1xx'] + r['2xx'] + r['3xx'] + r['4xx'] + r['5xx'];
  return {
    requests_per_s: round(r.requests.average, 1),
    requests_total: completed,
    p50_ms: r.latency.p50,
    p90_ms: r.latency.p90,
    p99_ms: r.latency.p99,
    max_ms: r.latency.max,
    errors: r.errors,
    timeouts: r.timeouts,
    non_2xx: r.non2xx,
    status_codes: Object.fromEntries(Object.entries(r.statusCodeStats).map(([code, s]) => [code, s.count])),
    duration_s: r.duration,
    connections,
    window: { start, end },
  };
}

export function round(value, digits = 2) {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
