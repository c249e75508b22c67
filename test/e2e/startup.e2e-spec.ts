import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

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
