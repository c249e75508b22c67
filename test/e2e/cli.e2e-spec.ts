import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli, runCli } from '../utils/cli.js';
import { startTestApp, testConfig, type TestApp } from '../utils/test-app.js';


/** Runs the built CLI against this run's database. */
const cli = (...args: string[]) => runCli(testConfig(), args);

describe('CLI', { timeout: 90_000 }, () => {
  let t: TestApp;

  beforeAll(async () => {
    requireBuiltCli();
    t = await startTestApp();
  });
  afterAll(() => t?.close());

  it('org:create prints the organization and a Full Access key that works', async () => {
    const result = await cli('org:create', '--name', `cli-org-${Date.now()}`);
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(Object.keys(out).sort()).toEqual(['api_key', 'organization_id']);
    const me = await t.http.get('/v1/me').set({ Authorization: `Bearer ${out.api_key}` });
    expect(me.status).toBe(200);
    expect(me.body.data).toMatchObject({ organization_id: out.organization_id, permission_level: 'full_access' });
  });

  it('org:create refuses a duplicate name with a non-zero exit', async () => {
    const name = `cli-dup-${Date.now()}`;
    expect((await cli('org:create', '--name', name)).code).toBe(0);
    const again = await cli('org:create', '--name', name);
    expect(again.code).not.toBe(0);
    expect(again.stdout).toBe('');
    expect(again.stderr).toMatch(/exists/);
  });

  it('api-key:create makes a key of the requested level', async () => {
    const org = JSON.parse((await cli('org:create', '--name', `cli-keys-${Date.now()}`)).stdout);
    const result = await cli('api-key:create', '--org', org.organization_id, '--name', 'reader', '--level', 'read_only');
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(Object.keys(out).sort()).toEqual(['id', 'key']);
    const me = await t.http.get('/v1/me').set({ Authorization: `Bearer ${out.key}` });
    expect(me.body.data).toMatchObject({ credential_id: out.id, permission_level: 'read_only', name: 'reader' });
  });

  it('api-key:create refuses a bad level, an unknown organization and missing options', async () => {
    const org = JSON.parse((await cli('org:create', '--name', `cli-bad-${Date.now()}`)).stdout);
    expect((await cli('api-key:create', '--org', org.organization_id, '--name', 'x', '--level', 'admin')).code).not.toBe(0);
    expect((await cli('api-key:create', '--org', '00000000-0000-4000-8000-000000000000', '--name', 'x', '--level', 'read_only')).code).not.toBe(0);
    expect((await cli('api-key:create', '--name', 'x', '--level', 'read_only')).code).not.toBe(0);
    expect((await cli('no:such-command')).code).not.toBe(0);
  });

  it('user:create stores a user with a strong password hash', async () => {
    const org = JSON.parse((await cli('org:create', '--name', `cli-users-${Date.now()}`)).stdout);
    const email = `Person.${Date.now()}@Example.com`;
    const result = await cli('user:create', '--org', org.organization_id, '--email', email, '--password', 'a long enough password');
    expect(result.code).toBe(0);
    const { id } = JSON.parse(result.stdout);
    const { DataSource } = await import('typeorm');
    const [row] = await t.app.get(DataSource).query('SELECT email, password_hash, organization_id FROM users WHERE id = $1', [id]);
    expect(row.email).toBe(email.toLowerCase());
    expect(row.organization_id).toBe(org.organization_id);
    expect(row.password_hash).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(row.password_hash).not.toContain('a long enough password');
    expect((await cli('user:create', '--org', org.organization_id, '--email', email, '--password', 'a long enough password')).code).not.toBe(0);
    expect((await cli('user:create', '--org', org.organization_id, '--email', 'x@y.io', '--password', 'short')).code).not.toBe(0);
  });
});
