import type { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';
import type { AppConfig } from '../config/app-config.js';
import { ENTITIES } from './entities.js';

/**
 * One set of options for the Nest app, the CLI, the tests and the TypeORM CLI. With `database`
 * (the service's own pools), DATABASE_CONNECT_TIMEOUT and DATABASE_STATEMENT_TIMEOUT apply:
 * a request fails fast (503) while PostgreSQL is down instead of waiting on it; migrations,
 * which may rewrite large tables, are run without them.
 */
export function dataSourceOptions(config: Pick<AppConfig, 'databaseUrl'> & Partial<Pick<AppConfig, 'database' | 'role'>>): DataSourceOptions {
  const connectTimeoutMs = config.database?.connectTimeoutMs ?? 5000;
  const statementTimeout = config.database?.statementTimeoutMs ? ` -c statement_timeout=${config.database.statementTimeoutMs}` : '';
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
    // pg_stat_activity's application_name: which process role holds a connection.
    applicationName: config.role ? `workflow-automation-service ${config.role}` : 'workflow-automation-service',
    // JIT off for the service's connections: its statements are short, and a plan whose estimated cost
    // crosses jit_above_cost (a year of metrics, a large count) spent more compiling than it saved.
    // Connections above DATABASE_POOL_MIN close after 30 s idle; those up to it stay open (PoolWarmup).
    extra: { max: 20, min: config.database?.poolMin ?? 0, connectionTimeoutMillis: connectTimeoutMs, idleTimeoutMillis: 30000, options: `-c jit=off${statementTimeout}` },
  };
}
