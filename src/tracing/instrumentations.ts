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
    // Statement text only (values never: they carry message contents and tokens).
    new PgInstrumentation({ enhancedDatabaseReporting: false }),
    // Commands without their arguments (the default serializer keeps only the command name's arguments it knows are safe; none here).
    new IORedisInstrumentation({ dbStatementSerializer: (command) => command }),
  ];
}
