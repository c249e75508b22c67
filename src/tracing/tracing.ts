import { register } from 'node:module';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import { getNodeAutoInstrumentations } from './instrumentations.js';
import { enableTracing } from '../common/tracing/trace-context.js';

/**
 * The OpenTelemetry SDK, loaded only when OTEL_EXPORTER_OTLP_ENDPOINT is set (start-tracing.ts):
 * the http, express, pg and ioredis instrumentations, spans exported in batches over OTLP/HTTP
 * (JSON) to `<endpoint>/v1/traces`. The SDK reads the endpoint and the other OTEL_* variables
 * (OTEL_BSP_SCHEDULE_DELAY, OTEL_TRACES_SAMPLER, …) from the environment itself.
 */
export async function startSdk(options: { endpoint: string; serviceName: string; role: string }): Promise<void> {
  // The application is ES modules: import-in-the-middle's loader hook lets the instrumentations patch
  // modules that are `import`ed (the CommonJS ones that are `require`d are patched through require-in-the-middle).
  // Only the modules the instrumentations name are wrapped (the message channel tells the hook which).
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);

  const [{ NodeSDK, tracing }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  // Batches (OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_MAX_QUEUE_SIZE, …): a span never waits for the collector.
  const spans = new tracing.BatchSpanProcessor(new OTLPTraceExporter());
  const sdk = new NodeSDK({
    resource: resourceFromAttributes({ 'service.name': options.serviceName, 'service.role': options.role }),
    spanProcessors: [spans],
    instrumentations: await getNodeAutoInstrumentations(),
    // Traces only: no metrics (Prometheus has them, src/metrics) and no logs (pino writes them, with trace_id).
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  await waitForAllMessagesAcknowledged();
  enableTracing();
  // Spans still buffered are sent when a stop begins (closeOnSignals then exits once the application has
  // closed: spans ended during the shutdown itself may be lost) and on a natural exit. A signal that
  // comes before closeOnSignals listens (during start-up) still ends the process, as it would without us.
  for (const [signal, code] of [['SIGTERM', 143], ['SIGINT', 130]] as const) {
    process.on(signal, () => {
      const flushed = spans.forceFlush().catch(() => undefined);
      if (process.listenerCount(signal) === 1) void flushed.finally(() => process.exit(code));
    });
  }
  process.once('beforeExit', () => void sdk.shutdown().catch(() => undefined));
}
