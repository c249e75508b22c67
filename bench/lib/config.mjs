// Benchmark settings, read once from the environment. Durations are short-run friendly:
//   BENCH_DURATION_S=2 BENCH_WARMUP_S=1 npm run bench
const DEFAULTS = {
  BENCH_DURATION_S: 10,
  BENCH_WARMUP_S: 3,
  BENCH_CONNECTIONS: 50,
  BENCH_WORKFLOWS: 200,
  BENCH_EXECUTIONS_CONNECTIONS: 10,
  BENCH_ROUNDS: 5,
  BENCH_COMPARE_ROUNDS: 2,
  BENCH_CHANNELS_ROUNDS: 1,
};

function intFromEnv(env, name, { min }) {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return DEFAULTS[name];
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min) {
    throw new Error(`${name} must be an integer >= ${min} (got ${JSON.stringify(raw)})`);
  }
  return Number(raw);
}

function flagFromEnv(env, name) {
  const raw = (env[name] ?? '').trim();
  if (raw === '' || raw === '0') return false;
  if (raw === '1') return true;
  throw new Error(`${name} must be 1 or 0 (got ${JSON.stringify(env[name])})`);
}

export function loadConfig(env = process.env) {
  return {
    durationS: intFromEnv(env, 'BENCH_DURATION_S', { min: 1 }),
    warmupS: intFromEnv(env, 'BENCH_WARMUP_S', { min: 0 }),
    connections: intFromEnv(env, 'BENCH_CONNECTIONS', { min: 1 }),
    // Slices a comparison with a baseline is measured in, turn about (see measureInterleaved).
    rounds: intFromEnv(env, 'BENCH_ROUNDS', { min: 1 }),
    workflows: intFromEnv(env, 'BENCH_WORKFLOWS', { min: 1 }),
    // The executions scenario's concurrent POST /v1/messages clients.
    executionsConnections: intFromEnv(env, 'BENCH_EXECUTIONS_CONNECTIONS', { min: 1 }),
    // BENCH_EXECUTIONS_IDLE_ACCOUNT=1: the executions scenario creates one idle WhatsApp channel account before its load.
    executionsIdleAccount: flagFromEnv(env, 'BENCH_EXECUTIONS_IDLE_ACCOUNT'),
    // BENCH_TRACING=1: every app process runs with OpenTelemetry on (OTEL_EXPORTER_OTLP_ENDPOINT at
    // a counting sink in the bench process, lib/trace-sink.mjs), to price tracing against a run without.
    tracing: flagFromEnv(env, 'BENCH_TRACING'),
    // Comma-separated scenario names; empty runs them all.
    scenarios: (env.BENCH_SCENARIOS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    // Extra node flags for the app under test only, e.g. BENCH_APP_NODE_ARGS=--prof (then
    // `node --prof-process isolate-*.log` in the repository root) to see where its time goes.
    appNodeArgs: (env.BENCH_APP_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
    // A git ref whose build's executions scenario runs alternately with this build's (lib/compare-ref.mjs).
    compareRef: (env.BENCH_COMPARE_REF ?? '').trim() || null,
    compareRounds: intFromEnv(env, 'BENCH_COMPARE_ROUNDS', { min: 1 }),
    // With executions and channels both selected: rounds of the two, turn about (ABBA), their ratio pooled.
    channelsRounds: intFromEnv(env, 'BENCH_CHANNELS_ROUNDS', { min: 1 }),
    // Server side of the bench: local PostgreSQL (trust) and Redis. HTTP load only ever goes to 127.0.0.1.
    postgresUrl: (env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, ''),
    redisUrl: env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
  };
}
