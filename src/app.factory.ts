import { Logger as NestLogger } from '@nestjs/common';
import { NestFactory, Reflector } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { INestApplicationContext } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import express from 'express';
import type { Server } from 'node:http';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { AppLogger, RootLogger } from './common/logging/app-logger.js';
import { AppModule } from './app.module.js';
import { PUBLIC } from './auth/decorators/access.decorators.js';
import { NO_RATE_LIMIT } from './rate-limits/rate-limit.decorators.js';
import { ErrorEnvelopeDto } from './common/http/api-docs.js';
import { postProcessOpenApi } from './common/http/openapi/post-process.js';
import { collectRouteFacts } from './common/http/openapi/routes.js';
import { bodyMediaTypeMiddleware, JSON_MEDIA_TYPES, storableInputMiddleware, type BodyMediaRule } from './common/http/input-guard.middleware.js';
import { ExpressHttpAdapter } from './common/http/express-http-adapter.js';
import { corsMiddleware } from './common/http/cors.middleware.js';
import { consoleMiddleware } from './console/console.middleware.js';
import { middlewareChain } from './common/http/middleware-chain.js';
import { HttpDrain } from './common/http/http-drain.js';
import { requestIdMiddleware } from './common/http/request-id.middleware.js';
import { requestLogMiddleware } from './common/http/request-log.middleware.js';
import { securityHeadersMiddleware } from './common/http/security-headers.middleware.js';
import type { AppConfig } from './config/app-config.js';
import { metricsMiddleware } from './metrics/metrics.middleware.js';
import { PetErrorResponse } from './pets/dto/pet.dto.js';
import { OAuthErrorResponse } from './auth/oauth/dto/oauth.responses.js';
import { OAUTH_PATH } from './common/errors/error-envelope.filter.js';

export const BODY_LIMIT = '1mb';

/**
 * Channel accounts' provider webhooks and Twilio's call requests: the body stays raw bytes (req.rawBody)
 * for the signature check, parsed only after it (a call's form parameters are signed as posted).
 */
const RAW_BODY_ROUTE = /^\/v1\/channel-accounts\/[^/]+\/(webhook|voice)\/?$/;

/**
 * The routes whose body is not JSON (every other route takes `application/json` or `+json` only,
 * else 415). Beside the parsers below, which must be able to read each type listed.
 */
export const BODY_MEDIA_RULES: readonly BodyMediaRule[] = [
  // The sample pet store adds pets from a form (and, as its sample does, from JSON).
  { path: /^\/pet\/?$/, methods: ['POST'], accepts: ['application/x-www-form-urlencoded', ...JSON_MEDIA_TYPES] },
  // The OAuth endpoints take forms (RFC 6749 §4.1.3, RFC 7009, RFC 7662; the consent page posts one).
  { path: /^\/oauth\/(authorize|token|revoke|introspect)\/?$/, methods: ['POST'], accepts: ['application/x-www-form-urlencoded'] },
  // Inbound webhooks: whatever text a sender posts, signed over its raw bytes.
  { path: /^\/v1\/hooks\/[^/]+\/?$/, accepts: [...JSON_MEDIA_TYPES, 'text/*'] },
  // Provider webhooks and call requests: any body, kept as raw bytes until the signature is checked (an unsigned one is 401, or 403 for a call, whatever its type).
  { path: RAW_BODY_ROUTE, methods: ['POST'], accepts: ['*/*'] },
];

/** The HTTP application, configured identically for `npm start`, the e2e tests and the benchmarks. */
export async function createHttpApp(config: AppConfig): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), new ExpressHttpAdapter(), {
    bufferLogs: true,
    bodyParser: false,
    rawBody: true,
  });
  app.useLogger(app.get(AppLogger));
  app.disable('x-powered-by');
  // Express would hash every JSON body (SHA-1) to offer an ETag. API clients do not send
  // If-None-Match, and a 304 still costs the whole query and serialisation, so it is pure overhead.
  app.set('etag', false);
  // TRUST_PROXY: which proxies' X-Forwarded-For names the client (`req.ip`, counted by the per-address limits); off by default.
  app.set('trust proxy', config.trustProxy);
  const drain = new HttpDrain();
  drains.set(app, drain);
  const cors = corsMiddleware(config.corsOrigins);
  // Every middleware before the routes, in this order, as one Express layer (see middlewareChain).
  app.use(
    middlewareChain([
      // Before the body parsers, so that a request refused while parsing still has an id and a log line.
      requestIdMiddleware,
      // nosniff on every answer, HSTS when PUBLIC_BASE_URL is https, no framing of /docs.
      securityHeadersMiddleware(config.publicBaseUrl),
      // Answers 503 with Connection: close once SIGTERM has come (closeOnSignals).
      drain.middleware,
      requestLogMiddleware(app.get(RootLogger).logger),
      metricsMiddleware,
      // Before the body checks: a preflight is answered here (CORS_ORIGINS).
      ...(cors ? [cors] : []),
      // The console's static files under /console (its own CSP); every other path goes on.
      consoleMiddleware(),
      // Before the parsers: a body of a type the route does not take is 415, unparsed.
      bodyMediaTypeMiddleware(BODY_MEDIA_RULES),
      bodyParsers(app),
      // After the parsers, before routing: NUL, lone surrogates and over-deep nesting are 400 for every route.
      storableInputMiddleware,
    ]),
  );
  setupOpenApi(app, config);
  // HTTP_KEEP_ALIVE_TIMEOUT: idle keep-alive connections outlive the proxy's (Node closes them after 5 s by default, and
  // a proxy that reuses one as it closes answers 502). Node's 60 s for a request's headers stays: since Node 18 it
  // counts from a request's first byte, not over an idle connection.
  (app.getHttpServer() as Server).keepAliveTimeout = config.keepAliveTimeoutMs;
  return app;
}

/**
 * The body parsers, as Nest builds them (`rawBody` kept for the inbound webhooks' signatures), for
 * middlewareChain: app.useBodyParser mounts each as a layer of its own through the adapter's
 * `use`, which is borrowed here to collect them instead.
 */
function bodyParsers(app: NestExpressApplication): RequestHandler {
  const adapter = app.getHttpAdapter() as unknown as { use(handler: RequestHandler): unknown };
  const parsers: RequestHandler[] = [];
  adapter.use = (handler: RequestHandler) => parsers.push(handler);
  try {
    app.useBodyParser('json', { limit: BODY_LIMIT, type: ['application/json', 'application/*+json'] });
    app.useBodyParser('urlencoded', { limit: BODY_LIMIT, extended: false });
    // Inbound webhooks may send any text; their signature covers the raw bytes (req.rawBody).
    app.useBodyParser('text', { limit: BODY_LIMIT, type: 'text/*' });
  } finally {
    delete (adapter as { use?: unknown }).use;
  }
  if (parsers.length !== 3) throw new Error(`expected 3 body parsers from useBodyParser, got ${parsers.length}`);
  const parseBody = middlewareChain(parsers);
  const readRaw = express.raw({ limit: BODY_LIMIT, type: () => true });
  const keepRaw: RequestHandler = (req, res, next) =>
    readRaw(req, res, (error?: unknown) => {
      if (error) return next(error);
      (req as Request & { rawBody?: Buffer }).rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      req.body = undefined;
      next();
    });
  // Most requests (every GET) have no body: each parser would only find that out, in turn (and
  // call `debug` with its arguments). type-is's hasBody, which each parser asks first; like them,
  // a request without a body gets `req.body` undefined.
  return function bodyParsers(req: Request, res: Response, next: NextFunction): void {
    if (req.headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(req.headers['content-length']))) {
      if (req.method === 'POST' && RAW_BODY_ROUTE.test(req.path)) void keepRaw(req, res, next);
      else void parseBody(req, res, next);
      return;
    }
    if (!Reflect.has(req, 'body')) req.body = undefined;
    next();
  };
}

/** A process without HTTP that runs the queue processors (APP_ROLE=worker). */
export async function createWorkerContext(config: AppConfig): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config), { bufferLogs: true });
  app.useLogger(app.get(AppLogger));
  return app;
}

const drains = new WeakMap<NestExpressApplication, HttpDrain>();

/**
 * SIGTERM (or SIGINT) stops the process gracefully and exits 0: the HTTP server stops accepting
 * and lets the requests in flight finish (SHUTDOWN_TIMEOUT), then the application closes — the
 * queue processors finish or hand back their jobs, then Redis and PostgreSQL connections close.
 * A shutdown still not done SHUTDOWN_TIMEOUT x 2 + 2 s later exits 1.
 */
export function closeOnSignals(app: INestApplicationContext, config: AppConfig): void {
  const logger = new NestLogger('Shutdown');
  let closing = false;
  const close = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.log(`${signal}: shutting down`);
    setTimeout(() => {
      logger.error(`Still shutting down ${2 * config.shutdownTimeoutMs + 2000} ms after ${signal}: exiting`);
      process.exit(1);
    }, 2 * config.shutdownTimeoutMs + 2000).unref();
    try {
      const drain = drains.get(app as NestExpressApplication);
      if (drain && !(await drain.drain((app as NestExpressApplication).getHttpServer(), config.shutdownTimeoutMs))) {
        logger.warn(`Requests still running after ${config.shutdownTimeoutMs} ms were cut off`);
      }
      await app.close();
      logger.log('Shut down');
      process.exit(0);
    } catch (error) {
      logger.error(`Shutdown failed: ${(error as Error).message}`);
      process.exit(1);
    }
  };
  for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, (s: string) => void close(s));
}

function setupOpenApi(app: NestExpressApplication, config: AppConfig): void {
  const generated = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Workflow Automation Service')
      .setDescription('Conversational workflows, triggers, executions, analytics and signed webhooks. Every `/v1` route takes `Authorization: Bearer <API key | OAuth token | JWT>`.')
      .setVersion('1')
      // Relative: the explorer at /docs calls the origin it was loaded from (PUBLIC_BASE_URL may name
      // another host, which would make every call cross-origin); clients resolve it against the document's URL.
      .addServer('/', 'This server: the address the document was fetched from')
      // One line per controller tag (a tag without a description is a lint warning).
      .addTag('API keys', 'Credentials of the organization (Full Access)')
      .addTag('OAuth clients', 'Applications that obtain OAuth 2.0 access tokens for the organization\'s users (Full Access)')
      .addTag('OAuth 2.0', 'The authorization server outside /v1: authorization code flow with PKCE, tokens, revocation, introspection, discovery')
      .addTag('JWT clients', 'Server-to-server clients: registered public keys whose signed JWTs are credentials (Full Access)')
      .addTag('Authentication', 'Who the caller is')
      .addTag('Workflows', 'Conversational workflows, their node graphs and executions')
      .addTag('Triggers', 'What starts a workflow: message, schedule, webhook and api triggers, their executions, and the api trigger\'s fire')
      .addTag('Inbound', 'Where workflows are started from outside: inbound messages and webhooks (api triggers fire under Triggers)')
      .addTag('Customers', 'Customers met on the channels, and their messages')
      .addTag('Knowledge bases', 'Question and answer entries the ai_response node answers from')
      .addTag('Channel accounts', 'WhatsApp numbers, Instagram accounts and phone lines the service talks through: sealed credentials, the webhook URL to paste into the provider\'s console')
      .addTag('Webhooks', 'Outbound webhooks: subscriptions, signed deliveries with retries, delivery logs')
      .addTag('Analytics', 'Figures computed from what the service recorded: workflow metrics, performance, engagement, journeys, realtime, reports and exports')
      .addTag('Operations', 'Health probes')
      .addTag('Pets (sample)', 'The sample pet store: no credential, its own envelope')
      .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'API key, OAuth 2.0 access token or JWT' }, 'bearer')
      .build(),
    { extraModels: [ErrorEnvelopeDto, PetErrorResponse, OAuthErrorResponse] },
  );
  // package.json: UNLICENSED (proprietary); a license object needs a name only.
  generated.info.license = { name: 'Proprietary' };
  const reflector = new Reflector();
  const document = postProcessOpenApi(generated, {
    routes: collectRouteFacts(
      app,
      (handler, controller) => reflector.getAllAndOverride(PUBLIC, [handler, controller]) === true,
      // With RATE_LIMITS_ENABLED=false the document still describes the limits a deployment has.
      (handler, controller) => reflector.getAllAndOverride(NO_RATE_LIMIT, [handler, controller]) === undefined,
    ),
    bearerScheme: 'bearer',
    // The sample pet store keeps its own `{code, message}` envelope (docs/API.md, "Errors").
    // The OAuth endpoints answer RFC 6749's `{error, error_description}` (docs/API.md, "OAuth 2.0").
    errorSchema: (path) => ({ $ref: `#/components/schemas/${path.startsWith('/pet') ? PetErrorResponse.name : OAUTH_PATH.test(path) ? OAuthErrorResponse.name : ErrorEnvelopeDto.name}` }),
  });
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'openapi.json', yamlDocumentUrl: 'openapi.yaml' });
}
