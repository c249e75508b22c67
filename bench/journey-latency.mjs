// Latency of the journey and node-performance requests over a seeded history, one
// request at a time, interleaved, against a running API:
//   node bench/journey-latency.mjs <api url> <api key> <workflow id> [requests per case=40]
// Prints p50/p95/max per case and the first response of each (trimmed).
const [url, key, wf, count = '40'] = process.argv.slice(2);
if (!wf) throw new Error('usage: node bench/journey-latency.mjs <api url> <api key> <workflow id> [requests]');
const day = 86_400_000;
const since = (days) => new Date(Date.now() - days * day).toISOString();
const cases = [
  ['journey, journey_type=<id>, 30 days', `/v1/analytics/customers/journey?journey_type=${wf}`],
  ['journey, journey_type=all, 30 days', '/v1/analytics/customers/journey?journey_type=all'],
  ['journey, <id>, 30 days, America/New_York', `/v1/analytics/customers/journey?journey_type=${wf}&timezone=America/New_York`],
  ['journey, <id>, 365 days', `/v1/analytics/customers/journey?journey_type=${wf}&start_date=${since(365)}`],
  ['performance?include_nodes=true, 365 days', `/v1/analytics/workflows/${wf}/performance?include_nodes=true&start_date=${since(365)}`],
  ['performance (no nodes), 365 days', `/v1/analytics/workflows/${wf}/performance?start_date=${since(365)}`],
];
const times = cases.map(() => []);
const first = [];
for (let i = 0; i < Number(count); i++) {
  for (const [c, [, path]] of cases.entries()) {
    const t = performance.now();
    const res = await fetch(`${url}${path}`, { headers: { Authorization: `Bearer ${key}` } });
    const body = await res.text();
    times[c].push(performance.now() - t);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${body}`);
    if (i === 0) first.push(body);
  }
}
const q = (a, p) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(p * a.length))];
for (const [c, [name]] of cases.entries()) {
  console.log(`${name.padEnd(48)} p50 ${q(times[c], 0.5).toFixed(1)} ms  p95 ${q(times[c], 0.95).toFixed(1)} ms  max ${Math.max(...times[c]).toFixed(1)} ms`);
}
for (const [c, [name]] of cases.entries()) console.log(`\n${name}: ${first[c].slice(0, 1200)}`);
