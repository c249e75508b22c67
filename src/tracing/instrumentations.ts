import type { Instrumentation } from '@opentelemetry/instrumentation';

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
    }),
    new ExpressInstrumentation(),
    // Statement text only (values never: they carry message contents and tokens). Only under a span of
    // a request or a job: the relay's and the sweeps' polls would otherwise be a trace each, ten a second.
    new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true }),
    // The command's name only, never its arguments (keys and values); under a span, as for pg (Bull polls Redis).
    new IORedisInstrumentation({ dbStatementSerializer: (command) => command, requireParentSpan: true }),
  ];
}
