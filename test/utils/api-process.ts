import type { AppConfig } from '../../src/config/app-config.js';
import { freePort } from './private-services.js';
import { waitFor } from './wait-for.js';
import { WorkerProcess } from './worker-process.js';

/**
 * A separate API process (APP_ROLE=api) of the built app on a port of its own, sharing the test
 * run's database and Redis prefix (or the ones in `env`): what `npm start` runs, minus the workers.
 */
export class ApiProcess {
  private readonly process: WorkerProcess;

  private constructor(
    readonly port: number,
    config: AppConfig,
    env: Record<string, string>,
  ) {
    this.process = new WorkerProcess(config, { APP_ROLE: 'api', PORT: String(port), ...env });
  }

  /** Spawns the process on a free port; `ready()` waits until it answers. */
  static async start(config: AppConfig, env: Record<string, string> = {}): Promise<ApiProcess> {
    const api = new ApiProcess(await freePort(), config, env);
    api.process.start();
    return api;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get output(): string {
    return this.process.output;
  }

  /** Until GET /health/ready answers 200 (start-up ran migrations and connected to PostgreSQL and Redis). */
  async ready(timeoutMs = 60_000): Promise<void> {
    await waitFor(`the API process on ${this.port}`, async () => (await fetch(`${this.url}/health/ready`).catch(() => null))?.status === 200, timeoutMs, 200).catch(
      (error: Error) => {
        throw new Error(`${error.message}\n${this.output.slice(-2000)}`);
      },
    );
  }

  fetch(path: string, init: RequestInit = {}): Promise<Response> {
    return fetch(`${this.url}${path}`, init);
  }

  stop(): Promise<void> {
    return this.process.stop();
  }
}
