import type { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';
import type { AppConfig } from '../config/app-config.js';
import { ENTITIES } from './entities.js';

/** One set of options for the Nest app, the CLI, the tests and the TypeORM CLI. */
export function dataSourceOptions(config: Pick<AppConfig, 'databaseUrl'>): DataSourceOptions {
  return {
    type: 'postgres',
    url: config.databaseUrl,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    uuidExtension: 'pgcrypto',
    installExtensions: false,
    // JIT off for the service's connections: its statements are short, and a plan whose estimated cost
    // crosses jit_above_cost (a year of metrics, a large count) spent more compiling than it saved.
    extra: { max: 20, connectionTimeoutMillis: 5000, idleTimeoutMillis: 30000, options: '-c jit=off' },
  };
}
