// Child processes of the bench (the built app, the baseline server): start, wait until ready, stop.
import { spawn } from 'node:child_process';
import net from 'node:net';

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const LOG_LINES_KEPT = 200;

/**
 * A node child process whose last output lines are kept for error messages.
 * `exited` resolves with { code, signal } when it ends.
 */
export class ChildProcess {
  constructor(name, script, { env, cwd, nodeArgs = [] }) {
    this.name = name;
    this.lines = [];
    this.child = spawn(process.execPath, [...nodeArgs, script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (chunk) => {
      for (const line of chunk.toString().split('\n')) {
        if (line.trim() === '') continue;
        this.lines.push(line);
        if (this.lines.length > LOG_LINES_KEPT) this.lines.shift();
      }
    };
    this.child.stdout.on('data', keep);
    this.child.stderr.on('data', keep);
    this.exitInfo = null;
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
      this.child.on('error', (error) => {
        this.lines.push(`spawn error: ${error.message}`);
        this.exitInfo = { code: -1, signal: null };
        resolve(this.exitInfo);
      });
    });
  }

  get running() {
    return this.exitInfo === null;
  }

  log() {
    return this.lines.join('\n');
  }

  /** Polls `url` until it answers 200, the child exits, or `timeoutMs` passes. */
  async waitForHttp(url, timeoutMs = 60_000) {
    const deadline = Date.now() + timeoutMs;
    let last = 'no answer';
    while (Date.now() < deadline) {
      if (!this.running) {
        throw new Error(`${this.name} exited (${JSON.stringify(this.exitInfo)}) before ${url} answered. Its output:\n${this.log()}`);
      }
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
        if (res.status === 200) return;
        last = `HTTP ${res.status}`;
      } catch (error) {
        last = error.cause?.code ?? error.message;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`${this.name}: ${url} did not answer 200 within ${timeoutMs} ms (last: ${last}). Its output:\n${this.log()}`);
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 5000) {
    if (!this.running) return this.exitInfo;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.running && this.child.kill('SIGKILL'), graceMs);
    const info = await this.exited;
    clearTimeout(timer);
    return info;
  }
}
