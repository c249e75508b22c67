// Benchmark runner: `npm run bench` (builds first). Each scenario of bench/scenarios/index.mjs runs
// against the built app in its own throwaway database and Redis prefix; baselines are measured in
// the same run. Prints a table, writes bench/results/<timestamp>.json and latest.json.
// Exit code 0 whenever the measurements were made, even if a target was missed (this is a report);
// non-zero only when the bench itself broke.
//   BENCH_DURATION_S (10)  BENCH_WARMUP_S (3)  BENCH_CONNECTIONS (50)  BENCH_WORKFLOWS (200)
//   BENCH_SCENARIOS (comma-separated names; default all)
//   BENCH_EXECUTIONS_IDLE_ACCOUNT=1 (executions runs with one idle WhatsApp channel account present)
//   BENCH_APP_NODE_ARGS (extra node flags for the app under test, e.g. --prof)
//   BENCH_COMPARE_REF (a git ref: its build's `executions` scenario interleaved with this build's;
//   BENCH_COMPARE_ROUNDS rounds of two, default 2; see lib/compare-ref.mjs)
//   BENCH_CHANNELS_ROUNDS (with executions and channels selected: that many rounds of the two, ABBA, ratio pooled)
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { loadConfig } from './lib/config.mjs';
import { traceSink } from './lib/trace-sink.mjs';
import { COMPARED, compareOrder, prepareRefBuild, summarise } from './lib/compare-ref.mjs';
import { BenchContext, ROOT } from './lib/context.mjs';
import { formatTable, judge, writeResults } from './lib/report.mjs';
import { NAMED_ONLY, SCENARIOS } from './scenarios/index.mjs';

const RESULTS_DIR = fileURLToPath(new URL('./results', import.meta.url));

function gitRevision() {
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'migrations'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim() !== '';
    return { commit, dirty };
  } catch {
    return null;
  }
}

function selectScenarios(names) {
  if (names.length === 0) return SCENARIOS;
  const known = [...SCENARIOS, ...NAMED_ONLY];
  const unknown = names.filter((n) => !known.some((s) => s.name === n));
  if (unknown.length > 0) throw new Error(`unknown scenario(s) ${unknown.join(', ')}; known: ${known.map((s) => s.name).join(', ')}`);
  return known.filter((s) => names.includes(s.name));
}

const active = new Set();
let interrupted = false;

async function disposeAll() {
  const contexts = [...active];
  active.clear();
  const problems = (await Promise.all(contexts.map((c) => c.dispose()))).flat();
  for (const p of problems) console.error(`cleanup: ${p}`);
  return problems;
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    console.error(`\n${signal}: cleaning up...`);
    disposeAll().finally(() => process.exit(130));
  });
}

/** One scenario on one build: its judged rows (printed as they come); `round` names them when a pair repeats. */
async function runScenario(config, shared, scenario, build, round = null) {
  const ctx = await BenchContext.create(config, shared, scenario.name, build);
  active.add(ctx);
  const results = [];
  try {
    const rows = await scenario.run(ctx);
    for (const row of rows) {
      const r = judge(scenario, round === null ? row : { ...row, name: `${row.name} (round ${round})` });
      results.push(r);
      console.log(`  ${r.name}: ${r.requests_per_s} req/s, p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, ${r.errors}/${r.non_2xx} err/non-2xx`);
    }
  } finally {
    active.delete(ctx);
    const problems = await ctx.dispose();
    if (problems.length > 0) throw new Error(`cleanup of ${scenario.name} failed:\n  ${problems.join('\n  ')}`);
  }
  return results;
}

/** BENCH_COMPARE_REF: the executions scenario (or channels, when BENCH_SCENARIOS names it alone) of `ref`'s build and of this one, alternately. */
async function compare(config) {
  const name = config.scenarios.length === 0 ? 'executions' : config.scenarios.join(',');
  const compared = COMPARED[name];
  if (!compared) throw new Error(`BENCH_COMPARE_REF compares executions or channels (BENCH_SCENARIOS=channels), not ${name}`);
  const scenario = SCENARIOS.find((s) => s.name === name);
  const startedAt = new Date().toISOString();
  const { build: refBuild, dispose } = prepareRefBuild(config.compareRef);
  const runs = { ref: [], current: [] };
  try {
    console.log(
      `bench compare: ${name}, ${refBuild.label} against this build, ${config.compareRounds} rounds of two (ABBA) | ` +
        `${config.durationS} s measured after ${config.warmupS} s warm-up, ${os.cpus().length} CPUs, node ${process.version}`,
    );
    for (const build of compareOrder(refBuild, config.compareRounds)) {
      const side = build === refBuild ? 'ref' : 'current';
      console.log(`\n[${name} on ${build.label}]`);
      const rows = await runScenario(config, { baselines: new Map() }, scenario, build);
      runs[side].push(rows[0]);
    }
  } finally {
    dispose();
  }
  const summary = summarise(runs.ref, runs.current, compared);
  const line = (label, s) =>
    `  ${label}: ${s.per_s.join(' / ')} ${compared.units}/s (mean ${s.mean_per_s}), ` +
    `machine CPU ${s.cpu_ms.join(' / ')} ms per ${compared.unit} (mean ${s.mean_cpu_ms}` +
    (s.mean_process_cpu_ms ? `; of it ${Object.entries(s.mean_process_cpu_ms).map(([k, v]) => `${k} ${v}`).join(', ')}` : '') +
    `), ${s.errors} errors`;
  console.log(`\n${line(refBuild.label, summary.ref)}\n${line('this build', summary.current)}`);
  console.log(`  ratio this/ref: ${compared.units}/s ${summary.throughput_ratio}x, CPU per ${compared.unit} ${summary.cpu_ratio}x`);
  const file = writeResults(RESULTS_DIR, {
    started_at: startedAt,
    finished_at: new Date().toISOString(),
    mode: 'compare',
    scenario: name,
    compare_ref: { ref: config.compareRef, commit: refBuild.commit },
    settings: { duration_s: config.durationS, warmup_s: config.warmupS, rounds: config.compareRounds, executions_connections: config.executionsConnections, executions_idle_account: config.executionsIdleAccount },
    machine: { node: process.version, platform: `${os.platform()} ${os.release()}`, cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model ?? null },
    git: gitRevision(),
    summary,
    runs,
  });
  console.log(`results: ${file} (and bench/results/latest.json)`);
}

/**
 * The order the selected scenarios run in. With BENCH_CHANNELS_ROUNDS > 1 and both executions and channels selected,
 * the two take turns in its place (executions, channels, channels, executions, ...): each is compared with the other on
 * the machine of the same minutes, as BENCH_COMPARE_REF does for two builds, since single runs here drift by a third.
 */
function runOrder(scenarios, rounds) {
  const executions = scenarios.find((s) => s.name === 'executions');
  const channels = scenarios.find((s) => s.name === 'channels');
  if (rounds <= 1 || !executions || !channels) return scenarios.map((scenario) => ({ scenario, round: null }));
  const order = [];
  for (const scenario of scenarios) {
    if (scenario === channels) continue;
    if (scenario !== executions) {
      order.push({ scenario, round: null });
      continue;
    }
    for (let round = 1; round <= rounds; round++) {
      for (const s of round % 2 === 1 ? [executions, channels] : [channels, executions]) order.push({ scenario: s, round });
    }
  }
  return order;
}

/** Conversations/s over executions/s of the rounds of one run: each round's, and the means' (the figure to judge). */
function pooledChannelsRatio(results) {
  const executions = results.filter((r) => r.scenario === 'executions' && r.machine_cpu_ms_per_execution !== undefined);
  const channels = results.filter((r) => r.scenario === 'channels' && r.ratio_to_executions !== undefined);
  if (executions.length < 2 || channels.length < 2) return null;
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const e = executions.map((r) => r.requests_per_s);
  const c = channels.map((r) => r.requests_per_s);
  return {
    executions_per_s: e,
    conversations_per_s: c,
    ratio_of_means: Math.round((mean(c) / mean(e)) * 100) / 100,
    cpu_ms_per_execution: executions.map((r) => r.machine_cpu_ms_per_execution),
    cpu_ms_per_conversation: channels.map((r) => r.machine_cpu_ms_per_conversation),
  };
}

async function main() {
  const config = loadConfig();
  if (config.compareRef) return compare(config);
  const scenarios = selectScenarios(config.scenarios);
  const startedAt = new Date().toISOString();
  const shared = { baselines: new Map() };
  const results = [];
  console.log(
    `bench: ${scenarios.map((s) => s.name).join(', ')} | ${config.durationS} s measured after ${config.warmupS} s warm-up, ` +
      `${config.connections} connections, ${os.cpus().length} CPUs, node ${process.version}${config.tracing ? ' | TRACING ON (BENCH_TRACING=1)' : ''}`,
  );

  for (const { scenario, round } of runOrder(scenarios, config.channelsRounds)) {
    console.log(`\n[${scenario.name}${round === null ? '' : `, round ${round}`}] ${scenario.description}`);
    results.push(...(await runScenario(config, shared, scenario, undefined, round)));
  }
  const pooled = pooledChannelsRatio(results);
  if (pooled) {
    console.log(
      `\nconversations/s against executions/s over ${config.channelsRounds} rounds, turn about: ${pooled.conversations_per_s.join(' / ')} against ` +
        `${pooled.executions_per_s.join(' / ')}; ratio of the means ${pooled.ratio_of_means} (target >= 0.8); machine CPU per conversation ` +
        `${pooled.cpu_ms_per_conversation.join(' / ')} ms, per execution ${pooled.cpu_ms_per_execution.join(' / ')} ms`,
    );
  }

  const baselines = await Promise.all(shared.baselines.values());
  const report = {
    started_at: startedAt,
    finished_at: new Date().toISOString(),
    settings: {
      duration_s: config.durationS,
      warmup_s: config.warmupS,
      connections: config.connections,
      workflows_seeded: config.workflows,
      executions_connections: config.executionsConnections,
      executions_idle_account: config.executionsIdleAccount,
      channels_rounds: config.channelsRounds,
      tracing: config.tracing ? { on: true, sink: (await traceSink()).stats } : { on: false },
      app_env: { NODE_ENV: 'production', APP_ROLE: 'api', LOG_LEVEL: 'warn', RATE_LIMITS_ENABLED: 'false (workflows-read: true, every figure out of reach)' },
    },
    machine: { node: process.version, platform: `${os.platform()} ${os.release()}`, cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model ?? null },
    git: gitRevision(),
    baselines,
    results,
    ...(pooled ? { channels_against_executions: pooled } : {}),
  };
  console.log(`\n${formatTable(baselines, results)}\n`);
  const file = writeResults(RESULTS_DIR, report);
  console.log(`results: ${file} (and bench/results/latest.json)`);
  const missed = results.filter((r) => !r.pass);
  if (missed.length > 0) console.log(`targets missed: ${missed.map((r) => `${r.scenario}: ${r.name} (${r.reasons.join('; ')})`).join(', ')}`);
}

main().then(
  () => process.exit(0),
  async (error) => {
    console.error(`bench failed: ${error?.stack ?? error}`);
    await disposeAll();
    process.exit(1);
  },
);
