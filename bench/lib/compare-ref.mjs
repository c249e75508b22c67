// BENCH_COMPARE_REF=<git ref>: the `executions` scenario (or `channels`, with BENCH_SCENARIOS=channels) of another
// commit's build beside this checkout's, run alternately (A/B) in one bench run, so a change to the hot path is judged
// against the commit before it on the same machine in the same minutes.
//
// The ref is checked out in a temporary git worktree, given this checkout's node_modules when
// its package-lock.json is the same (else its own `npm install`), and built with its own
// `npm run build`. Rounds go ref, current, current, ref, ref, current, ... (ABBA), so a machine
// that drifts slower or faster over the run penalises neither build. Each round is the whole
// scenario on a fresh database; the figures are its first row (executions/s, conversations/s) and machine CPU per
// execution or conversation.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CURRENT_BUILD, ROOT } from './context.mjs';
import { round } from './load.mjs';

function git(args, cwd = ROOT) {
  return execFileSync('git', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] }).toString().trim();
}

function sameFile(a, b) {
  return existsSync(a) && existsSync(b) && readFileSync(a).equals(readFileSync(b));
}

/** Checks out and builds `ref` beside this checkout; returns the build and a dispose(). */
export function prepareRefBuild(ref) {
  const commit = git(['rev-parse', '--verify', `${ref}^{commit}`]);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'was-bench-ref-'));
  rmSync(dir, { recursive: true, force: true });
  git(['worktree', 'add', '--detach', dir, commit]);
  const dispose = () => {
    try {
      git(['worktree', 'remove', '--force', dir]);
    } catch {
      rmSync(dir, { recursive: true, force: true });
      git(['worktree', 'prune']);
    }
  };
  try {
    const run = (cmd, args) => execFileSync(cmd, args, { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] });
    if (sameFile(path.join(ROOT, 'package-lock.json'), path.join(dir, 'package-lock.json')) && existsSync(path.join(ROOT, 'node_modules'))) {
      symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    } else {
      console.log(`compare: ${ref} has another package-lock.json: npm install in ${dir}`);
      run('npm', ['install', '--no-audit', '--no-fund']);
    }
    console.log(`compare: building ${ref} (${commit.slice(0, 12)}) in ${dir}`);
    run('npm', ['run', '--silent', 'build']);
    const main = path.join(dir, 'dist/src/main.js');
    if (!existsSync(main)) throw new Error(`the build of ${ref} has no dist/src/main.js`);
    return { build: { label: `${ref} (${commit.slice(0, 12)})`, root: dir, main, commit }, dispose };
  } catch (error) {
    dispose();
    throw error;
  }
}

/** The build order of `rounds` rounds of two, ABBA: ref first in round 1, current first in round 2, ... */
export function compareOrder(refBuild, rounds) {
  const order = [];
  for (let i = 0; i < rounds; i++) order.push(...(i % 2 === 0 ? [refBuild, CURRENT_BUILD] : [CURRENT_BUILD, refBuild]));
  return order;
}

const mean = (xs) => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);

function meanByProcess(splits) {
  if (splits.length === 0) return null;
  const names = Object.keys(splits[0]).filter((k) => k !== 'total');
  return Object.fromEntries(names.map((k) => [k, round(mean(splits.map((p) => p[k]).filter((x) => typeof x === 'number')), 2)]));
}

/** What a comparison reads from each scenario's first row: its unit, and the measurement's CPU per unit. */
export const COMPARED = {
  executions: { unit: 'execution', units: 'executions', cpuKey: 'machine_cpu_ms_per_execution', processKey: 'process_cpu_ms_per_execution' },
  channels: { unit: 'conversation', units: 'conversations', cpuKey: 'machine_cpu_ms_per_conversation', processKey: 'process_cpu_ms_per_conversation' },
};

/**
 * Both builds' runs of the scenario's first row (`measurement`s of each round) and the ratios current / ref:
 * throughput (higher is better) and machine CPU per unit (lower is better).
 */
export function summarise(refRuns, currentRuns, compared = COMPARED.executions) {
  const side = (runs) => ({
    per_s: runs.map((m) => m.requests_per_s),
    cpu_ms: runs.map((m) => m[compared.cpuKey]),
    mean_per_s: round(mean(runs.map((m) => m.requests_per_s)), 1),
    mean_cpu_ms: round(mean(runs.map((m) => m[compared.cpuKey]).filter((x) => x !== null && x !== undefined)), 2),
    // Each process's CPU per unit (api, worker, postgres, bench), averaged over the runs that split it (an older
    // checkout's scenario may not).
    mean_process_cpu_ms: meanByProcess(runs.map((m) => m[compared.processKey]).filter(Boolean)),
    errors: runs.reduce((n, m) => n + m.errors, 0),
  });
  const ref = side(refRuns);
  const current = side(currentRuns);
  return {
    unit: compared.unit,
    ref,
    current,
    throughput_ratio: ref.mean_per_s > 0 ? round(current.mean_per_s / ref.mean_per_s, 3) : null,
    cpu_ratio: ref.mean_cpu_ms > 0 ? round(current.mean_cpu_ms / ref.mean_cpu_ms, 3) : null,
  };
}
