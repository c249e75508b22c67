import type { AppConfig } from '../config/app-config.js';

/**
 * Starts OpenTelemetry when OTEL_EXPORTER_OTLP_ENDPOINT is set, before the application's modules
 * load (src/main.ts imports them only after this resolves): auto-instrumentation patches `http`,
 * `express`, `pg` and `ioredis` as they are first imported, so they must not be loaded yet. With
 * the variable unset nothing of the SDK is imported; spans made through `@opentelemetry/api`
 * (src/common/tracing/trace-context.ts) are then not even created.
 */
export async function startTracing(config: Pick<AppConfig, 'tracing' | 'role'>): Promise<void> {
  const { endpoint, serviceName } = config.tracing;
  if (!endpoint) return;
  const { startSdk } = await import('./tracing.js');
  await startSdk({ endpoint, serviceName, role: config.role });
}
