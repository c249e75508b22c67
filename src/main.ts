import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { closeOnSignals, createHttpApp, createWorkerContext } from './app.factory.js';
import { AppConfig } from './config/app-config.js';
import { ConfigError } from './config/env.schema.js';
import { checkReachable } from './config/reachability.js';
import { prepareDatabase } from './database/prepare-database.js';

async function main(): Promise<void> {
  const config = AppConfig.fromEnv();
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
