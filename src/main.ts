import 'reflect-metadata';
import { createHttpApp, createWorkerContext } from './app.factory.js';
import { AppConfig } from './config/app-config.js';
import { ConfigError } from './config/env.schema.js';
import { prepareDatabase } from './database/prepare-database.js';

async function main(): Promise<void> {
  const config = AppConfig.fromEnv();
  await prepareDatabase(config);
  if (config.servesHttp) {
    const app = await createHttpApp(config);
    await app.listen(config.port);
  } else {
    await createWorkerContext(config);
  }
}

main().catch((error: unknown) => {
  // Before the logger exists: one plain line, no stack for a configuration mistake.
  process.stderr.write(error instanceof ConfigError ? `${error.message}\n` : `Start-up failed: ${(error as Error)?.stack ?? String(error)}\n`);
  process.exit(1);
});
