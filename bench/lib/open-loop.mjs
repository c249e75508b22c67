// An open-loop load: requests sent at a fixed rate whatever the answers do, each timed from the
// moment it was due, not from when it went out (so a stalled server is not hidden by a client that
// waited for it: no coordinated omission). This is latency "at a given load", where a closed loop
// (N clients, each sending when its last answer came) measures latency at whatever throughput
// the server saturates at — there, by Little's law, mean latency = N / throughput.
// (autocannon's rate cap sends each second's budget in a burst, so it cannot stand in for this.)
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { round } from './load.mjs';

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * Sends `rate` requests per second for `durationS` (after `warmupS` at the same rate, not
 * counted). `request(i, dueAt)` gives the i-th request's `{ method, path, body }`, optionally with
 * `headers` of its own (over `headers`) and `answered(status)`, called once with its status (null
 * for an error); `dueAt` is when it was due (performance.now()). At most `maxSockets`
 * connections; requests beyond wait in the agent's queue and their wait counts in their latency.
 */
export async function measureOpenLoop({ url, headers = {}, rate, durationS, warmupS = 0, maxSockets = 256, request }) {
  const origin = new URL(url);
  if (origin.hostname !== '127.0.0.1') throw new Error(`bench load must target 127.0.0.1, not ${origin.hostname}`);
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  let sent = 0;

  const send = (dueAt, record, lags) => {
    lags.push(performance.now() - dueAt);
    const { method, path, body, headers: own, answered } = request(sent++, dueAt);
    let settled = false;
    // Each request is recorded once, by whichever comes first: its answer or an error.
    const settle = (status) => {
      if (settled) return;
      settled = true;
      record(status, performance.now() - dueAt);
      answered?.(status);
    };
    const req = http.request(
      { host: origin.hostname, port: origin.port, method, path, agent, headers: { ...headers, ...own, ...(body ? { 'content-length': Buffer.byteLength(body) } : {}) } },
      (res) => {
        res.resume();
        res.on('end', () => settle(res.statusCode));
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
    req.on('error', () => settle(null));
    req.end(body);
  };

  async function phase(seconds) {
    const latencies = [];
    const lags = [];
    let errors = 0;
    let non2xx = 0;
    let pending = 0;
    let scheduledAll = false;
    let done;
    const finished = new Promise((resolve) => (done = resolve));
    const record = (status, ms) => {
      if (status === null) errors += 1;
      else if (status < 200 || status > 299) non2xx += 1;
      else latencies.push(ms);
      pending -= 1;
      if (pending === 0 && scheduledAll) done();
    };
    const intervalMs = 1000 / rate;
    const total = Math.round(rate * seconds);
    const start = performance.now();
    const startEpoch = Date.now();
    for (let i = 0; i < total; ) {
      const now = performance.now();
      // Everything due by now goes out now, timed from when it was due.
      for (; i < total && start + i * intervalMs <= now; i += 1) {
        pending += 1;
        send(start + i * intervalMs, record, lags);
      }
      await new Promise((r) => setTimeout(r, 1));
    }
    scheduledAll = true;
    if (pending > 0) await finished;
    const elapsedS = (performance.now() - start) / 1000;
    latencies.sort((a, b) => a - b);
    lags.sort((a, b) => a - b);
    return {
      requests_per_s: round(latencies.length / elapsedS, 1),
      offered_per_s: rate,
      requests_total: latencies.length + errors + non2xx,
      p50_ms: round(percentile(latencies, 50), 1),
      p90_ms: round(percentile(latencies, 90), 1),
      p99_ms: round(percentile(latencies, 99), 1),
      max_ms: round(latencies.at(-1) ?? 0, 1),
      // How late the generator itself sent (its own event loop): counted in the latencies above.
      send_lag_p99_ms: round(percentile(lags, 99) ?? 0, 1),
      errors,
      non_2xx: non2xx,
      duration_s: round(elapsedS, 2),
      window: { start: startEpoch, end: Date.now() },
    };
  }

  try {
    if (warmupS > 0) await phase(warmupS);
    return await phase(durationS);
  } finally {
    agent.destroy();
  }
}
