import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { AppConfig } from '../../src/config/app-config.js';

const MAIN = 'dist/src/main.js';

/** Every process started here that has not exited yet (file-isolation.ts kills and reports those a file left running). */
export const runningProcesses = new Set<ChildProcess>();

/** A separate worker process (APP_ROLE=worker) of the built app, sharing the test run's database and Redis prefix. */
export class WorkerProcess {
  private child?: ChildProcess;
  output = '';

  constructor(
    private readonly config: AppConfig,
    private readonly env: Record<string, string> = {},
  ) {}

  start(): void {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build (npm test does it first)`);
    this.child = spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        APP_ROLE: 'worker',
        DATABASE_URL: this.config.databaseUrl,
        REDIS_URL: this.config.redisUrl,
        REDIS_KEY_PREFIX: this.config.redisKeyPrefix,
        LOG_LEVEL: 'warn',
        // As the in-process test apps (test-app.ts): several processes per file within PostgreSQL's connections.
        DATABASE_POOL_MIN: '2',
        ...this.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const child = this.child;
    runningProcesses.add(child);
    child.once('exit', () => runningProcesses.delete(child));
    this.child.stdout?.on('data', (d: Buffer) => (this.output += d.toString()));
    this.child.stderr?.on('data', (d: Buffer) => (this.output += d.toString()));
  }

  private get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGKILL: no graceful shutdown, the way a crash or an OOM kill ends a process. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  /** SIGTERM, and how the process ended: its exit code (null if by signal) and how long it took. */
  async terminate(): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
    const child = this.child;
    if (!child || !this.running) throw new Error('the process is not running');
    const started = Date.now();
    return new Promise((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal, ms: Date.now() - started }));
      child.kill('SIGTERM');
    });
  }

  async stop(): Promise<void> {
    if (this.child) await stopProcess(this.child, 10_000);
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited (at once if it had). */
export async function stopProcess(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
