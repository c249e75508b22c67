import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { inject } from 'vitest';
import type { PermissionLevel } from '../../src/auth/access.js';
import { ApiKeysService } from '../../src/auth/api-keys/api-keys.service.js';
import { OrganizationsService } from '../../src/auth/organizations/organizations.service.js';
import { createHttpApp } from '../../src/app.factory.js';
import { AppConfig } from '../../src/config/app-config.js';
import { TEST_REDIS_URL } from './test-env.js';

export interface TestApp {
  app: NestExpressApplication;
  config: AppConfig;
  http: ReturnType<typeof request>;
  close(): Promise<void>;
}

/**
 * Every rate-limit figure raised out of reach, limits still ENABLED (headers, 429 documented, one
 * Lua script per request): for apps that send far more than a client would (the contract fuzzer).
 */
export const RATE_LIMITS_OUT_OF_REACH: Record<string, string> = Object.fromEntries(
  [
    'PER_CREDENTIAL', 'READ', 'WRITE', 'DELETE', 'EXECUTION', 'ANALYTICS_REALTIME', 'ANALYTICS_HISTORICAL', 'ANALYTICS_REPORTS',
    'ANALYTICS_EXPORT', 'PUBLIC_PER_IP', 'AUTH_FAILURES_PER_MINUTE',
  ].map((name) => [`RATE_LIMIT_${name}`, '100000000']),
);

/** The configuration of a test app: this run's database and Redis prefix, quiet logs, plus overrides. */
export function testConfig(overrides: Record<string, string> = {}): AppConfig {
  return AppConfig.fromEnv(
    {},
    {
      DATABASE_URL: inject('databaseUrl'),
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: inject('redisKeyPrefix'),
      LOG_LEVEL: 'silent',
      APP_ROLE: 'all',
      // Three test files side by side, some with several apps each, within PostgreSQL's 100 connections.
      DATABASE_POOL_MIN: '2',
      ...overrides,
    },
  );
}

/** Boots the real application (every module, guard, pipe and filter) on an ephemeral port. */
export async function startTestApp(overrides: Record<string, string> = {}): Promise<TestApp> {
  const config = testConfig(overrides);
  const app = await createHttpApp(config);
  await app.init();
  return { app, config, http: request(app.getHttpServer()), close: () => app.close() };
}

export type Levels = Record<PermissionLevel, string>;

export interface TestOrganization {
  id: string;
  name: string;
  /** One API key per permission level. */
  keys: Levels;
  /** `Authorization` header value for a level (default full_access). */
  auth(level?: PermissionLevel): { Authorization: string };
}

let organizationCounter = 0;

/** A fresh organization with a key of each level, made through the services the CLI uses. */
export async function createOrganization(testApp: TestApp, name?: string): Promise<TestOrganization> {
  const organizations = testApp.app.get(OrganizationsService);
  const apiKeys = testApp.app.get(ApiKeysService);
  const organization = await organizations.create(name ?? `org-${process.pid}-${Date.now()}-${++organizationCounter}`);
  const keys = {} as Levels;
  for (const level of ['read_only', 'read_write', 'full_access'] as const) {
    keys[level] = (await apiKeys.create(organization.id, `${level} key`, level)).key;
  }
  return {
    id: organization.id,
    name: organization.name,
    keys,
    auth: (level: PermissionLevel = 'full_access') => ({ Authorization: `Bearer ${keys[level]}` }),
  };
}
