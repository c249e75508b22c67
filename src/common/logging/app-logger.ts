import { Global, Injectable, Module, type DynamicModule, type LoggerService } from '@nestjs/common';
import type { Level, Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import type { AppConfig } from '../../config/app-config.js';
import { pinoOptions } from '../http/logger.options.js';

/** The one root pino logger of the process (the request log's children derive from it). */
export abstract class RootLogger {
  abstract readonly logger: Logger;
}

/**
 * Nest's LoggerService over the root pino logger: `new Logger('Context').log(message)` anywhere in
 * the service becomes one JSON line `{"level":30,"context":"Context","msg":"message",…}`, and an
 * error with a stack becomes `err`. The same lines nestjs-pino's `Logger` wrote, without the package
 * (its releases for Nest 12 require Node 22; see docs/DECISIONS.md, "Platform and HTTP", "Configuration surface and Node 20").
 */
@Injectable()
export class AppLogger implements LoggerService {
  constructor(private readonly root: RootLogger) {}

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  /** Nest passes the context last; `error(message, stack, context)` carries a stack before it. */
  private write(level: Level, message: unknown, params: unknown[]): void {
    const logger = this.root.logger;
    if (!logger.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = {};
    let rest = params;
    if (params.length > 0) {
      fields.context = params[params.length - 1];
      rest = params.slice(0, -1);
    }
    if (message instanceof Error) {
      logger[level]({ ...fields, err: message }, ...(rest as []));
    } else if (typeof message === 'object' && message !== null) {
      logger[level]({ ...fields, ...message }, ...(rest as []));
    } else if (level === 'error' && typeof message === 'string' && rest.length === 1 && typeof rest[0] === 'string' && /\n\s*at /.test(rest[0])) {
      // Nest's exception handlers call error(message, stack[, context]).
      const err = new Error(message);
      err.stack = rest[0];
      logger.error({ ...fields, err });
    } else {
      logger[level](fields, String(message), ...(rest as []));
    }
  }
}

/** Provides RootLogger and AppLogger to the whole application. */
@Global()
@Module({})
export class LoggingModule {
  static forRoot(config: Pick<AppConfig, 'logLevel'>): DynamicModule {
    // pino-http's factory builds the logger exactly as the request log's tests do (its options, our serializers).
    const logger = pinoHttp(pinoOptions(config)).logger;
    return {
      module: LoggingModule,
      providers: [{ provide: RootLogger, useValue: { logger } }, AppLogger],
      exports: [RootLogger, AppLogger],
    };
  }
}
