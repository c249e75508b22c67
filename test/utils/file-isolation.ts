import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import { afterAll, inject } from 'vitest';
import { cloneDatabase, databaseUrlOf, deleteRedisKeys, dropDatabases } from './test-databases.js';
import { runningProcesses, stopProcess } from './worker-process.js';

/**
 * Setup file of the e2e project: runs in the worker before each e2e file is loaded. It gives the
 * file a database of its own (a clone of the run's migrated template) and a Redis key prefix of its
 * own, and makes `inject('databaseUrl')` and `inject('redisKeyPrefix')` answer them, so that
 * startTestApp, WorkerProcess, ApiProcess and anything else reading those two values stay inside the
 * file: its rows, Bull queues, repeatable schedule jobs, rate-limit keys and the workers that sweep
 * the database see no other file. Both are dropped when the file ends (the run's teardown drops
 * whatever a crashed file left).
 */

interface WorkerState {
  filepath?: string;
  providedContext: Record<string, unknown>;
}

/** Vitest's per-file worker state (where `inject` reads from); the check below fails the file if that ever changes. */
function workerState(): WorkerState {
  const state = (globalThis as { __vitest_worker__?: WorkerState }).__vitest_worker__;
  if (!state?.providedContext) throw new Error('file-isolation: Vitest worker state not found (Vitest internals changed?)');
  return state;
}

const state = workerState();
const slug = basename(state.filepath ?? 'file')
  .replace(/\.e2e-spec\.ts$/, '')
  .toLowerCase()
  .replace(/[^a-z0-9]+/g, '_')
  .slice(0, 12);
// The database's name and the Redis key prefix (≤ 39 characters: REDIS_KEY_PREFIX takes 64, and
// some files add a suffix of their own to it, e.g. `:workflow-trigger`).
const name = `${inject('testRunId')}_${slug}_${randomBytes(2).toString('hex')}`;
const databaseUrl = databaseUrlOf(name);

await cloneDatabase(inject('templateDatabase'), name);
state.providedContext.databaseUrl = databaseUrl;
state.providedContext.redisKeyPrefix = name;
if (inject('databaseUrl') !== databaseUrl || inject('redisKeyPrefix') !== name) {
  throw new Error('file-isolation: inject() does not see the file database (Vitest internals changed?)');
}

// Registered first, so it runs after the file's own afterAll hooks (Vitest runs them in reverse).
// The worker runs the next file in this same process: a built API or worker process the file left
// running is stopped here, and the file fails for it.
afterAll(async () => {
  const left = [...runningProcesses];
  await Promise.all(left.map((child) => stopProcess(child, 5000)));
  await dropDatabases([name]);
  await deleteRedisKeys(name);
  if (left.length > 0) throw new Error(`file-isolation: the file left ${left.length} process(es) of dist/src/main.js running (pids ${left.map((c) => c.pid).join(', ')}); stop them in afterAll`);
});
