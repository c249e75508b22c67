import type { Params } from 'nestjs-pino';
import { stdSerializers } from 'pino';
import type { Options } from 'pino-http';
import type { AppConfig } from '../../config/app-config.js';

interface LoggedRequest {
  id: string;
  method: string;
  url: string;
  originalUrl?: string;
}

/**
 * What a log line says about a request: an allow-list of three fields, so no header (the
 * Authorization credential, cookies, webhook signatures) can ever reach a log. That is also why
 * there is no `redact`: it ran on every request's logger and could never match anything.
 */
export const REQUEST_LOG_SERIALIZERS = {
  req: (req: LoggedRequest) => ({ id: req.id, method: req.method, url: req.originalUrl ?? req.url }),
  res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
  err: stdSerializers.err,
};

/** pino-http's options: one JSON line per request with its id, at info for 2xx/3xx, warn for 4xx, error for 5xx. */
export function pinoHttpOptions(config: Pick<AppConfig, 'logLevel'>): Options {
  return {
    level: config.logLevel,
    genReqId: (req) => (req.id as string) ?? 'unknown',
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
    autoLogging: { ignore: (req) => req.url === '/health/live' || req.url === '/health/ready' || req.url === '/metrics' },
    // Our serializers read the raw objects. Wrapped (the default), pino-http would first build
    // pino's full request object (every header, the remote address) for each request, only for
    // ours to keep three fields of it.
    wrapSerializers: false,
    serializers: REQUEST_LOG_SERIALIZERS,
  };
}

/** Structured JSON logs, one line per request with its id; credentials never logged. */
export function loggerOptions(config: AppConfig): Params {
  return { pinoHttp: pinoHttpOptions(config) };
}
