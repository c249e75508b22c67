import type { ClientRequest, IncomingMessage } from 'node:http';
import type { Span } from '@opentelemetry/api';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import { redactUrl } from '../common/logging/redact-url.js';

/**
 * The query string as the request log writes it: credential parameters (`api_key`, `client_secret`,
 * Meta's `hub.verify_token`, …) replaced by [REDACTED] (redactUrl), over the instrumentation's own
 * redaction, which knows only a few cloud signatures.
 */
function redactQuery(span: Span, request: ClientRequest | IncomingMessage): void {
  if ('socket' in request && 'url' in request && typeof request.url === 'string') {
    if (request.url.includes('?')) {
      const redacted = redactUrl(request.url);
      span.setAttribute('url.query', redacted.slice(redacted.indexOf('?') + 1));
    }
    return;
  }
  const outgoing = request as ClientRequest;
  if (typeof outgoing.path === 'string' && outgoing.path.includes('?')) {
    span.setAttribute('url.full', `${outgoing.protocol}//${outgoing.host}${redactUrl(outgoing.path)}`);
  }
}

/** The instrumentations of start-tracing: inbound and outbound HTTP, Express's routing, PostgreSQL and Redis. */
export async function getNodeAutoInstrumentations(): Promise<Instrumentation[]> {
  const [{ HttpInstrumentation }, { ExpressInstrumentation }, { PgInstrumentation }, { IORedisInstrumentation }] = await Promise.all([
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-express'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-ioredis'),
  ]);
  return [
    new HttpInstrumentation({
      // Probes and scrapes would be most spans of a quiet service, each a trace of its own.
      ignoreIncomingRequestHook: (req) => /^\/(health|metrics)(\/|$|\?)/.test(req.url ?? ''),
      requestHook: redactQuery,
    }),
    new ExpressInstrumentation(),
    // Statement text only (values never: they carry message contents and tokens). Only under a span of
    // a request or a job: the relay's and the sweeps' polls would otherwise be a trace each, ten a second.
    new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true }),
    // The command's name only, never its arguments (keys and values); under a span, as for pg (Bull polls Redis).
    new IORedisInstrumentation({ dbStatementSerializer: (command) => command, requireParentSpan: true }),
  ];
}
