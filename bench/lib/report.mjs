// Turns scenario rows into the printed table and the JSON file.
import { mkdirSync, writeFileSync } from 'node:fs';
import { round } from './load.mjs';

/** Adds ratio and verdict to a scenario row. */
export function judge(scenario, row) {
  const m = row.measurement;
  const failed = m.errors + m.non_2xx;
  const ratio = row.baseline ? round(m.requests_per_s / row.baseline.requests_per_s, 2) : null;
  const target = row.target_ratio ?? null;
  const reasons = [];
  if (target !== null && ratio !== null && ratio < target) reasons.push(`ratio ${ratio} < ${target}`);
  if (failed > 0) reasons.push(`${failed} failed or non-2xx requests`);
  return {
    scenario: scenario.name,
    name: row.name,
    ...m,
    baseline: row.baseline?.name ?? null,
    baseline_requests_per_s: row.baseline?.requests_per_s ?? null,
    ratio,
    target_ratio: target,
    pass: reasons.length === 0,
    reasons,
  };
}

function fmt(n, digits = 0) {
  return n === null || n === undefined ? '-' : Number(n).toFixed(digits);
}

export function formatTable(baselines, results) {
  const header = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'err/non-2xx', 'ratio', 'target', 'result'];
  const rows = [
    ...baselines.map((b) => [`baseline: ${b.name}`, fmt(b.requests_per_s, 1), fmt(b.p50_ms), fmt(b.p99_ms), `${b.errors}/${b.non_2xx}`, '1.00', '-', 'ref']),
    ...results.map((r) => [
      `${r.scenario}: ${r.name}`,
      fmt(r.requests_per_s, 1),
      fmt(r.p50_ms),
      fmt(r.p99_ms),
      `${r.errors}/${r.non_2xx}`,
      fmt(r.ratio, 2),
      r.target_ratio === null ? '-' : `>= ${fmt(r.target_ratio, 2)}`,
      r.pass ? 'PASS' : 'FAIL',
    ]),
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function writeResults(dir, report) {
  mkdirSync(dir, { recursive: true });
  const stamp = report.started_at.replace(/[:.]/g, '-');
  const json = `${JSON.stringify(report, null, 2)}\n`;
  const file = `${dir}/${stamp}.json`;
  writeFileSync(file, json);
  writeFileSync(`${dir}/latest.json`, json);
  return file;
}
