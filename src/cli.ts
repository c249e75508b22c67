import 'reflect-metadata';
import { Module, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { parseArgs } from 'node:util';
import { PERMISSION_LEVELS, type PermissionLevel } from './auth/access.js';
import { ApiKeysService } from './auth/api-keys/api-keys.service.js';
import { AuthModule } from './auth/auth.module.js';
import { formatExecutionRetention, parseExecutionRetention } from './auth/organizations/execution-retention.js';
import { OrganizationsService } from './auth/organizations/organizations.service.js';
import { UsersService } from './auth/users/users.service.js';
import { CryptoModule } from './common/crypto/crypto.module.js';
import { isUuid } from './common/ids/uuid.js';
import { DomainError } from './common/errors/domain-error.js';
import { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { ConfigError } from './config/env.schema.js';
import { dataSourceOptions } from './database/data-source.options.js';
import { prepareDatabase } from './database/prepare-database.js';
// org:limits (per-organization rate limits)
import { ORG_LIMITS_COMMAND, ORG_LIMITS_OPTIONS, ORG_LIMITS_USAGE, parseOrganizationLimits } from './rate-limits/organization-limits.cli.js';
import { OrganizationLimitsStore } from './rate-limits/organization-limits.js';
import { RedisModule } from './redis/redis.module.js';

const USAGE = `Usage:
  npm run cli -- org:create --name <name>
  npm run cli -- api-key:create --org <organization id> --name <name> --level read_only|read_write|full_access
  npm run cli -- user:create --org <organization id> --email <email> --password <password>
${ORG_LIMITS_USAGE}
  npm run cli -- org:settings --org <organization id> --execution-retention <duration such as 30d>|off|default`;

class UsageError extends Error {}

@Module({})
class CliModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CliModule,
      imports: [ConfigModule.forRoot(config), TypeOrmModule.forRoot(dataSourceOptions(config)), RedisModule, CryptoModule, AuthModule],
    };
  }
}

function required(values: Record<string, string | undefined>, name: string): string {
  const value = values[name];
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

async function run(argv: string[]): Promise<object> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' },
      org: { type: 'string' },
      level: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      'execution-retention': { type: 'string' },
      ...(command === ORG_LIMITS_COMMAND ? ORG_LIMITS_OPTIONS : {}),
    },
    strict: true,
  });
  if (!['org:create', 'api-key:create', 'user:create', 'org:settings', ORG_LIMITS_COMMAND].includes(command ?? '')) throw new UsageError(`Unknown command ${command ?? '(none)'}`);
  // org:limits: the figures are checked before anything is opened.
  const limits = command === ORG_LIMITS_COMMAND ? parseOrganizationLimits(values, (message) => new UsageError(message)) : undefined;

  const config = AppConfig.fromEnv();
  await prepareDatabase(config);
  const app = await NestFactory.createApplicationContext(CliModule.forRoot(config), { logger: false });
  try {
    const organizations = app.get(OrganizationsService);
    const apiKeys = app.get(ApiKeysService);
    const organizationOf = async (id: string) => {
      if (!isUuid(id) || !(await organizations.findById(id))) throw new UsageError(`No organization ${id}`);
      return id;
    };
    switch (command) {
      case 'org:create': {
        const organization = await organizations.create(required(values, 'name'));
        const { key } = await apiKeys.create(organization.id, 'Initial key', 'full_access');
        return { organization_id: organization.id, api_key: key };
      }
      case 'api-key:create': {
        const level = required(values, 'level');
        if (!(PERMISSION_LEVELS as readonly string[]).includes(level)) throw new UsageError(`--level must be one of ${PERMISSION_LEVELS.join(', ')}`);
        const orgId = await organizationOf(required(values, 'org'));
        const { apiKey, key } = await apiKeys.create(orgId, required(values, 'name'), level as PermissionLevel);
        return { id: apiKey.id, key };
      }
      case ORG_LIMITS_COMMAND: {
        const orgId = await organizationOf(required(values, 'org'));
        const store = app.get(OrganizationLimitsStore);
        if (!limits || (!limits.reset && Object.keys(limits.change).length === 0)) return { organization_id: orgId, limits: await store.read(orgId) };
        const { limits: now, published } = await store.change(orgId, limits.change, limits.reset);
        if (!published) process.stderr.write('Saved; Redis could not be told, so the API processes apply it on their next periodic read\n');
        return { organization_id: orgId, limits: now };
      }
      // Execution data retention: the organization's override of EXECUTION_RETENTION.
      case 'org:settings': {
        const orgId = await organizationOf(required(values, 'org'));
        const retention = parseExecutionRetention(required(values, 'execution-retention'));
        if (retention === undefined) throw new UsageError('--execution-retention must be a duration of at least 1d (such as 30d), off or default');
        await organizations.setExecutionRetention(orgId, retention);
        const organization = await organizations.findById(orgId);
        return { organization_id: orgId, execution_retention: formatExecutionRetention(organization?.executionRetentionMs ?? null) };
      }
      default: {
        const orgId = await organizationOf(required(values, 'org'));
        const user = await app.get(UsersService).create(orgId, required(values, 'email'), required(values, 'password'));
        return { id: user.id };
      }
    }
  } finally {
    await app.close();
  }
}

run(process.argv.slice(2)).then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    const known = error instanceof UsageError || error instanceof ConfigError || error instanceof DomainError || ['ERR_PARSE_ARGS_UNKNOWN_OPTION', 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE'].includes((error as { code?: string })?.code ?? '');
    process.stderr.write(`${known ? (error as Error).message : `Failed: ${(error as Error)?.stack ?? String(error)}`}\n`);
    if (error instanceof UsageError) process.stderr.write(`${USAGE}\n`);
    process.exit(error instanceof UsageError ? 2 : 1);
  },
);
