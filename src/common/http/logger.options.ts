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

/**
 * The application's pino options. nestjs-pino builds the one root logger from them, through
 * pino-http, which would wrap our serializers in pino's own (building the full request object,
 * every header and the remote address, before ours keep three fields): they read the raw objects.
 */
export function pinoOptions(config: Pick<AppConfig, 'logLevel'>): Options {
  return { level: config.logLevel, wrapSerializers: false, serializers: REQUEST_LOG_SERIALIZERS };
}

/**
 * Structured JSON logs, one line per request with its id; credentials never logged. The request
 * line and `req.log` come from requestLogMiddleware (mounted by createHttpApp); `useExisting`
 * has nestjs-pino bind that `req.log` to each request's async context instead of mounting
 * pino-http's middleware.
 */
export function loggerOptions(config: AppConfig): Params {
  return { pinoHttp: pinoOptions(config), useExisting: true };
}
