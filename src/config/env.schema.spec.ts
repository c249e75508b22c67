import { describe, expect, it } from 'vitest';
import { AppConfig } from './app-config.js';
import { ConfigError, validateEnv } from './env.schema.js';

describe('validateEnv', () => {
  it('applies the documented defaults', () => {
    const config = new AppConfig(validateEnv({}));
    expect(config.port).toBe(3000);
    expect(config.databaseUrl).toBe('postgres://postgres@127.0.0.1:5432/workflow_automation');
    expect(config.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(config.role).toBe('all');
    expect(config.publicBaseUrl).toBe('http://localhost:3000');
    expect(config.webhookAllowPrivateTargets).toBe(false);
    expect(config.rateLimitsEnabled).toBe(true);
  });

  it('parses typed values', () => {
    const config = new AppConfig(validateEnv({ PORT: '8080', APP_ROLE: 'worker', RATE_LIMITS_ENABLED: 'false', PUBLIC_BASE_URL: 'https://api.example.com/' }));
    expect(config.port).toBe(8080);
    expect(config.servesHttp).toBe(false);
    expect(config.runsWorkers).toBe(true);
    expect(config.rateLimitsEnabled).toBe(false);
    expect(config.publicBaseUrl).toBe('https://api.example.com');
  });

  it('reads CORS_ORIGINS as browsers send an origin; `*` for any; unset, none', () => {
    expect(new AppConfig(validateEnv({})).corsOrigins).toEqual([]);
    expect(new AppConfig(validateEnv({ CORS_ORIGINS: ' https://App.Example.com/ , http://127.0.0.1:5173,https://app.example.com' })).corsOrigins).toEqual([
      'https://app.example.com',
      'http://127.0.0.1:5173',
    ]);
    expect(new AppConfig(validateEnv({ CORS_ORIGINS: 'https://app.example.com,*' })).corsOrigins).toBe('*');
    for (const value of ['app.example.com', 'https://app.example.com/path', 'ftp://app.example.com', 'https://a.example.com;https://b.example.com', 'null', 'https://[bad', 'https://user@app.example.com', 'https://app.example.com?x=1']) {
      expect(() => new AppConfig(validateEnv({ CORS_ORIGINS: value })), value).toThrow(ConfigError);
    }
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['APP_ROLE', 'both'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'localhost:6379'],
    ['RATE_LIMITS_ENABLED', 'maybe'],
    ['LOG_LEVEL', 'loud'],
    ['BOOTSTRAP_API_KEY', 'short'],
    ['METRICS_TOKEN', 'short'],
    ['METRICS_TOKEN', `${'t'.repeat(20)} with spaces`],
    ['CONVERSATION_TIMEOUT', 'forever'],
    ['WORKER_CONCURRENCY', '0'],
    ['NODE_RETRY_ATTEMPTS', '0'],
    ['NODE_RETRY_ATTEMPTS', '11'],
    ['NODE_RETRY_BASE_DELAY_MS', '-1'],
    ['NODE_RETRY_BASE_DELAY_MS', '60000'],
    ['AI_PROVIDER', 'magic'],
    ['AI_CONFIDENCE_THRESHOLD', '1.5'],
    ['RATE_LIMIT_PER_CREDENTIAL', '0'],
    ['RATE_LIMIT_ANALYTICS_EXPORT', 'twenty'],
    ['RATE_LIMIT_DELETE', '100000001'],
    ['RATE_LIMIT_REDIS_TIMEOUT_MS', '5'],
  ])('rejects %s=%s with a message naming the variable', (name, value) => {
    expect(() => validateEnv({ [name]: value })).toThrow(ConfigError);
    expect(() => validateEnv({ [name]: value })).toThrow(new RegExp(name));
  });
});

describe('durations and AI settings', () => {
  it('reads CONVERSATION_TIMEOUT with units, in seconds by default', () => {
    expect(new AppConfig(validateEnv({})).conversationTimeoutMs).toBe(24 * 3600 * 1000);
    expect(new AppConfig(validateEnv({ CONVERSATION_TIMEOUT: '90' })).conversationTimeoutMs).toBe(90_000);
    expect(new AppConfig(validateEnv({ CONVERSATION_TIMEOUT: '1500ms' })).conversationTimeoutMs).toBe(1500);
    expect(new AppConfig(validateEnv({ CONVERSATION_TIMEOUT: '30m' })).conversationTimeoutMs).toBe(1_800_000);
  });

  it('reads HANDOFF_TIMEOUT with units (default 24h), at least 1s', () => {
    expect(new AppConfig(validateEnv({})).handoffTimeoutMs).toBe(24 * 3600 * 1000);
    expect(new AppConfig(validateEnv({ HANDOFF_TIMEOUT: '2h' })).handoffTimeoutMs).toBe(7_200_000);
    expect(new AppConfig(validateEnv({ HANDOFF_TIMEOUT: '1s' })).handoffTimeoutMs).toBe(1000);
    expect(() => new AppConfig(validateEnv({ HANDOFF_TIMEOUT: '500ms' }))).toThrow(/HANDOFF_TIMEOUT/);
    expect(() => validateEnv({ HANDOFF_TIMEOUT: 'a day' })).toThrow(/HANDOFF_TIMEOUT/);
  });

  it('needs AI_BASE_URL for the openai provider', () => {
    expect(() => new AppConfig(validateEnv({ AI_PROVIDER: 'openai' }))).toThrow(/AI_BASE_URL/);
    const config = new AppConfig(validateEnv({ AI_PROVIDER: 'openai', AI_BASE_URL: 'http://127.0.0.1:9/v1/', AI_CONFIDENCE_THRESHOLD: '0.5' }));
    expect(config.ai).toMatchObject({ provider: 'openai', baseUrl: 'http://127.0.0.1:9/v1', confidenceThreshold: 0.5 });
  });
});

describe('rate-limit figures', () => {
  it("default to the specification's Limits table and are each set by env", () => {
    expect(new AppConfig(validateEnv({})).rateLimits).toEqual({
      perCredential: 1000,
      read: 1000,
      write: 100,
      delete: 50,
      execution: 500,
      analyticsRealtime: 1000,
      analyticsHistorical: 100,
      analyticsReports: 50,
      analyticsExport: 20,
      publicPerIp: 1000,
      authFailuresPerMinute: 100,
      hookPerMinute: 100,
      redisTimeoutMs: 250,
    });
    const config = new AppConfig(validateEnv({ RATE_LIMIT_DELETE: '2', RATE_LIMIT_ANALYTICS_EXPORT: '1', RATE_LIMIT_PER_CREDENTIAL: '100000000', RATE_LIMIT_HOOK_PER_MINUTE: '7' }));
    expect(config.rateLimits).toMatchObject({ delete: 2, analyticsExport: 1, perCredential: 100_000_000, hookPerMinute: 7 });
  });
});

describe('TOKEN_SIGNING_KEY', () => {
  const a = 'a'.repeat(32);
  const b = 'b'.repeat(40);
  it('holds one key or a comma-separated list, newest first', () => {
    expect(new AppConfig(validateEnv({ TOKEN_SIGNING_KEY: a })).tokenSigningKeys).toEqual([a]);
    const rotated = new AppConfig(validateEnv({ TOKEN_SIGNING_KEY: `${b}, ${a}` }));
    expect(rotated.tokenSigningKeys).toEqual([b, a]);
    expect(rotated.tokenSigningKey).toBe(b);
    expect(new AppConfig(validateEnv({})).tokenSigningKeys).toEqual([]);
  });

  it('refuses a short key in the list, and a key listed twice', () => {
    expect(() => new AppConfig(validateEnv({ TOKEN_SIGNING_KEY: `${b},short` }))).toThrow(/TOKEN_SIGNING_KEY/);
    expect(() => new AppConfig(validateEnv({ TOKEN_SIGNING_KEY: `${a},${a}` }))).toThrow(/TOKEN_SIGNING_KEY/);
  });
});

describe('fault-handling variables', () => {
  // Loading the data source options loads every entity and migration: slow on a busy machine.
  it('reads the database timeouts, the shutdown timeout and the sweep timings, with their defaults', { timeout: 60_000 }, async () => {
    const defaults = new AppConfig(validateEnv({}));
    expect(defaults.database).toEqual({ connectTimeoutMs: 5000, statementTimeoutMs: 30_000, poolMin: 8 });
    expect(defaults.shutdownTimeoutMs).toBe(4000);
    expect(defaults.executionSweep).toEqual({ everyMs: 60_000, orphanAfterMs: 120_000 });
    const set = new AppConfig(
      validateEnv({ DATABASE_CONNECT_TIMEOUT: '2s', DATABASE_STATEMENT_TIMEOUT: '0', DATABASE_POOL_MIN: '0', SHUTDOWN_TIMEOUT: '9s', EXECUTION_SWEEP_INTERVAL: '5s', EXECUTION_ORPHAN_AFTER: '30s' }),
    );
    expect(set.database).toEqual({ connectTimeoutMs: 2000, statementTimeoutMs: 0, poolMin: 0 });
    expect(set.shutdownTimeoutMs).toBe(9000);
    expect(set.executionSweep).toEqual({ everyMs: 5000, orphanAfterMs: 30_000 });

    // The service's pool gets them; migrations (no `database`) run without a statement timeout.
    const { dataSourceOptions } = await import('../database/data-source.options.js');
    const extra = (o: unknown) => (o as { extra: { connectionTimeoutMillis: number; options: string; min: number } }).extra;
    expect(extra(dataSourceOptions(defaults))).toMatchObject({ connectionTimeoutMillis: 5000, options: '-c jit=off -c statement_timeout=30000', min: 8 });
    expect(extra(dataSourceOptions(set))).toMatchObject({ connectionTimeoutMillis: 2000, options: '-c jit=off', min: 0 });
    expect(extra(dataSourceOptions({ databaseUrl: defaults.databaseUrl })).options).toBe('-c jit=off');
  });

  it.each([
    ['SHUTDOWN_TIMEOUT', '500ms'],
    ['SHUTDOWN_TIMEOUT', 'soon'],
    ['DATABASE_CONNECT_TIMEOUT', '10ms'],
    ['DATABASE_POOL_MIN', '21'],
    ['DATABASE_POOL_MIN', '-1'],
    ['EXECUTION_SWEEP_INTERVAL', '100ms'],
    ['EXECUTION_ORPHAN_AFTER', 'x'],
  ])('refuses %s=%s naming the variable', (name, value) => {
    expect(() => new AppConfig(validateEnv({ [name]: value }))).toThrow(ConfigError);
    expect(() => new AppConfig(validateEnv({ [name]: value }))).toThrow(name);
  });
});
