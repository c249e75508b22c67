import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { prepareDatabase } from '../../src/database/prepare-database.js';
import { databasesStartingWith, databaseUrlOf, deleteRedisKeys, dropDatabases } from './test-databases.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** This file's database (a clone of the run's template), set by file-isolation.ts. */
    databaseUrl: string;
    /** This file's Redis key prefix, set by file-isolation.ts. */
    redisKeyPrefix: string;
    /** What every database and key prefix of this run starts with. */
    testRunId: string;
    /** The run's migrated template database (its name): nobody connects to it, files clone it. */
    templateDatabase: string;
  }
}

/** What `inject('databaseUrl')` answers outside an e2e file's isolation (refused at once: nothing listens on port 1). */
const NOT_ISOLATED = 'postgres://postgres@127.0.0.1:1/file-isolation-did-not-run';

/**
 * Once per e2e run: one template database, made with the real start-up path (create database,
 * run migrations), that every e2e file clones (see file-isolation.ts). When the run ends, every
 * database and Redis key of the run goes, whatever a file left behind.
 */
export default async function setup(project: TestProject) {
  const runId = `was_test_${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const templateDatabase = `${runId}_template`;
  await prepareDatabase({ databaseUrl: databaseUrlOf(templateDatabase) });
  project.provide('testRunId', runId);
  project.provide('templateDatabase', templateDatabase);
  project.provide('databaseUrl', NOT_ISOLATED);
  project.provide('redisKeyPrefix', `${runId}_not_isolated`);

  return async () => {
    await dropDatabases(await databasesStartingWith(runId));
    await deleteRedisKeys(runId);
  };
}
