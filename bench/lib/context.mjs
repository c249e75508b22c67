// What a scenario gets: its own database, Redis key prefix and bootstrap API key, helpers to start
// the built app and the baselines, to call the API and to measure load. dispose() undoes it all.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import pg from 'pg';
import { fileURLToPath } from 'node:url';
import { BASELINES } from './baselines.mjs';
import { measure, measureInterleaved } from './load.mjs';
import { ChildProcess, freePort } from './processes.mjs';
import { createDatabase, deleteRedisPrefix, dropDatabase, randomSuffix } from './resources.mjs';
import { traceSink } from './trace-sink.mjs';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const APP_MAIN = fileURLToPath(new URL('../../dist/src/main.js', import.meta.url));
export const CURRENT_BUILD = { label: 'current', root: ROOT, main: APP_MAIN };

export class BenchContext {
  /** `shared` lives for the whole run: the baseline measurements, made once and reused. */
  /**
   * `build` is the app under test: { label, root, main } (default: this checkout's dist/). The
   * comparison mode (BENCH_COMPARE_REF) passes another ref's build.
   */
  constructor(config, shared, scenarioName, build = CURRENT_BUILD) {
    this.config = config;
    this.build = build;
    this.shared = shared;
    this.scenarioName = scenarioName;
    const suffix = randomSuffix();
    this.databaseName = `was_bench_${suffix}`;
    this.databaseUrl = `${config.postgresUrl}/${this.databaseName}`;
    this.redisKeyPrefix = `was_bench_${suffix}`;
    this.apiKey = `bench_${randomBytes(24).toString('base64url')}`;
    this.children = [];
    this.databaseCreated = false;
  }

  static async create(config, shared, scenarioName, build) {
    const ctx = new BenchContext(config, shared, scenarioName, build);
    ctx.tokenSigningKey = process.env.TOKEN_SIGNING_KEY || randomBytes(32).toString('base64url');
    await createDatabase(config.postgresUrl, ctx.databaseName);
    ctx.databaseCreated = true;
    return ctx;
  }

  /** Environment shared by the children: production mode (which requires a token signing key), this scenario's database. */
  childEnv(extra) {
    return { ...process.env, NODE_ENV: 'production', TOKEN_SIGNING_KEY: this.tokenSigningKey, DATABASE_URL: this.databaseUrl, ...extra };
  }

  /**
   * Starts `node dist/src/main.js` and waits for /health/ready. Rate limits are off: the spec's
   * 1000 requests/hour per credential would turn any load test into a 429 test.
   */
  async startApp({ role = 'api', env = {}, port: fixedPort } = {}) {
    const { main, root, label } = this.build;
    if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` (npm run bench does it first)`);
    // A port chosen beforehand when the app must know its own address (PUBLIC_BASE_URL).
    const port = fixedPort ?? (await freePort());
    // BENCH_TRACING=1: traces on, exported to the sink (the SDK's default batching but for the endpoint).
    const tracing = this.config.tracing ? { OTEL_EXPORTER_OTLP_ENDPOINT: (await traceSink()).url } : {};
    const child = new ChildProcess(`app (${role}, ${label})`, main, {
      cwd: root,
      nodeArgs: this.config.appNodeArgs,
      env: this.childEnv({
        PORT: String(port),
        REDIS_URL: this.config.redisUrl,
        REDIS_KEY_PREFIX: this.redisKeyPrefix,
        BOOTSTRAP_API_KEY: this.apiKey,
        APP_ROLE: role,
        LOG_LEVEL: 'warn',
        RATE_LIMITS_ENABLED: 'false',
        ...tracing,
        ...env,
      }),
    });
    this.children.push(child);
    const url = `http://127.0.0.1:${port}`;
    if (role !== 'worker') await child.waitForHttp(`${url}/health/ready`, 90_000);
    return { url, process: child };
  }

  async startBaseline(name) {
    const baseline = BASELINES[name];
    if (!baseline) throw new Error(`unknown baseline ${name}`);
    const port = await freePort();
    const child = new ChildProcess(`baseline ${name}`, baseline.script, { cwd: ROOT, env: this.childEnv({ ...baseline.env, PORT: String(port) }) });
    this.children.push(child);
    const url = `http://127.0.0.1:${port}`;
    await child.waitForHttp(`${url}${baseline.readyPath}`, 30_000);
    return { url, process: child, baseline };
  }

  /**
   * The named baseline measured interleaved with the scenario's own targets (see
   * measureInterleaved in lib/load.mjs), in this scenario's database with `input` such as
   * { workflowIds }: returns [baseline, ...targets] measurements, and records the baseline for the
   * report. Ratios to a baseline measured minutes apart would swing with the machine's drift.
   */
  async measureAgainstBaseline(name, input, targets) {
    const { url, process: child, baseline } = await this.startBaseline(name);
    try {
      const paths = baseline.paths(input);
      await this.expectStatus(`${url}${paths[0]}`, 200, {});
      const [reference, ...measured] = await measureInterleaved([{ url, paths }, ...targets], this.config, this.config.rounds, {
        drain: () => this.drain(),
      });
      const result = { name, description: baseline.description, ...reference };
      this.shared.baselines.set(name, Promise.resolve(result));
      return [result, ...measured];
    } finally {
      await child.stop();
    }
  }

  /** JSON request to the app with the bootstrap key; returns { status, body }. */
  async api(baseUrl, method, path, body) {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    let parsed = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body: parsed };
  }

  /** Fails the bench (not the target) when a URL that must work does not: numbers would be meaningless. */
  async expectStatus(url, status, headers = { authorization: `Bearer ${this.apiKey}` }) {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(15_000) });
    const text = await res.text();
    if (res.status !== status) throw new Error(`GET ${url} answered ${res.status}, expected ${status}: ${text.slice(0, 500)}`);
    return text;
  }

  /** Warm-up plus measured autocannon run with the run's duration and connection settings (see lib/load.mjs). */
  measure(target, hooks) {
    return measure(target, this.config, { drain: () => this.drain(), ...hooks });
  }

  /** Targets measured against each other in interleaved slices, each starting on a drained server (lib/load.mjs). */
  measureInterleaved(targets) {
    return measureInterleaved(targets, this.config, this.config.rounds, { drain: () => this.drain() });
  }

  /**
   * Waits until the server has worked off the requests a finished load run left behind: the
   * load generator has hung up, but each request it sent still runs its statements. Done when no
   * statement of this scenario's database (other than this check's) has been active for three
   * looks 50 ms apart (a request waiting in the app for a pool connection would be seen on the
   * next), or after 60 s.
   */
  async drain() {
    const db = new pg.Client({ connectionString: this.databaseUrl });
    await db.connect();
    try {
      const deadline = Date.now() + 60_000;
      for (let idle = 0; idle < 3 && Date.now() < deadline; ) {
        const { rows } = await db.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'`,
        );
        idle = rows[0].n === 0 ? idle + 1 : 0;
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await db.end();
    }
  }

  async dispose() {
    const problems = [];
    await Promise.all(this.children.map((c) => c.stop().catch((e) => problems.push(`stop ${c.name}: ${e.message}`))));
    if (this.databaseCreated) {
      await dropDatabase(this.config.postgresUrl, this.databaseName).catch((e) => problems.push(`drop database ${this.databaseName}: ${e.message}`));
    }
    await deleteRedisPrefix(this.config.redisUrl, this.redisKeyPrefix).catch((e) => problems.push(`delete Redis keys ${this.redisKeyPrefix}:*: ${e.message}`));
    return problems;
  }
}
