import 'reflect-metadata';
import { AppConfig } from './config/app-config.js';
import { ConfigError } from './config/env.schema.js';
import { startTracing } from './tracing/start-tracing.js';

async function main(): Promise<void> {
  const config = AppConfig.fromEnv();
  // --- Tracing: started (OTEL_EXPORTER_OTLP_ENDPOINT) before any module that loads http, express, pg or
  // ioredis, which are imported below only once it has, so that its instrumentations patch them.
  await startTracing(config);
  const [{ Logger }, { closeOnSignals, createHttpApp, createWorkerContext }, { checkReachable }, { prepareDatabase }] = await Promise.all([
    import('@nestjs/common'),
    import('./app.factory.js'),
    import('./config/reachability.js'),
    import('./database/prepare-database.js'),
  ]);
  // --- end of tracing's start-up
  await checkReachable(config);
  await prepareDatabase(config);
  if (config.servesHttp) {
    const app = await createHttpApp(config);
    closeOnSignals(app, config);
    await app.listen(config.port);
    new Logger('Main').log(`listening on http://localhost:${config.port} (APP_ROLE=${config.role}, public base URL ${config.publicBaseUrl})`);
  } else {
    closeOnSignals(await createWorkerContext(config), config);
  }
}

main().catch((error: unknown) => {
  // Before the logger exists: one plain line, no stack for a configuration mistake.
  process.stderr.write(error instanceof ConfigError ? `${error.message}\n` : `Start-up failed: ${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
