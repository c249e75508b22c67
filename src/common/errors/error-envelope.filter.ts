import { ArgumentsHost, Catch, HttpException, Inject, Logger, Optional, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Request, Response } from 'express';
import { clientDataErrorCode, isDatabaseUnavailable } from '../../database/postgres-errors.js';
import { isRedisUnavailable } from '../../redis/redis-errors.js';
import { allowedMethods, type RouterLike } from '../http/allowed-methods.js';
import { redactUrl } from '../logging/redact-url.js';
import { PreparedResponse } from '../http/prepared-response.js';
import { InternalError, InvalidRequestError, MethodNotAllowedError, PayloadTooLargeError, RouteNotFoundError, ServiceUnavailableError } from './common.errors.js';
import { DomainError } from './domain-error.js';
import { EARLY_ANSWER_LIMITS, type EarlyAnswerCounter } from './early-answer.js';

/** Paths whose clients expect the sample pet-store envelope `{code, message}` instead of `{error}`. */
const PET_STORE_PATH = /^\/pet(\/|$)/;
/** Paths whose clients are OAuth libraries, expecting RFC 6749's `{error, error_description}` (docs/API.md, "OAuth 2.0"). */
export const OAUTH_PATH = /^\/(oauth|\.well-known)(\/|$)/;

interface BodyParserError {
  type?: string;
  status?: number;
  limit?: number;
}

/**
 * The one place where failures become HTTP responses. Domain errors are rendered as they are;
 * framework and parser errors are mapped to the specification's codes; anything else is a 500
 * carrying the request id, with the cause logged and nothing internal in the body.
 */
@Catch()
export class ErrorEnvelopeFilter implements ExceptionFilter {
  private readonly logger = new Logger('ErrorEnvelopeFilter');

  constructor(
    @Optional() private readonly adapterHost?: HttpAdapterHost,
    @Optional() @Inject(EARLY_ANSWER_LIMITS) private readonly earlyLimits?: EarlyAnswerCounter,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const req = host.switchToHttp().getRequest<Request>();
    const res = host.switchToHttp().getResponse<Response>();
    if (exception instanceof PreparedResponse) {
      if (!res.headersSent) exception.writeTo(res);
      return;
    }
    const error = this.toDomainError(exception, req);

    if (error.status >= 500 && !(error instanceof ServiceUnavailableError)) {
      this.logger.error({ err: exception, requestId: req.id, path: redactUrl(req.originalUrl) }, 'Request failed');
    }
    if (res.headersSent) return;
    // Answered before the guards (body parsers, unknown routes): counted now, with the tightest limit's headers (docs/API.md, "Rate limits").
    if (this.earlyLimits?.applies(req)) {
      void this.earlyLimits.count(req).then(
        (headers) => this.render(req, res, error, headers),
        (refusal: unknown) => this.render(req, res, refusal instanceof DomainError ? refusal : error),
      );
      return;
    }
    this.render(req, res, error);
  }

  private render(req: Request, res: Response, error: DomainError, limitHeaders?: Record<string, string>): void {
    if (res.headersSent) return;
    for (const [name, value] of Object.entries(limitHeaders ?? {})) res.setHeader(name, value);

    for (const [name, value] of Object.entries(error.extra.headers ?? {})) res.setHeader(name, value);
    if (error.extra.retryAfter !== undefined) res.setHeader('Retry-After', String(error.extra.retryAfter));
    res.status(error.status);
    if (PET_STORE_PATH.test(req.path)) {
      res.json({ code: error.status, message: error.message });
    } else if (OAUTH_PATH.test(req.path)) {
      res.setHeader('Cache-Control', 'no-store');
      res.json({ error: oauthErrorCode(error), error_description: error.message });
    } else {
      res.json({ error: error.toBody() });
    }
  }

  private toDomainError(exception: unknown, req: Request): DomainError {
    if (exception instanceof DomainError) return exception;

    // Nest wraps body-parser's errors in an HttpException; the cause tells what went wrong.
    const parserError = (exception instanceof HttpException ? exception.cause : exception) as BodyParserError | undefined;
    if (parserError?.type === 'entity.too.large') return new PayloadTooLargeError(formatBytes(parserError.limit));
    if (parserError?.type === 'entity.parse.failed') return new InvalidRequestError('The request body is not valid JSON');
    if (typeof parserError?.type === 'string' && parserError.type.endsWith('.unsupported')) {
      return new InvalidRequestError('The request body encoding is not supported');
    }

    // Defence in depth: a value validation let through and the database refused. The client gets
    // the 400 it should have had; the log names the route so that the validator can be fixed.
    const dataError = clientDataErrorCode(exception);
    if (dataError) {
      this.logger.warn({ requestId: req.id, method: req.method, route: routeOf(req), sqlState: dataError }, 'validation gap: the database refused a request value');
      return new InvalidRequestError('The request contains a value that cannot be stored');
    }

    // PostgreSQL or Redis is down or went away (a restart, a failover): the client may send the
    // same request again later. A 503 with Retry-After, never a 500 carrying a driver's message.
    if (isDatabaseUnavailable(exception) || isRedisUnavailable(exception)) {
      this.logger.warn({ requestId: req.id, method: req.method, route: routeOf(req), cause: (exception as Error).message }, 'dependency unavailable: answered 503');
      return new ServiceUnavailableError();
    }

    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status === 404) {
        // No route serves this method here; if the path has others, it is a 405, not a 404. A 404
        // thrown by the handler of a route serving this method stays a 404. (req.route cannot
        // tell: Express sets it for a HEAD matching a route without GET before falling through.)
        const allowed = allowedMethods(this.router(), req.path);
        if (allowed.length > 0 && !allowed.includes(req.method)) return new MethodNotAllowedError(req.method, allowed);
        return new RouteNotFoundError(req.method, req.path);
      }
      if (status === 413) return new PayloadTooLargeError('configured');
      if (status === 400) return new InvalidRequestError('The request is malformed');
      if (status < 500) return new DomainError(`HTTP_${status}`, status, exception.message);
    }
    return new InternalError(typeof req.id === 'string' ? req.id : undefined);
  }

  private router(): RouterLike | undefined {
    const instance = this.adapterHost?.httpAdapter?.getInstance?.() as { router?: RouterLike } | undefined;
    return instance?.router;
  }
}

/**
 * The RFC 6749 code of an error on /oauth/*: OAuth errors carry theirs (lower case); the shared
 * mechanisms' malformed, oversized or mistyped bodies are `invalid_request`; the rest their code in lower case.
 */
function oauthErrorCode(error: DomainError): string {
  if (/^[a-z_]+$/.test(error.code)) return error.code;
  if (error.status === 400 || error.status === 413 || error.status === 415) return 'invalid_request';
  if (error.status === 503) return 'temporarily_unavailable';
  if (error.status >= 500) return 'server_error';
  return error.code.toLowerCase();
}

/** The route's pattern (`/v1/workflows/:id`) when Express matched one, else the path. */
function routeOf(req: Request): string {
  const pattern = (req.route as { path?: unknown } | undefined)?.path;
  return typeof pattern === 'string' ? pattern : req.path;
}

function formatBytes(limit: number | undefined): string {
  if (!limit) return 'configured';
  return limit % 1024 === 0 ? `${limit / 1024} KiB` : `${limit} bytes`;
}
