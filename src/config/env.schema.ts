import { plainToInstance, Transform } from 'class-transformer';
import { getMetadataStorage, IsBoolean, IsIn, IsInt, IsNumber, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength, validateSync } from 'class-validator';

export const APP_ROLES = ['api', 'worker', 'all'] as const;
export type AppRole = (typeof APP_ROLES)[number];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const toBoolean = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string') return value;
  const v = value.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(v)) return true;
  if (['false', '0', 'no'].includes(v)) return false;
  return value; // left as a string so IsBoolean reports it
};

const toInt = ({ value }: { value: unknown }) => (typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value);

const MAX_RATE_LIMIT = 100_000_000;

/** A rate-limit figure: an integer from 1 to 100000000 (raised by env for benches, lowered for tests). */
function RateFigure(): PropertyDecorator {
  return (target, key) => {
    const message = `${String(key)} must be an integer from 1 to ${MAX_RATE_LIMIT}`;
    Transform(toInt)(target, key);
    IsInt({ message })(target, key);
    Min(1, { message })(target, key);
    Max(MAX_RATE_LIMIT, { message })(target, key);
  };
}

/**
 * Every environment variable the service reads, with its default. Validated once at start;
 * nothing outside src/config reads process.env.
 */
export class EnvVars {
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT: number = 3000;

  @IsString()
  @Matches(/^postgres(ql)?:\/\/.+/, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL: string = 'postgres://postgres@127.0.0.1:5432/workflow_automation';

  @IsString()
  @Matches(/^rediss?:\/\/.+/, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL: string = 'redis://127.0.0.1:6379';

  /** Prefix of every Redis key the service writes (Bull queues, caches, pub/sub channels). */
  @IsString()
  @Matches(/^[A-Za-z0-9_.:-]{1,64}$/, { message: 'REDIS_KEY_PREFIX must be 1-64 characters of A-Z a-z 0-9 _ . : -' })
  REDIS_KEY_PREFIX: string = 'was';

  /** `production` requires TOKEN_SIGNING_KEY; elsewhere (development, test) a key generated per deployment is used without it. */
  @IsOptional()
  @IsString()
  NODE_ENV: string = 'development';

  @IsIn(APP_ROLES as unknown as string[], { message: `APP_ROLE must be one of ${APP_ROLES.join(', ')}` })
  APP_ROLE: AppRole = 'all';

  /**
   * APP_ROLE=worker only: serve GET /health/live and /health/ready (nothing else) on this port, for
   * an orchestrator's health check. Unset: the worker opens no port.
   */
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'WORKER_HEALTH_PORT must be an integer from 1 to 65535' })
  @Min(1, { message: 'WORKER_HEALTH_PORT must be an integer from 1 to 65535' })
  @Max(65535, { message: 'WORKER_HEALTH_PORT must be an integer from 1 to 65535' })
  WORKER_HEALTH_PORT?: number;

  /**
   * Bearer token of `GET /metrics` (the API's, and the worker's on WORKER_HEALTH_PORT). Unset: no
   * token; with NODE_ENV=production only loopback clients may then scrape.
   */
  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'METRICS_TOKEN must be at least 16 characters' })
  @MaxLength(256, { message: 'METRICS_TOKEN must be at most 256 characters' })
  @Matches(/^\S+$/, { message: 'METRICS_TOKEN must not contain spaces' })
  METRICS_TOKEN?: string;

  @IsOptional()
  @IsString()
  @Matches(/^https?:\/\/[^\s/]+(\/[^\s]*)?$/, { message: 'PUBLIC_BASE_URL must be an http(s) URL' })
  PUBLIC_BASE_URL?: string;

  /** Origins of browser applications that may call the API (CORS), comma-separated; `*` for any. Unset: no CORS headers. */
  @IsOptional()
  @IsString()
  @Matches(/^\s*(\*|https?:\/\/[^\s/,]+\/?)(\s*,\s*(\*|https?:\/\/[^\s/,]+\/?))*\s*$/, {
    message: 'CORS_ORIGINS must be `*` or comma-separated origins such as https://app.example.com (scheme, host and port; no path)',
  })
  CORS_ORIGINS?: string;

  @IsOptional()
  @IsString()
  @MinLength(16, { message: 'BOOTSTRAP_API_KEY must be at least 16 characters' })
  @MaxLength(256)
  BOOTSTRAP_API_KEY?: string;

  @IsOptional()
  @IsString()
  JWT_AUDIENCE?: string;

  /**
   * One key, or several separated by commas for rotation: the first signs (access tokens, sealed
   * secrets), every one verifies. Each at least 32 characters (checked in AppConfig). Unset: a random
   * key generated once per deployment and kept in PostgreSQL (src/common/crypto/signing-keys.ts).
   */
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'TOKEN_SIGNING_KEY must be at least 32 characters' })
  @MaxLength(4096)
  TOKEN_SIGNING_KEY?: string;

  /** Sign-in attempts on the OAuth consent page per source IP per OAUTH_LOGIN_WINDOW (then 429). */
  @Transform(toInt)
  @IsInt({ message: 'OAUTH_LOGIN_ATTEMPTS_PER_IP must be an integer from 1 to 100000' })
  @Min(1, { message: 'OAUTH_LOGIN_ATTEMPTS_PER_IP must be an integer from 1 to 100000' })
  @Max(100_000, { message: 'OAUTH_LOGIN_ATTEMPTS_PER_IP must be an integer from 1 to 100000' })
  OAUTH_LOGIN_ATTEMPTS_PER_IP: number = 30;

  /** Sign-in attempts on the OAuth consent page per email address per OAUTH_LOGIN_WINDOW (then 429). */
  @Transform(toInt)
  @IsInt({ message: 'OAUTH_LOGIN_ATTEMPTS_PER_EMAIL must be an integer from 1 to 100000' })
  @Min(1, { message: 'OAUTH_LOGIN_ATTEMPTS_PER_EMAIL must be an integer from 1 to 100000' })
  @Max(100_000, { message: 'OAUTH_LOGIN_ATTEMPTS_PER_EMAIL must be an integer from 1 to 100000' })
  OAUTH_LOGIN_ATTEMPTS_PER_EMAIL: number = 10;

  /** The window of the sign-in limits. */
  @IsString()
  @Matches(/^\d+(ms|s|m|h|d)?$/, { message: 'OAUTH_LOGIN_WINDOW must be a duration such as 900, 15m or 1h' })
  OAUTH_LOGIN_WINDOW: string = '15m';

  /**
   * Express's `trust proxy`: which reverse proxies' X-Forwarded-For names the client, for every
   * per-address limit. Unset: none (the socket address is the client). A hop count (1-10), or a
   * comma-separated list of addresses, CIDRs, `loopback`, `linklocal`, `uniquelocal` (checked in AppConfig).
   */
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  TRUST_PROXY?: string;

  @Transform(toBoolean)
  @IsBoolean({ message: 'WEBHOOK_ALLOW_PRIVATE_TARGETS must be true or false' })
  WEBHOOK_ALLOW_PRIVATE_TARGETS: boolean = false;

  @Transform(toBoolean)
  @IsBoolean({ message: 'RATE_LIMITS_ENABLED must be true or false' })
  RATE_LIMITS_ENABLED: boolean = true;

  // Rate limits (docs/API.md, "Rate limits"). Hourly unless the name says otherwise.
  /** Every /v1 request of one credential. */
  @RateFigure() RATE_LIMIT_PER_CREDENTIAL: number = 1000;
  /** Workflow and trigger route classes, per credential and resource. */
  @RateFigure() RATE_LIMIT_READ: number = 1000;
  @RateFigure() RATE_LIMIT_WRITE: number = 100;
  @RateFigure() RATE_LIMIT_DELETE: number = 50;
  @RateFigure() RATE_LIMIT_EXECUTION: number = 500;
  /** Analytics route classes, per credential. */
  @RateFigure() RATE_LIMIT_ANALYTICS_REALTIME: number = 1000;
  @RateFigure() RATE_LIMIT_ANALYTICS_HISTORICAL: number = 100;
  @RateFigure() RATE_LIMIT_ANALYTICS_REPORTS: number = 50;
  @RateFigure() RATE_LIMIT_ANALYTICS_EXPORT: number = 20;
  /** Requests to unauthenticated routes (the pet sample, the OAuth pages) per source IP. */
  @RateFigure() RATE_LIMIT_PUBLIC_PER_IP: number = 1000;
  /** 401 answers on /v1 per source IP per minute; past it every /v1 request from that IP is 429 until the minute ends. */
  @RateFigure() RATE_LIMIT_AUTH_FAILURES_PER_MINUTE: number = 100;
  /** Inbound webhook requests per trigger per minute. */
  @RateFigure() RATE_LIMIT_HOOK_PER_MINUTE: number = 100;

  /** A rate-limit check waiting longer than this on Redis is skipped (fail open). */
  @Transform(toInt)
  @IsInt()
  @Min(10)
  @Max(10_000)
  RATE_LIMIT_REDIS_TIMEOUT_MS: number = 250;

  /** Failed webhook signature or required-header checks accepted per source IP per minute before 429. */
  @Transform(toInt)
  @IsInt({ message: 'WEBHOOK_SIGNATURE_FAILURES_PER_MINUTE must be an integer from 1 to 100000' })
  @Min(1, { message: 'WEBHOOK_SIGNATURE_FAILURES_PER_MINUTE must be an integer from 1 to 100000' })
  @Max(100_000, { message: 'WEBHOOK_SIGNATURE_FAILURES_PER_MINUTE must be an integer from 1 to 100000' })
  WEBHOOK_SIGNATURE_FAILURES_PER_MINUTE: number = 20;

  @IsIn(LOG_LEVELS as unknown as string[], { message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` })
  LOG_LEVEL: LogLevel = 'info';

  /**
   * Traces (OpenTelemetry): the OTLP/HTTP collector's base URL (`/v1/traces` is appended). Unset: tracing is off and the
   * SDK is not even loaded. The SDK also reads the other standard OTEL_* variables (OTEL_BSP_SCHEDULE_DELAY, …) itself.
   */
  @IsOptional()
  @IsString()
  @Matches(/^https?:\/\/[^\s/]+(\/[^\s]*)?$/, { message: 'OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL' })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;

  /** Traces: the `service.name` of every span (the process role is the `service.role` attribute beside it). */
  @IsString()
  @Matches(/^[^\s]{1,100}$/, { message: 'OTEL_SERVICE_NAME must be 1-100 characters without spaces' })
  OTEL_SERVICE_NAME: string = 'workflow-automation-service';

  /** How long a form waits for the customer's reply: seconds, or a number with ms, s, m, h or d. */
  @IsString()
  @Matches(/^\d+(ms|s|m|h|d)?$/, { message: 'CONVERSATION_TIMEOUT must be a duration such as 86400, 30m or 24h' })
  CONVERSATION_TIMEOUT: string = '24h';

  /**
   * POST /v1/messages without a channel account: a customer's messages arriving within this many
   * milliseconds after the first are handled as one turn (0: each message is its own turn).
   */
  @Transform(toInt)
  @IsInt({ message: 'CONVERSATION_BURST_WINDOW_MS must be an integer from 0 to 10000' })
  @Min(0, { message: 'CONVERSATION_BURST_WINDOW_MS must be an integer from 0 to 10000' })
  @Max(10_000, { message: 'CONVERSATION_BURST_WINDOW_MS must be an integer from 0 to 10000' })
  CONVERSATION_BURST_WINDOW_MS: number = 0;
  /** How long a human's takeover of a conversation lasts unless ended sooner: seconds, or a number with ms, s, m, h or d. */
  @IsString()
  @Matches(/^\d+(ms|s|m|h|d)?$/, { message: 'HANDOFF_TIMEOUT must be a duration such as 3600, 30m or 24h' })
  HANDOFF_TIMEOUT: string = '24h';

  /** How long the service waits for a PostgreSQL connection (pool full or server down) before a request is 503. */
  @IsString()
  @Matches(/^\d+(ms|s|m|h|d)?$/, { message: 'DATABASE_CONNECT_TIMEOUT must be a duration such as 5s or 2000ms' })
  DATABASE_CONNECT_TIMEOUT: string = '5s';

  /**
   * Connections each process keeps open to PostgreSQL (of its 20) however long they idle; an API process opens
   * them at start. A connection opened anew starts with cold catalog caches (its first use of each statement
   * binds it several times slower): a console page after a quiet minute paid that on each of its calls.
   */
  @Transform(toInt)
  @IsInt({ message: 'DATABASE_POOL_MIN must be an integer from 0 to 20' })
  @Min(0, { message: 'DATABASE_POOL_MIN must be an integer from 0 to 20' })
  @Max(20, { message: 'DATABASE_POOL_MIN must be an integer from 0 to 20' })
  DATABASE_POOL_MIN: number = 8;

  /** PostgreSQL cancels a statement of the service running longer than this (statement_timeout); 0 = never. */
  @IsString()
  @Matches(/^\d+(ms|s|m|h|d)?$/, { message: 'DATABASE_STATEMENT_TIMEOUT must be a duration such as 30s or 0 (none)' })
  DATABASE_STATEMENT_TIMEOUT: string = '30s';

  /**
   * On SIGTERM/SIGINT: how long in-flight requests, then running jobs, get to finish before they are cut
   * off or handed back (each phase; APP_ROLE=all has both, within the 10 s a container runtime waits by default).
   */
  @IsString()
  @Matches(/^\d+(ms|s|m|h|d)?$/, { message: 'SHUTDOWN_TIMEOUT must be a duration such as 4s' })
  SHUTDOWN_TIMEOUT: string = '4s';

  /**
   * How long the HTTP server keeps an idle keep-alive connection open. Longer than the idle timeout of the load
   * balancer or proxy in front (60 s for most), so that the server never closes a connection the proxy is about to
   * reuse (the proxy would answer that request 502). Node's own default is 5 s.
   */
  @IsString()
  @Matches(/^\d+(ms|s|m|h|d)?$/, { message: 'HTTP_KEEP_ALIVE_TIMEOUT must be a duration such as 65s' })
  HTTP_KEEP_ALIVE_TIMEOUT: string = '65s';

  /** How often a worker looks in PostgreSQL for overdue waits and running executions whose job was lost. */
  @IsString()
  @Matches(/^\d+(ms|s|m|h|d)?$/, { message: 'EXECUTION_SWEEP_INTERVAL must be a duration such as 60s or 1m' })
  EXECUTION_SWEEP_INTERVAL: string = '60s';

  /** A running execution (not waiting for the customer) untouched this long is queued again by the sweep. */
  @IsString()
  @Matches(/^\d+(ms|s|m|h|d)?$/, { message: 'EXECUTION_ORPHAN_AFTER must be a duration such as 2m' })
  EXECUTION_ORPHAN_AFTER: string = '2m';

  /** Jobs one worker process runs at once on the executions queue. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(200)
  WORKER_CONCURRENCY: number = 10;

  /** Attempts of a node that fails transiently (AI provider outage, database or network error) before the execution fails; 1 = no retry. */
  @Transform(toInt)
  @IsInt({ message: 'NODE_RETRY_ATTEMPTS must be an integer from 1 to 10' })
  @Min(1, { message: 'NODE_RETRY_ATTEMPTS must be an integer from 1 to 10' })
  @Max(10, { message: 'NODE_RETRY_ATTEMPTS must be an integer from 1 to 10' })
  NODE_RETRY_ATTEMPTS: number = 3;

  /** The wait before a node's second attempt, doubled before each later one (exponential back-off). */
  @Transform(toInt)
  @IsInt({ message: 'NODE_RETRY_BASE_DELAY_MS must be an integer from 0 to 5000' })
  @Min(0, { message: 'NODE_RETRY_BASE_DELAY_MS must be an integer from 0 to 5000' })
  @Max(5000, { message: 'NODE_RETRY_BASE_DELAY_MS must be an integer from 0 to 5000' })
  NODE_RETRY_BASE_DELAY_MS: number = 250;

  @IsIn(['builtin', 'openai'], { message: 'AI_PROVIDER must be builtin or openai' })
  AI_PROVIDER: 'builtin' | 'openai' = 'builtin';

  @IsOptional()
  @IsString()
  @Matches(/^https?:\/\/\S+$/, { message: 'AI_BASE_URL must be an http(s) URL' })
  AI_BASE_URL?: string;

  @IsOptional()
  @IsString()
  AI_API_KEY?: string;

  @IsString()
  AI_MODEL: string = 'gpt-4o-mini';

  /** Below this confidence the responder answers AI_FALLBACK_RESPONSE. */
  @Transform(({ value }) => (typeof value === 'string' && /^\d*\.?\d+$/.test(value.trim()) ? Number(value) : value))
  @IsNumber({}, { message: 'AI_CONFIDENCE_THRESHOLD must be a number from 0 to 1' })
  @Min(0)
  @Max(1)
  AI_CONFIDENCE_THRESHOLD: number = 0.3;

  @IsString()
  @MaxLength(2000)
  AI_FALLBACK_RESPONSE: string = "Sorry, I don't have an answer to that yet. A member of our team will get back to you.";

  /** How long a seen API key is trusted from the in-process cache before PostgreSQL is asked again. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(3600)
  AUTH_CACHE_TTL_SECONDS: number = 30;

  /** Outbound webhook attempts give up after this many milliseconds (10 s by default; docs/API.md, "Outbound webhooks"). */
  @Transform(toInt)
  @IsInt({ message: 'WEBHOOK_TIMEOUT_MS must be an integer from 100 to 60000' })
  @Min(100, { message: 'WEBHOOK_TIMEOUT_MS must be an integer from 100 to 60000' })
  @Max(60_000, { message: 'WEBHOOK_TIMEOUT_MS must be an integer from 100 to 60000' })
  WEBHOOK_TIMEOUT_MS: number = 10_000;

  /** Webhook deliveries one worker process sends at once. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(500)
  WEBHOOK_CONCURRENCY: number = 50;

  /**
   * Optional comma-separated CIDRs: when set, deliveries may reach only addresses inside them (on top of
   * the private-address rule). Tests set 127.0.0.0/8,::1/128 so that no fuzzed URL can send traffic out.
   */
  @IsOptional()
  @IsString()
  @Matches(/^[0-9a-fA-F:.]+\/\d{1,3}(\s*,\s*[0-9a-fA-F:.]+\/\d{1,3})*$/, { message: 'WEBHOOK_ALLOWED_CIDRS must be comma-separated CIDRs such as 10.0.0.0/8,fd00::/8' })
  WEBHOOK_ALLOWED_CIDRS?: string;

  /** Optional PEM file of extra certificate authorities deliveries trust (private CAs, test receivers). */
  @IsOptional()
  @IsString()
  WEBHOOK_CA_FILE?: string;

  /** Optional HTTP CONNECT egress proxy (http://host:port) every delivery and test goes through; the SSRF check still applies to the target. */
  @IsOptional()
  @IsString()
  @Matches(/^http:\/\/[^\s/:@]+(:\d{1,5})?\/?$/, { message: 'WEBHOOK_PROXY_URL must be http://host:port' })
  WEBHOOK_PROXY_URL?: string;

  /** How long after its event a published outbox row is kept before deletion (the hourly purge). */
  @IsString()
  @Matches(/^\d+(ms|s|m|h|d)?$/, { message: 'OUTBOX_RETENTION must be a duration such as 604800, 12h or 7d' })
  OUTBOX_RETENTION: string = '7d';

  /**
   * How long execution data is kept (`off`: forever). Older firings are removed by partition drops
   * (ExecutionRetention); an organization may override it (`org:settings --execution-retention`).
   */
  @IsString()
  @Matches(/^(off|[1-9]\d*(ms|s|m|h|d)?)$/, { message: 'EXECUTION_RETENTION must be off or a duration such as 30d' })
  EXECUTION_RETENTION: string = 'off';

  /** Base URL of Meta's Graph API for WhatsApp Cloud API sends (tests point it at a local fake). */
  @IsString()
  @Matches(/^https?:\/\/[^\s/]+(\/[^\s]*)?$/, { message: 'WHATSAPP_API_URL must be an http(s) URL' })
  WHATSAPP_API_URL: string = 'https://graph.facebook.com/v21.0';

  /** Base URL of the Instagram Graph API for Instagram sends. */
  @IsString()
  @Matches(/^https?:\/\/[^\s/]+(\/[^\s]*)?$/, { message: 'INSTAGRAM_API_URL must be an http(s) URL' })
  INSTAGRAM_API_URL: string = 'https://graph.instagram.com/v21.0';

  /** Base URL of Twilio's REST API (voice accounts). */
  @IsString()
  @Matches(/^https?:\/\/[^\s/]+(\/[^\s]*)?$/, { message: 'TWILIO_API_URL must be an http(s) URL' })
  TWILIO_API_URL: string = 'https://api.twilio.com';

  /** Messages sent per second per channel account, across every worker (WhatsApp's default per number is 80). */
  @Transform(toInt)
  @IsInt({ message: 'CHANNEL_SEND_RATE must be an integer from 1 to 10000' })
  @Min(1, { message: 'CHANNEL_SEND_RATE must be an integer from 1 to 10000' })
  @Max(10_000, { message: 'CHANNEL_SEND_RATE must be an integer from 1 to 10000' })
  CHANNEL_SEND_RATE: number = 80;

  /** How long a send to a provider may take before it counts as a transient fault and is retried. */
  @IsString()
  @Matches(/^\d+(ms|s|m|h|d)?$/, { message: 'CHANNEL_SEND_TIMEOUT must be a duration such as 10s or 2000ms' })
  CHANNEL_SEND_TIMEOUT: string = '10s';

  /**
   * How long a phone call's request waits for the run to reach its next question or its end; past it the
   * caller hears a hold phrase and Twilio asks again (Twilio gives up on a request after 15 s).
   */
  @IsString()
  @Matches(/^\d+(ms|s|m|h|d)?$/, { message: 'VOICE_ANSWER_TIMEOUT must be a duration such as 8s or 500ms' })
  VOICE_ANSWER_TIMEOUT: string = '8s';

  /** Sends handled at once by each worker process (different customers; one customer's go one at a time). */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(500)
  CHANNEL_SEND_CONCURRENCY: number = 50;

  /** Provider webhook requests per channel account per minute (their own class; never a credential's limit). */
  @RateFigure() RATE_LIMIT_CHANNEL_PER_MINUTE: number = 6000;

  /** A webhook whose every delivery has failed for this long is disabled. */
  @IsString()
  @Matches(/^\d+(ms|s|m|h|d)?$/, { message: 'WEBHOOK_DISABLE_AFTER must be a duration such as 259200, 12h or 3d' })
  WEBHOOK_DISABLE_AFTER: string = '72h';
}

export class ConfigError extends Error {}

let envVariableNames_: readonly string[] | undefined;

/**
 * The name of every variable of the schema: each property of EnvVars carries at least one
 * validation decorator, so the validator's metadata lists them all, optional ones (no default,
 * absent from `new EnvVars()`) included. `.env.example`, docker/compose.yml and the README's
 * configuration table are checked against this list (env.schema.spec.ts).
 */
export function envVariableNames(): readonly string[] {
  envVariableNames_ ??= [...new Set(getMetadataStorage().getTargetValidationMetadatas(EnvVars, '', true, false).map((m) => m.propertyName))];
  return envVariableNames_;
}

/** Validates raw environment values; throws a ConfigError naming every bad variable. */
export function validateEnv(raw: Record<string, string | undefined>): EnvVars {
  const input: Record<string, string> = {};
  for (const key of envVariableNames()) {
    const value = raw[key];
    if (value !== undefined && value !== '') input[key] = value;
  }
  const env = plainToInstance(EnvVars, input);
  const errors = validateSync(env, { whitelist: true, forbidUnknownValues: false });
  if (errors.length > 0) {
    const lines = errors.map((e) => `${e.property}: ${Object.values(e.constraints ?? {}).join('; ')}`);
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  return env;
}

/** `CONVERSATION_TIMEOUT` and similar durations in milliseconds. */
export function parseDuration(value: string): number {
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(value);
  if (!match) throw new ConfigError(`Not a duration: ${value}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] ?? 's'] as number;
  return Number(match[1]) * unit;
}
