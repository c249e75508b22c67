import { NestFactory, Reflector } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { INestApplicationContext } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger, PinoLogger } from 'nestjs-pino';
import { AppModule } from './app.module.js';
import { PUBLIC } from './auth/decorators/access.decorators.js';
import { NO_RATE_LIMIT } from './rate-limits/rate-limit.decorators.js';
import { ErrorEnvelopeDto } from './common/http/api-docs.js';
import { postProcessOpenApi } from './common/http/openapi/post-process.js';
import { collectRouteFacts } from './common/http/openapi/routes.js';
import { bodyMediaTypeMiddleware, JSON_MEDIA_TYPES, storableInputMiddleware, type BodyMediaRule } from './common/http/input-guard.middleware.js';
import { requestIdMiddleware } from './common/http/request-id.middleware.js';
import { requestLogMiddleware } from './common/http/request-log.middleware.js';
import type { AppConfig } from './config/app-config.js';
import { metricsMiddleware } from './metrics/metrics.middleware.js';
import { PetErrorResponse } from './pets/dto/pet.dto.js';
import { OAuthErrorResponse } from './auth/oauth/dto/oauth.responses.js';
import { OAUTH_PATH } from './common/errors/error-envelope.filter.js';

export const BODY_LIMIT = '1mb';

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
];

/** The HTTP application, configured identically for `npm start`, the e2e tests and the benchmarks. */
export async function createHttpApp(config: AppConfig): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), { bufferLogs: true, bodyParser: false, rawBody: true });
  app.useLogger(app.get(Logger));
  app.disable('x-powered-by');
  // Express would hash every JSON body (SHA-1) to offer an ETag. API clients do not send
  // If-None-Match, and a 304 still costs the whole query and serialisation, so it is pure overhead.
  app.set('etag', false);
  // Before the body parsers, so that a request refused while parsing still has an id and a log line.
  app.use(requestIdMiddleware);
  // Outside a request, PinoLogger's logger is the application's root pino logger.
  app.use(requestLogMiddleware((await app.resolve<PinoLogger>(PinoLogger)).logger));
  app.use(metricsMiddleware);
  // Before the parsers: a body of a type the route does not take is 415, unparsed.
  app.use(bodyMediaTypeMiddleware(BODY_MEDIA_RULES));
  app.useBodyParser('json', { limit: BODY_LIMIT, type: ['application/json', 'application/*+json'] });
  app.useBodyParser('urlencoded', { limit: BODY_LIMIT, extended: false });
  // Inbound webhooks may send any text; their signature covers the raw bytes (req.rawBody).
  app.useBodyParser('text', { limit: BODY_LIMIT, type: 'text/*' });
  // After the parsers, before routing: NUL, lone surrogates and over-deep nesting are 400 for every route.
  app.use(storableInputMiddleware);
  app.enableShutdownHooks();
  setupOpenApi(app, config);
  return app;
}

/** A process without HTTP that runs the queue processors (APP_ROLE=worker). */
export async function createWorkerContext(config: AppConfig): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(AppModule.forRoot(config), { bufferLogs: true });
  app.useLogger(app.get(Logger));
  app.enableShutdownHooks();
  return app;
}

function setupOpenApi(app: NestExpressApplication, config: AppConfig): void {
  const generated = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Workflow Automation Service')
      .setDescription('Conversational workflows, triggers, executions, analytics and signed webhooks. Every `/v1` route takes `Authorization: Bearer <API key | OAuth token | JWT>`.')
      .setVersion('1')
      .addServer(config.publicBaseUrl)
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
    // The sample pet store keeps its own `{code, message}` envelope (DESIGN §11).
    // The OAuth endpoints answer RFC 6749's `{error, error_description}` (DESIGN §4).
    errorSchema: (path) => ({ $ref: `#/components/schemas/${path.startsWith('/pet') ? PetErrorResponse.name : OAUTH_PATH.test(path) ? OAuthErrorResponse.name : ErrorEnvelopeDto.name}` }),
  });
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'openapi.json', yamlDocumentUrl: 'openapi.yaml' });
}
