import { execFile, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';

const run = promisify(execFile);

/** Runs the built server with the given environment; it must exit by itself (bad configuration). */
async function start(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['dist/src/main.js'], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('start-up with a bad configuration', { timeout: 60_000 }, () => {
  it.each([
    ['APP_ROLE', 'both'],
    ['PORT', 'eighty'],
    ['DATABASE_URL', 'mysql://localhost/x'],
    ['CONVERSATION_TIMEOUT', 'forever'],
  ])('stops with a message naming %s', async (name, value) => {
    const result = await start({ [name]: value });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(name);
    expect(result.stderr).not.toMatch(/at .+\.js:\d+/); // a message, not a stack trace
  });
});

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('start-up messages', { timeout: 60_000 }, () => {
  it('refuses NODE_ENV=production without TOKEN_SIGNING_KEY, naming it', async () => {
    const result = await start({ NODE_ENV: 'production' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('TOKEN_SIGNING_KEY: required when NODE_ENV=production');
    expect(result.stderr).not.toMatch(/at .+\.js:\d+/);
  });

  it.each([
    ['DATABASE_URL', (port: number) => `postgres://postgres@127.0.0.1:${port}/x`, 'PostgreSQL'],
    ['REDIS_URL', (port: number) => `redis://127.0.0.1:${port}`, 'Redis'],
  ])('one line naming %s and its address when nothing answers there', async (name, url, what) => {
    const port = await closedPort();
    const result = await start({ [name]: url(port) });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([`${what} does not answer at 127.0.0.1:${port} (${name}): ECONNREFUSED`]);
  });

  it('says where it listens once started', async () => {
    const port = await closedPort();
    const child = spawn(process.execPath, ['dist/src/main.js'], {
      // This file's database and Redis prefix (dropped when the file ends).
      env: { PATH: process.env.PATH ?? '', PORT: String(port), DATABASE_URL: inject('databaseUrl'), REDIS_KEY_PREFIX: inject('redisKeyPrefix'), LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    try {
      const deadline = Date.now() + 30_000;
      while (!output.includes('listening on') && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 100));
      expect(output).toContain(`listening on http://localhost:${port}`);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });
});
