import { ConfigError, EnvVars, parseDuration, validateEnv, type AppRole, type LogLevel } from './env.schema.js';
import { parseTrustProxy, type TrustProxy } from './trust-proxy.js';

/** The typed, validated configuration every module receives through DI. */
export class AppConfig {
  readonly port: number;
  readonly databaseUrl: string;
  readonly redisUrl: string;
  readonly redisKeyPrefix: string;
  readonly role: AppRole;
  /** APP_ROLE=worker: the port of its health listener (/health/live, /health/ready); none when unset. */
  readonly workerHealthPort?: number;
  readonly publicBaseUrl: string;
  /** Browser origins allowed by CORS: `*` (any), a list, or none (no CORS headers). */
  readonly corsOrigins: '*' | readonly string[];
  readonly bootstrapApiKey?: string;
  readonly jwtAudience?: string;
  /** The first of tokenSigningKeys: the key that signs and seals. */
  readonly tokenSigningKey?: string;
  /** TOKEN_SIGNING_KEY split on commas, newest (signing) first; every one verifies. Empty when unset (then SigningKeys holds the generated key). */
  readonly tokenSigningKeys: string[];
  /** Express's `trust proxy` (TRUST_PROXY): false, a hop count, or trusted proxy addresses and ranges. */
  readonly trustProxy: TrustProxy;
  /** Who may scrape `/metrics`: METRICS_TOKEN (a bearer token) and whether NODE_ENV is production (then loopback only without a token). */
  readonly metrics: { token?: string; production: boolean };
  readonly oauthLogin: { attemptsPerIp: number; attemptsPerEmail: number; windowSeconds: number };
  readonly webhookAllowPrivateTargets: boolean;
  readonly rateLimitsEnabled: boolean;
  /** Rate-limit figures (requests per window); see namedThrottlers (src/rate-limits/rate-limit-policies.ts). */
  readonly rateLimits: {
    perCredential: number;
    read: number;
    write: number;
    delete: number;
    execution: number;
    analyticsRealtime: number;
    analyticsHistorical: number;
    analyticsReports: number;
    analyticsExport: number;
    publicPerIp: number;
    authFailuresPerMinute: number;
    hookPerMinute: number;
    redisTimeoutMs: number;
  };
  /** Failed inbound-webhook authentications per source IP per minute (then 429). */
  readonly webhookSignatureFailuresPerMinute: number;
  readonly logLevel: LogLevel;
  readonly authCacheTtlMs: number;
  readonly conversationTimeoutMs: number;
  /** POST /v1/messages without a channel account: the burst window in ms (0: off). See docs/channels.md, "Bursts". */
  readonly conversationBurstWindowMs: number;
  /** How long a handoff lasts unless ended sooner (HANDOFF_TIMEOUT). */
  readonly handoffTimeoutMs: number;
  readonly workerConcurrency: number;
  /** A node failing transiently: attempts in all, and the wait before the second (doubled each time). */
  readonly nodeRetry: { attempts: number; baseDelayMs: number };
  /** The executions sweep: how often it runs, and after how long untouched a running execution is queued again. */
  readonly executionSweep: { everyMs: number; orphanAfterMs: number };
  /** PostgreSQL: connection wait and per-statement limit (0: none) of the service's own pool. */
  readonly database: { connectTimeoutMs: number; statementTimeoutMs: number; poolMin: number };
  /** On SIGTERM: in-flight requests and running jobs get this long before they are cut off or released. */
  readonly shutdownTimeoutMs: number;
  /** HTTP_KEEP_ALIVE_TIMEOUT: how long the HTTP server keeps an idle keep-alive connection. */
  readonly keepAliveTimeoutMs: number;
  readonly webhooks: {
    timeoutMs: number;
    concurrency: number;
    /** Empty: any public address (or any address with WEBHOOK_ALLOW_PRIVATE_TARGETS). */
    allowedCidrs: string[];
    caFile?: string;
    proxyUrl?: string;
    outboxRetentionMs: number;
    disableAfterMs: number;
  };
  /** EXECUTION_RETENTION in milliseconds; null: off (keep everything). */
  readonly executionRetentionMs: number | null;
  readonly channels: {
    /** Provider base URLs by provider name, without a trailing slash. */
    apiUrls: { whatsapp_cloud: string; instagram: string; twilio: string };
    sendRate: number;
    sendTimeoutMs: number;
    sendConcurrency: number;
    webhookPerMinute: number;
    /** VOICE_ANSWER_TIMEOUT: a call's request waits this long for the run before the caller is told to hold. */
    voiceAnswerTimeoutMs: number;
  };
  /** OpenTelemetry traces: on when `endpoint` (OTEL_EXPORTER_OTLP_ENDPOINT) is set (src/tracing/start-tracing.ts). */
  readonly tracing: { endpoint?: string; serviceName: string };
  readonly ai: {
    provider: 'builtin' | 'openai';
    baseUrl?: string;
    apiKey?: string;
    model: string;
    confidenceThreshold: number;
    fallbackResponse: string;
  };

  constructor(env: EnvVars) {
    this.port = env.PORT;
    this.databaseUrl = env.DATABASE_URL;
    this.redisUrl = env.REDIS_URL;
    this.redisKeyPrefix = env.REDIS_KEY_PREFIX;
    this.role = env.APP_ROLE;
    this.workerHealthPort = env.WORKER_HEALTH_PORT;
    this.metrics = { token: env.METRICS_TOKEN, production: env.NODE_ENV === 'production' };
    this.publicBaseUrl = (env.PUBLIC_BASE_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, '');
    const origins = (env.CORS_ORIGINS ?? '').split(',').map((o) => o.trim()).filter((o) => o !== '');
    // An origin as browsers send it: lower-case scheme and host, no trailing slash.
    this.corsOrigins = origins.includes('*') ? '*' : [...new Set(origins.map(corsOrigin))];
    this.bootstrapApiKey = env.BOOTSTRAP_API_KEY;
    this.jwtAudience = env.JWT_AUDIENCE;
    this.tokenSigningKeys = (env.TOKEN_SIGNING_KEY ?? '').split(',').map((k) => k.trim()).filter((k) => k !== '');
    if (this.tokenSigningKeys.some((k) => k.length < 32)) {
      throw new ConfigError('Invalid configuration:\n  TOKEN_SIGNING_KEY: each comma-separated key must be at least 32 characters');
    }
    if (new Set(this.tokenSigningKeys).size !== this.tokenSigningKeys.length) {
      throw new ConfigError('Invalid configuration:\n  TOKEN_SIGNING_KEY: a key is listed twice');
    }
    if (this.tokenSigningKeys.length === 0 && env.NODE_ENV === 'production') {
      throw new ConfigError('Invalid configuration:\n  TOKEN_SIGNING_KEY: required when NODE_ENV=production (one or more comma-separated keys of at least 32 characters; the first signs)');
    }
    this.tokenSigningKey = this.tokenSigningKeys[0];
    const trustProxy = parseTrustProxy(env.TRUST_PROXY);
    if (typeof trustProxy === 'object' && !Array.isArray(trustProxy)) throw new ConfigError(`Invalid configuration:\n  TRUST_PROXY: ${trustProxy.error}`);
    this.trustProxy = trustProxy;
    this.oauthLogin = {
      attemptsPerIp: env.OAUTH_LOGIN_ATTEMPTS_PER_IP,
      attemptsPerEmail: env.OAUTH_LOGIN_ATTEMPTS_PER_EMAIL,
      windowSeconds: Math.max(1, Math.ceil(parseDuration(env.OAUTH_LOGIN_WINDOW) / 1000)),
    };
    this.webhookAllowPrivateTargets = env.WEBHOOK_ALLOW_PRIVATE_TARGETS;
    this.rateLimitsEnabled = env.RATE_LIMITS_ENABLED;
    this.rateLimits = {
      perCredential: env.RATE_LIMIT_PER_CREDENTIAL,
      read: env.RATE_LIMIT_READ,
      write: env.RATE_LIMIT_WRITE,
      delete: env.RATE_LIMIT_DELETE,
      execution: env.RATE_LIMIT_EXECUTION,
      analyticsRealtime: env.RATE_LIMIT_ANALYTICS_REALTIME,
      analyticsHistorical: env.RATE_LIMIT_ANALYTICS_HISTORICAL,
      analyticsReports: env.RATE_LIMIT_ANALYTICS_REPORTS,
      analyticsExport: env.RATE_LIMIT_ANALYTICS_EXPORT,
      publicPerIp: env.RATE_LIMIT_PUBLIC_PER_IP,
      authFailuresPerMinute: env.RATE_LIMIT_AUTH_FAILURES_PER_MINUTE,
      hookPerMinute: env.RATE_LIMIT_HOOK_PER_MINUTE,
      redisTimeoutMs: env.RATE_LIMIT_REDIS_TIMEOUT_MS,
    };
    this.webhookSignatureFailuresPerMinute = env.WEBHOOK_SIGNATURE_FAILURES_PER_MINUTE;
    this.logLevel = env.LOG_LEVEL;
    this.authCacheTtlMs = env.AUTH_CACHE_TTL_SECONDS * 1000;
    this.conversationTimeoutMs = parseDuration(env.CONVERSATION_TIMEOUT);
    if (this.conversationTimeoutMs < 1000) throw new ConfigError('Invalid configuration:\n  CONVERSATION_TIMEOUT: must be at least 1s');
    this.conversationBurstWindowMs = env.CONVERSATION_BURST_WINDOW_MS;
    this.handoffTimeoutMs = parseDuration(env.HANDOFF_TIMEOUT);
    if (this.handoffTimeoutMs < 1000) throw new ConfigError('Invalid configuration:\n  HANDOFF_TIMEOUT: must be at least 1s');
    this.workerConcurrency = env.WORKER_CONCURRENCY;
    this.nodeRetry = { attempts: env.NODE_RETRY_ATTEMPTS, baseDelayMs: env.NODE_RETRY_BASE_DELAY_MS };
    this.executionSweep = { everyMs: parseDuration(env.EXECUTION_SWEEP_INTERVAL), orphanAfterMs: parseDuration(env.EXECUTION_ORPHAN_AFTER) };
    if (this.executionSweep.everyMs < 1000) throw new ConfigError('Invalid configuration:\n  EXECUTION_SWEEP_INTERVAL: must be at least 1s');
    if (this.executionSweep.orphanAfterMs < 1000) throw new ConfigError('Invalid configuration:\n  EXECUTION_ORPHAN_AFTER: must be at least 1s');
    this.database = {
      connectTimeoutMs: parseDuration(env.DATABASE_CONNECT_TIMEOUT),
      statementTimeoutMs: parseDuration(env.DATABASE_STATEMENT_TIMEOUT),
      poolMin: env.DATABASE_POOL_MIN,
    };
    if (this.database.connectTimeoutMs < 100) throw new ConfigError('Invalid configuration:\n  DATABASE_CONNECT_TIMEOUT: must be at least 100ms');
    this.shutdownTimeoutMs = parseDuration(env.SHUTDOWN_TIMEOUT);
    if (this.shutdownTimeoutMs < 1000 || this.shutdownTimeoutMs > 600_000) throw new ConfigError('Invalid configuration:\n  SHUTDOWN_TIMEOUT: must be from 1s to 10m');
    this.keepAliveTimeoutMs = parseDuration(env.HTTP_KEEP_ALIVE_TIMEOUT);
    if (this.keepAliveTimeoutMs < 1000 || this.keepAliveTimeoutMs > 900_000) throw new ConfigError('Invalid configuration:\n  HTTP_KEEP_ALIVE_TIMEOUT: must be from 1s to 15m');
    this.webhooks = {
      timeoutMs: env.WEBHOOK_TIMEOUT_MS,
      concurrency: env.WEBHOOK_CONCURRENCY,
      allowedCidrs: (env.WEBHOOK_ALLOWED_CIDRS ?? '').split(',').map((c) => c.trim()).filter((c) => c !== ''),
      caFile: env.WEBHOOK_CA_FILE,
      proxyUrl: env.WEBHOOK_PROXY_URL,
      outboxRetentionMs: parseDuration(env.OUTBOX_RETENTION),
      disableAfterMs: parseDuration(env.WEBHOOK_DISABLE_AFTER),
    };
    this.executionRetentionMs = env.EXECUTION_RETENTION === 'off' ? null : parseDuration(env.EXECUTION_RETENTION);
    if (this.executionRetentionMs !== null && this.executionRetentionMs < 86_400_000) throw new ConfigError('Invalid configuration:\n  EXECUTION_RETENTION: must be off or at least 1d');
    this.channels = {
      apiUrls: {
        whatsapp_cloud: env.WHATSAPP_API_URL.replace(/\/+$/, ''),
        instagram: env.INSTAGRAM_API_URL.replace(/\/+$/, ''),
        twilio: env.TWILIO_API_URL.replace(/\/+$/, ''),
      },
      sendRate: env.CHANNEL_SEND_RATE,
      sendTimeoutMs: parseDuration(env.CHANNEL_SEND_TIMEOUT),
      sendConcurrency: env.CHANNEL_SEND_CONCURRENCY,
      webhookPerMinute: env.RATE_LIMIT_CHANNEL_PER_MINUTE,
      voiceAnswerTimeoutMs: parseDuration(env.VOICE_ANSWER_TIMEOUT),
    };
    if (this.channels.voiceAnswerTimeoutMs < 100 || this.channels.voiceAnswerTimeoutMs > 14_000) {
      throw new ConfigError('Invalid configuration:\n  VOICE_ANSWER_TIMEOUT: must be from 100ms to 14s (Twilio waits 15 s for an answer)');
    }
    if (this.channels.sendTimeoutMs < 100) throw new ConfigError('Invalid configuration:\n  CHANNEL_SEND_TIMEOUT: must be at least 100ms');
    if (env.AI_PROVIDER === 'openai' && !env.AI_BASE_URL) {
      throw new ConfigError('Invalid configuration:\n  AI_BASE_URL: required when AI_PROVIDER=openai');
    }
    this.tracing = { endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: env.OTEL_SERVICE_NAME };
    this.ai = {
      provider: env.AI_PROVIDER,
      baseUrl: env.AI_BASE_URL?.replace(/\/+$/, ''),
      apiKey: env.AI_API_KEY,
      model: env.AI_MODEL,
      confidenceThreshold: env.AI_CONFIDENCE_THRESHOLD,
      fallbackResponse: env.AI_FALLBACK_RESPONSE,
    };
  }

  get servesHttp(): boolean {
    return this.role === 'api' || this.role === 'all';
  }

  get runsWorkers(): boolean {
    return this.role === 'worker' || this.role === 'all';
  }

  /** Reads and validates the process environment (or the given one, in tests). */
  static fromEnv(raw: Record<string, string | undefined> = process.env, overrides: Record<string, string> = {}): AppConfig {
    return new AppConfig(validateEnv({ ...raw, ...overrides }));
  }
}

/** An origin of CORS_ORIGINS as a browser sends it in `Origin` (lower-case scheme and host, default port left out). */
function corsOrigin(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`Invalid configuration:\n  CORS_ORIGINS: ${value} is not an origin`);
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new ConfigError(`Invalid configuration:\n  CORS_ORIGINS: ${value} is not an origin (scheme, host and port only)`);
  }
  return url.origin;
}
