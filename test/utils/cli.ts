import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import type { AppConfig } from '../../src/config/app-config.js';

const run = promisify(execFile);
const CLI = 'dist/src/cli.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Fails at once when the CLI is not built (npm test builds first). */
export function requireBuiltCli(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build (npm test does it first)`);
}

/** Runs the built CLI against `config`'s database and Redis prefix, `env` added; its exit code and output. */
export async function runCli(config: AppConfig, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const childEnv = { ...process.env, DATABASE_URL: config.databaseUrl, REDIS_URL: config.redisUrl, REDIS_KEY_PREFIX: config.redisKeyPrefix, ...env };
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: childEnv, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as CliResult;
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
