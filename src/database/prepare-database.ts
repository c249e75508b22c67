import { Client } from 'pg';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { dataSourceOptions } from './data-source.options.js';

/** Creates the database named in DATABASE_URL when it is missing. */
export async function ensureDatabaseExists(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!name) throw new Error('DATABASE_URL names no database');
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString(), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
      } catch (error) {
        // Another process created it between the check and the create.
        if ((error as { code?: string }).code !== '42P04') throw error;
      }
    }
  } finally {
    await client.end();
  }
}

/** Start-up step shared by the server, the CLI and the tests: database present, migrations applied. */
export async function prepareDatabase(config: Pick<AppConfig, 'databaseUrl'>): Promise<void> {
  await ensureDatabaseExists(config.databaseUrl);
  // Without the service's statement timeout: a migration may rewrite a large table.
  const dataSource = new DataSource(dataSourceOptions({ databaseUrl: config.databaseUrl }));
  await dataSource.initialize();
  // Serialises concurrent starts (api and worker booting together) on a session-level advisory
  // lock, held on a connection of its own while the migrations run on others.
  const lock = dataSource.createQueryRunner();
  try {
    await lock.connect();
    await lock.query('SELECT pg_advisory_lock(727001)');
    try {
      await dataSource.runMigrations({ transaction: 'each' });
    } finally {
      await lock.query('SELECT pg_advisory_unlock(727001)');
    }
  } finally {
    await lock.release();
    await dataSource.destroy();
  }
}
