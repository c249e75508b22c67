import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpApp } from '../../src/app.factory.js';
import { createOrganization, testConfig, type TestOrganization } from '../utils/test-app.js';
import { waitFor } from '../utils/wait-for.js';

const run = promisify(execFile);

/** The README's quickstart, exactly as a newcomer copies it: the bash block between its markers. */
function quickstart(): string {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const section = /<!-- quickstart:begin -->\n```bash\n([\s\S]*?)\n```\n<!-- quickstart:end -->/.exec(readme);
  if (!section) throw new Error('README.md has no quickstart block between <!-- quickstart:begin --> and <!-- quickstart:end -->');
  return section[1];
}

describe('README quickstart', { timeout: 60_000 }, () => {
  let app: NestExpressApplication;
  let base: string;
  let org: TestOrganization;

  beforeAll(async () => {
    // A listening server with workers, as after `npm start`.
    app = await createHttpApp(testConfig({ RATE_LIMITS_ENABLED: 'false' }));
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
    org = await createOrganization({ app, config: testConfig(), http: undefined as never, close: () => app.close() });
  });
  afterAll(() => app?.close());

  it('runs as written, from a workflow to an execution that read the answer', async () => {
    const { stdout, stderr } = await run('bash', ['--norc', '--noprofile', '-euo', 'pipefail', '-c', quickstart()], {
      env: { PATH: process.env.PATH ?? '', BASE: base, KEY: org.keys.full_access },
      timeout: 30_000,
    });
    expect(stderr).toBe('');
    const outputs = stdout.trim().split('\n').map((line) => JSON.parse(line));
    // activate, trigger, the answer's 202, the execution.
    expect(outputs).toHaveLength(4);
    expect(outputs[0].data).toMatchObject({ status: 'active' });
    expect(outputs[1].data).toMatchObject({ type: 'message', status: 'active', configuration: { keywords: ['hello'] } });
    const execution = outputs[3].data;
    expect(outputs[2].data.executions).toEqual([expect.objectContaining({ workflow_execution_id: execution.id, status: 'running' })]);

    // The worker reads the answer: the form's step holds it.
    const db = app.get(DataSource);
    const done = await waitFor('the quickstart execution', async () => {
      const [e] = await db.query('SELECT status FROM workflow_executions WHERE id = $1', [execution.id]);
      return e.status === 'running' ? undefined : e;
    });
    expect(done.status).toBe('success');
    const [step] = await db.query(`SELECT output FROM execution_steps WHERE execution_id = $1 AND node_id = 'city'`, [execution.id]);
    expect(step.output).toEqual({ answers: { city: 'Lisbon' } });
  });
});
