import { stdSerializers } from 'pino';
import type { Options } from 'pino-http';
import type { AppConfig } from '../../config/app-config.js';
import { redactUrl } from '../logging/redact-url.js';
import { traceLogFields, tracingEnabled } from '../tracing/trace-context.js';

interface LoggedRequest {
  id: string;
  method: string;
  url: string;
  originalUrl?: string;
}

/**
 * What a log line says about a request: an allow-list of three fields, so no header (the
 * Authorization credential, Proxy-Authorization, cookies, X-Api-Key, webhook signatures) can ever
 * reach a log, and the URL with the values of credential query parameters (`api_key`,
 * `client_secret`, ...) replaced by `[REDACTED]` (redactUrl). That is also why there is no pino
 * `redact`: it ran on every request's logger and could never match anything.
 */
export const REQUEST_LOG_SERIALIZERS = {
  req: (req: LoggedRequest) => ({ id: req.id, method: req.method, url: redactUrl(req.originalUrl ?? req.url) }),
  res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
  err: stdSerializers.err,
};

/**
 * The application's pino options. LoggingModule builds the one root logger from them, through
 * pino-http, which would wrap our serializers in pino's own (building the full request object,
 * every header and the remote address, before ours keep three fields): they read the raw objects.
 * The request line and `req.log` come from requestLogMiddleware (mounted by createHttpApp); no
 * per-request async context (AsyncLocalStorage turns on promise hooks for the whole process on
 * Node 20, measured at about a tenth of the CPU of a simple read). Logs written while serving a
 * request therefore come from the application logger; those that matter name what they are about
 * (the error filter logs the request id, the path and the cause).
 */
export function pinoOptions(config: Pick<AppConfig, 'logLevel'>): Options {
  return {
    level: config.logLevel,
    wrapSerializers: false,
    serializers: REQUEST_LOG_SERIALIZERS,
    // With traces on (OTEL_EXPORTER_OTLP_ENDPOINT), each line written under an active span carries its
    // `trace_id` and `span_id`; with them off there is no mixin at all.
    ...(tracingEnabled() ? { mixin: traceLogFields } : {}),
  };
}
