// Turns scenario rows into the printed table and the JSON file.
import { mkdirSync, writeFileSync } from 'node:fs';
import { round } from './load.mjs';

/**
 * Adds ratio and verdict to a scenario row. Besides `target_ratio` (to a baseline), a row may set
 * absolute targets: `min_per_s` (requests_per_s at least) and `max_p99_ms` (p99 strictly below), and
 * `max_gap_to_peers` with `gap_to_peers` (its shortfall to the fastest of rows meant to be alike).
 * `note` is printed beside the verdict.
 */
export function judge(scenario, row) {
  const m = row.measurement;
  const failed = m.errors + m.non_2xx;
  const ratio = row.baseline ? round(m.requests_per_s / row.baseline.requests_per_s, 2) : null;
  const target = row.target_ratio ?? null;
  const minPerS = row.min_per_s ?? null;
  const maxP99Ms = row.max_p99_ms ?? null;
  const maxP95Ms = row.max_p95_ms ?? null;
  const reasons = [];
  if (target !== null && ratio !== null && ratio < target) reasons.push(`ratio ${ratio} < ${target}`);
  if (minPerS !== null && m.requests_per_s < minPerS) reasons.push(`${m.requests_per_s}/s < ${minPerS}/s`);
  if (maxP99Ms !== null && !(m.p99_ms < maxP99Ms)) reasons.push(`p99 ${m.p99_ms} ms >= ${maxP99Ms} ms`);
  if (maxP95Ms !== null && !(m.p95_ms < maxP95Ms)) reasons.push(`p95 ${m.p95_ms} ms >= ${maxP95Ms} ms`);
  if (failed > 0) reasons.push(`${failed} failed or non-2xx requests`);
  // Rows meant to be alike (one per credential type): requests/s at most this fraction below the best of them.
  if (row.max_gap_to_peers !== undefined && row.gap_to_peers > row.max_gap_to_peers) reasons.push(`${Math.round(row.gap_to_peers * 100)}% below its fastest peer > ${Math.round(row.max_gap_to_peers * 100)}%`);
  // A latency target met by no answer at all is missed (every request outlived the slice).
  if ((maxP99Ms !== null || maxP95Ms !== null) && !(m.requests_per_s > 0)) reasons.push('no request completed');
  return {
    scenario: scenario.name,
    name: row.name,
    ...m,
    baseline: row.baseline?.name ?? null,
    baseline_requests_per_s: row.baseline?.requests_per_s ?? null,
    ratio,
    target_ratio: target,
    min_per_s: minPerS,
    max_p99_ms: maxP99Ms,
    max_p95_ms: maxP95Ms,
    note: row.note ?? null,
    pass: reasons.length === 0,
    reasons,
  };
}

function targetLabel(r) {
  const parts = [];
  if (r.target_ratio !== null) parts.push(`>= ${fmt(r.target_ratio, 2)}`);
  if (r.min_per_s !== null && r.min_per_s !== undefined) parts.push(`>= ${r.min_per_s}/s`);
  if (r.max_p99_ms !== null && r.max_p99_ms !== undefined) parts.push(`p99 < ${r.max_p99_ms} ms`);
  if (r.max_p95_ms !== null && r.max_p95_ms !== undefined) parts.push(`p95 < ${r.max_p95_ms} ms`);
  return parts.length > 0 ? parts.join(', ') : '-';
}

function fmt(n, digits = 0) {
  return n === null || n === undefined ? '-' : Number(n).toFixed(digits);
}

export function formatTable(baselines, results) {
  const header = ['scenario', 'req/s', 'p50 ms', 'p95 ms', 'p99 ms', 'err/non-2xx', 'ratio', 'target', 'result', 'note'];
  const rows = [
    ...baselines.map((b) => [`baseline: ${b.name}`, fmt(b.requests_per_s, 1), fmt(b.p50_ms), fmt(b.p95_ms), fmt(b.p99_ms), `${b.errors}/${b.non_2xx}`, '1.00', '-', 'ref', '']),
    ...results.map((r) => [
      `${r.scenario}: ${r.name}`,
      fmt(r.requests_per_s, 1),
      fmt(r.p50_ms),
      fmt(r.p95_ms),
      fmt(r.p99_ms),
      `${r.errors}/${r.non_2xx}`,
      fmt(r.ratio, 2),
      targetLabel(r),
      r.pass ? 'PASS' : 'FAIL',
      r.note ?? '',
    ]),
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  // First and last columns (scenario, note) left-aligned, figures right-aligned.
  const line = (cells) =>
    cells
      .map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd();
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
