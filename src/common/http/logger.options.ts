import type { Params } from 'nestjs-pino';
import type { AppConfig } from '../../config/app-config.js';

/** Structured JSON logs, one line per request with its id; credentials never logged. */
export function loggerOptions(config: AppConfig): Params {
  return {
    pinoHttp: {
      level: config.logLevel,
      genReqId: (req) => (req.id as string) ?? 'unknown',
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-service-signature"]', 'req.headers.api_key'], remove: true },
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
      autoLogging: { ignore: (req) => req.url === '/health/live' || req.url === '/health/ready' || req.url === '/metrics' },
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    },
  };
}
