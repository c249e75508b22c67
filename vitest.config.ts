import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/utils/sequencer.js';

// SWC keeps decorator metadata exact (esbuild drops emitDecoratorMetadata), which Nest's DI needs.
const plugins = [swc.vite({ module: { type: 'es6' } })];

// Test files run side by side, this many at once (unit and e2e alike). Each e2e file has its own
// database and Redis key prefix (test/utils/file-isolation.ts), so files cannot see each other.
// The e2e files mostly wait on PostgreSQL, Redis and child processes: more workers than cores pays.
const workers = Number(process.env.TEST_WORKERS ?? 3);
if (!Number.isInteger(workers) || workers < 1) throw new Error(`TEST_WORKERS must be a positive integer (got "${process.env.TEST_WORKERS}")`);

export default defineConfig({
  test: {
    maxWorkers: workers,
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        plugins,
        test: {
          name: 'unit',
          // test/**: the contract fuzzer's own library (test/fuzz) has unit specs too.
          include: ['src/**/*.spec.ts', 'test/**/*.spec.ts'],
          environment: 'node',
          // One module graph per worker, not per file: loading it was most of each file's time.
          isolate: false,
        },
      },
      {
        plugins,
        test: {
          name: 'e2e',
          include: ['test/**/*.e2e-spec.ts'],
          environment: 'node',
          // The run migrates one template database; each file runs on a clone of it with a Redis key prefix of its own.
          globalSetup: ['test/utils/global-setup.ts'],
          setupFiles: ['test/utils/file-isolation.ts'],
          // One module graph per worker (loading the app's ~300 modules took seconds per file); the data
          // a file can reach stays its own (file-isolation.ts), and each file closes what it opens.
          isolate: false,
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
