import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CORE_SCHEMA, load, mergeTag } from 'js-yaml';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { AppConfig } from './app-config.js';
import { envVariableNames, validateEnv } from './env.schema.js';

/**
 * The configuration surface stays whole: every variable of the schema is read
 * (it changes the AppConfig) and is mentioned wherever an operator looks: .env.example (with a
 * comment), docker/compose.yml (passed to every app service) and the README's table. A variable added
 * to the schema without those fails here.
 */

/** A valid value other than the default, per variable. A new variable needs one here. */
const SAMPLES: Record<string, string> = {
  PORT: '8080',
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/other',
  REDIS_URL: 'redis://127.0.0.1:6380',
  REDIS_KEY_PREFIX: 'other',
  NODE_ENV: 'production',
  APP_ROLE: 'worker',
  WORKER_HEALTH_PORT: '9090',
  METRICS_TOKEN: 'm'.repeat(20),
  PUBLIC_BASE_URL: 'https://api.example.com',
  TRUST_PROXY: 'loopback',
  CORS_ORIGINS: 'https://app.example.com',
  BOOTSTRAP_API_KEY: 'b'.repeat(20),
  JWT_AUDIENCE: 'https://api.example.com',
  TOKEN_SIGNING_KEY: 'k'.repeat(32),
  OAUTH_LOGIN_ATTEMPTS_PER_IP: '7',
  OAUTH_LOGIN_ATTEMPTS_PER_EMAIL: '7',
  OAUTH_LOGIN_WINDOW: '1h',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  RATE_LIMITS_ENABLED: 'false',
  RATE_LIMIT_PER_CREDENTIAL: '7',
  RATE_LIMIT_READ: '7',
  RATE_LIMIT_WRITE: '7',
  RATE_LIMIT_DELETE: '7',
  RATE_LIMIT_EXECUTION: '7',
  RATE_LIMIT_ANALYTICS_REALTIME: '7',
  RATE_LIMIT_ANALYTICS_HISTORICAL: '7',
  RATE_LIMIT_ANALYTICS_REPORTS: '7',
  RATE_LIMIT_ANALYTICS_EXPORT: '7',
  RATE_LIMIT_PUBLIC_PER_IP: '7',
  RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: '7',
  RATE_LIMIT_HOOK_PER_MINUTE: '7',
  RATE_LIMIT_REDIS_TIMEOUT_MS: '70',
  WEBHOOK_SIGNATURE_FAILURES_PER_MINUTE: '7',
  LOG_LEVEL: 'debug',
  CONVERSATION_TIMEOUT: '1h',
  CONVERSATION_BURST_WINDOW_MS: '7',
  HANDOFF_TIMEOUT: '2h',
  WORKER_CONCURRENCY: '7',
  NODE_RETRY_ATTEMPTS: '7',
  NODE_RETRY_BASE_DELAY_MS: '70',
  EXECUTION_SWEEP_INTERVAL: '7s',
  EXECUTION_ORPHAN_AFTER: '7m',
  DATABASE_CONNECT_TIMEOUT: '7s',
  DATABASE_STATEMENT_TIMEOUT: '7s',
  DATABASE_POOL_MIN: '3',
  SHUTDOWN_TIMEOUT: '7s',
  HTTP_KEEP_ALIVE_TIMEOUT: '70s',
  AI_PROVIDER: 'openai',
  AI_BASE_URL: 'http://127.0.0.1:9/v1',
  AI_API_KEY: 'secret',
  AI_MODEL: 'other-model',
  AI_CONFIDENCE_THRESHOLD: '0.7',
  AI_FALLBACK_RESPONSE: 'Later.',
  AUTH_CACHE_TTL_SECONDS: '7',
  WEBHOOK_TIMEOUT_MS: '700',
  WEBHOOK_CONCURRENCY: '7',
  WEBHOOK_ALLOWED_CIDRS: '10.0.0.0/8',
  WEBHOOK_CA_FILE: '/etc/ca.pem',
  WEBHOOK_PROXY_URL: 'http://proxy:3128',
  OUTBOX_RETENTION: '1d',
  EXECUTION_RETENTION: '30d',
  WEBHOOK_DISABLE_AFTER: '1d',
  WHATSAPP_API_URL: 'http://127.0.0.1:9/v1',
  INSTAGRAM_API_URL: 'http://127.0.0.1:9/v2',
  TWILIO_API_URL: 'http://127.0.0.1:9/v3',
  CHANNEL_SEND_RATE: '7',
  CHANNEL_SEND_TIMEOUT: '7s',
  VOICE_ANSWER_TIMEOUT: '3s',
  CHANNEL_SEND_CONCURRENCY: '7',
  RATE_LIMIT_CHANNEL_PER_MINUTE: '7',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
  OTEL_SERVICE_NAME: 'other-service',
};

/** What AppConfig makes of an environment; a refusal counts as an outcome too. */
function outcome(env: Record<string, string>): string {
  try {
    const config = new AppConfig(validateEnv(env));
    return JSON.stringify({ ...config, servesHttp: config.servesHttp, runsWorkers: config.runsWorkers });
  } catch (error) {
    return `refused: ${(error as Error).message}`;
  }
}

const ROOT = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

describe('the environment schema', () => {
  const names = envVariableNames();

  it('lists every variable, optional ones included', () => {
    expect(names).toContain('PORT');
    expect(names).toContain('AI_BASE_URL');
    expect(names).toContain('WEBHOOK_PROXY_URL');
    expect([...names].sort()).toEqual(Object.keys(SAMPLES).sort());
  });

  it('has no dead variable: each one changes what AppConfig holds', () => {
    // AI_BASE_URL is required with AI_PROVIDER=openai: the provider's sample is read with it.
    const base = { AI_BASE_URL: SAMPLES.AI_BASE_URL };
    for (const name of names) {
      const without = name === 'AI_PROVIDER' ? base : {};
      const withIt = name === 'AI_PROVIDER' ? { ...base, AI_PROVIDER: SAMPLES.AI_PROVIDER } : { [name]: SAMPLES[name] };
      expect(outcome(withIt), `${name} is not read by AppConfig`).not.toBe(outcome(without));
    }
  });

  it('is listed in .env.example, each variable under a comment, with a value the schema accepts', () => {
    const lines = read('.env.example').split('\n');
    const entries = new Map<string, { value: string; commented: boolean }>();
    lines.forEach((line, i) => {
      const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
      if (!match) return;
      // A comment line directly above, or above the group of variables it introduces.
      let j = i - 1;
      while (j >= 0 && /^[A-Z][A-Z0-9_]*=/.test(lines[j])) j--;
      entries.set(match[1], { value: match[2], commented: j >= 0 && lines[j].startsWith('# ') });
    });
    expect([...entries.keys()].sort()).toEqual([...names].sort());
    for (const [name, entry] of entries) expect(entry.commented, `${name} has no comment`).toBe(true);
    // The example as a whole is a valid, development-safe configuration.
    const env = Object.fromEntries([...entries].map(([name, e]) => [name, e.value]));
    const config = new AppConfig(validateEnv(env));
    expect(config.role).toBe('all');
    expect(config.webhookAllowPrivateTargets).toBe(false);
    expect(config.rateLimitsEnabled).toBe(true);
    expect(config.bootstrapApiKey).toBeUndefined();
  });

  it('is passed to every app service of docker/compose.yml, which runs two APIs and two workers', () => {
    const compose = load(read('docker/compose.yml'), { schema: CORE_SCHEMA.withTags(mergeTag) }) as {
      services: Record<string, { environment?: Record<string, unknown>; deploy?: { replicas?: number }; healthcheck?: { test?: string[]; disable?: boolean }; ports?: string[] }>;
    };
    const apps = Object.entries(compose.services).filter(([, s]) => s.environment?.APP_ROLE !== undefined);
    const count = (role: string) => apps.filter(([, s]) => s.environment?.APP_ROLE === role).reduce((n, [, s]) => n + (s.deploy?.replicas ?? 1), 0);
    expect(count('api')).toBe(2);
    expect(count('worker')).toBe(2);
    for (const [service, s] of apps) {
      const role = s.environment?.APP_ROLE;
      for (const name of names) {
        if (name === 'WORKER_HEALTH_PORT' && role !== 'worker') continue;
        expect(Object.keys(s.environment ?? {}), `${name} is not passed to ${service}`).toContain(name);
      }
      if (role === 'worker') {
        expect(s.environment?.WORKER_HEALTH_PORT).toMatch(/^\d+$/);
        expect(s.healthcheck?.disable).not.toBe(true);
        expect(s.healthcheck?.test?.join(' ')).toContain('WORKER_HEALTH_PORT');
        expect(s.ports ?? []).toEqual([]);
      }
    }
  });

  it("is in the README's configuration table", () => {
    const readme = read('README.md');
    const table = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('\n## ', readme.indexOf('## Configuration') + 1));
    for (const name of names) expect(table, `${name} is not in the README's Configuration table`).toContain(`\`${name}\``);
  });
});

describe("package.json's Node range", () => {
  it('is one every installed package accepts (npm install prints no EBADENGINE on it)', () => {
    const ours = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    const refused: string[] = [];
    const visit = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
        const path = join(dir, entry.name);
        if (entry.name.startsWith('@')) {
          visit(path);
          continue;
        }
        const manifest = join(path, 'package.json');
        if (existsSync(manifest)) {
          const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string; engines?: { node?: unknown } };
          const range = pkg.engines?.node;
          if (typeof range === 'string' && semver.validRange(range) && !semver.subset(ours, range)) refused.push(`${pkg.name}@${pkg.version} wants node ${range}`);
        }
        if (existsSync(join(path, 'node_modules'))) visit(join(path, 'node_modules'));
      }
    };
    visit(join(ROOT, 'node_modules'));
    expect(refused).toEqual([]);
    expect(semver.satisfies(process.version, ours), `this machine's Node ${process.version} is outside ${ours}`).toBe(true);
  });
});
