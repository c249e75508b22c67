import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';

describe('authentication, API keys and /v1/me', () => {
  let t: TestApp;
  let org: TestOrganization;

  beforeAll(async () => {
    t = await startTestApp({ BOOTSTRAP_API_KEY: 'e2e-bootstrap-key-0123456789abcdef' });
    org = await createOrganization(t);
  });
  afterAll(() => t?.close());

  it('answers 401 MISSING_AUTHENTICATION without a credential or with a non-bearer scheme', async () => {
    for (const headers of [{}, { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, { Authorization: 'Bearer' }]) {
      const res = await t.http.get('/v1/me').set(headers);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('MISSING_AUTHENTICATION');
    }
  });

  it('reads the credential from the Authorization header only, never from the query string or the body (Passport bearer strategy)', async () => {
    const key = org.keys.read_only;
    const query = await t.http.get(`/v1/me?access_token=${encodeURIComponent(key)}`);
    expect(query.status).toBe(401);
    expect(query.body.error.code).toBe('MISSING_AUTHENTICATION');
    const body = await t.http.post('/v1/workflows').send({ access_token: key });
    expect(body.status).toBe(401);
    expect(body.body.error.code).toBe('MISSING_AUTHENTICATION');
    // Whitespace after the scheme is tolerated as before the strategy existed.
    const spaced = await t.http.get('/v1/me').set({ Authorization: `bearer   ${key}` });
    expect(spaced.status).toBe(200);
    expect(spaced.body.data.permission_level).toBe('read_only');
  });

  it('completes concurrent requests, each with its own principal (one Passport strategy object per request)', async () => {
    const other = await createOrganization(t);
    const calls = Array.from({ length: 24 }, (_, i) => {
      const [who, level] = [i % 2 ? org : other, (['read_only', 'read_write', 'full_access'] as const)[i % 3]];
      return t.http.get('/v1/me').set(who.auth(level)).then((res) => [res.status, res.body.data?.organization_id === who.id, res.body.data?.permission_level === level]);
    });
    const answers = await Promise.race([Promise.all(calls), new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 10_000))]);
    expect(answers).toEqual(Array.from({ length: 24 }, () => [200, true, true]));
  });

  it('answers 401 INVALID_API_KEY for an unknown key', async () => {
    const res = await t.http.get('/v1/workflows').set({ Authorization: 'Bearer wfk_not-a-real-key' });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('INVALID_API_KEY');
  });

  it('describes the caller at /v1/me', async () => {
    const res = await t.http.get('/v1/me').set(org.auth('read_only'));
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ credential_type: 'api_key', name: 'read_only key', organization_id: org.id, permission_level: 'read_only' });
    expect(res.body.data.credential_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.data).not.toHaveProperty('scopes');
  });

  it('makes the BOOTSTRAP_API_KEY a Full Access key of the organization "default", idempotently', async () => {
    const res = await t.http.get('/v1/me').set({ Authorization: 'Bearer e2e-bootstrap-key-0123456789abcdef' });
    expect(res.status).toBe(200);
    expect(res.body.data.permission_level).toBe('full_access');
    // A second app with the same key starts without error and the key still resolves to the same org.
    const second = await startTestApp({ BOOTSTRAP_API_KEY: 'e2e-bootstrap-key-0123456789abcdef' });
    try {
      const again = await second.http.get('/v1/me').set({ Authorization: 'Bearer e2e-bootstrap-key-0123456789abcdef' });
      expect(again.body.data.organization_id).toBe(res.body.data.organization_id);
    } finally {
      await second.close();
    }
  });

  describe('API key management', () => {
    it('creates a key, shows it once, lists it without the value, and revokes it at once', async () => {
      const created = await t.http.post('/v1/api-keys').set(org.auth()).send({ name: 'CI', permission_level: 'read_write' });
      expect(created.status).toBe(201);
      const { key, id, prefix } = created.body.data;
      expect(key).toMatch(/^wfk_[A-Za-z0-9_-]{43}$/);
      expect(key.startsWith(prefix)).toBe(true);
      expect(created.body.data).toMatchObject({ name: 'CI', permission_level: 'read_write' });

      const me = await t.http.get('/v1/me').set({ Authorization: `Bearer ${key}` });
      expect(me.body.data).toMatchObject({ credential_id: id, permission_level: 'read_write' });

      const list = await t.http.get('/v1/api-keys').set(org.auth());
      expect(list.status).toBe(200);
      expect(list.body.pagination).toMatchObject({ page: 1, limit: 20, total: 4, pages: 1 });
      expect(list.body.data[0]).toEqual({ id, name: 'CI', prefix, permission_level: 'read_write', created_at: expect.any(String) });
      expect(JSON.stringify(list.body)).not.toContain(key);

      const del = await t.http.delete(`/v1/api-keys/${id}`).set(org.auth());
      expect(del.status).toBe(200);
      expect(del.body).toEqual({ message: 'API key deleted' });
      // The key was cached by the /v1/me call above; revocation must still take effect at once.
      const after = await t.http.get('/v1/me').set({ Authorization: `Bearer ${key}` });
      expect(after.status).toBe(401);
      expect(after.body.error.code).toBe('INVALID_API_KEY');
    });

    it('revokes a key on every API process at once (cache eviction through Redis)', async () => {
      const other = await startTestApp();
      try {
        const { key, id } = (await t.http.post('/v1/api-keys').set(org.auth()).send({ name: 'shared', permission_level: 'read_only' })).body.data;
        expect((await other.http.get('/v1/me').set({ Authorization: `Bearer ${key}` })).status).toBe(200);
        expect((await t.http.delete(`/v1/api-keys/${id}`).set(org.auth())).status).toBe(200);
        let status = 200;
        for (let i = 0; i < 50 && status === 200; i++) {
          status = (await other.http.get('/v1/me').set({ Authorization: `Bearer ${key}` })).status;
          if (status === 200) await new Promise((r) => setTimeout(r, 20));
        }
        expect(status).toBe(401);
      } finally {
        await other.close();
      }
    });

    it('validates the body', async () => {
      const missing = await t.http.post('/v1/api-keys').set(org.auth()).send({ permission_level: 'read_only' });
      expect(missing.status).toBe(400);
      expect(missing.body.error).toMatchObject({ code: 'MISSING_REQUIRED_FIELD', field: 'name' });
      const bad = await t.http.post('/v1/api-keys').set(org.auth()).send({ name: 'x', permission_level: 'admin' });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'permission_level' });
      const extra = await t.http.post('/v1/api-keys').set(org.auth()).send({ name: 'x', permission_level: 'read_only', key: 'mine' });
      expect(extra.status).toBe(400);
      expect(extra.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'key' });
    });

    it('needs Full Access for every key route', async () => {
      for (const level of ['read_only', 'read_write'] as const) {
        const responses = [
          await t.http.get('/v1/api-keys').set(org.auth(level)),
          await t.http.post('/v1/api-keys').set(org.auth(level)).send({ name: 'x', permission_level: 'read_only' }),
          await t.http.delete('/v1/api-keys/00000000-0000-4000-8000-000000000000').set(org.auth(level)),
        ];
        for (const res of responses) {
          expect(res.status).toBe(403);
          expect(res.body.error.code).toBe('INSUFFICIENT_PERMISSIONS');
        }
      }
    });

    it('answers 404 API_KEY_NOT_FOUND for another organization\'s key and for malformed ids', async () => {
      const other = await createOrganization(t);
      const keys = (await t.http.get('/v1/api-keys').set(other.auth())).body.data;
      const res = await t.http.delete(`/v1/api-keys/${keys[0].id}`).set(org.auth());
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('API_KEY_NOT_FOUND');
      expect((await t.http.get('/v1/me').set(other.auth())).status).toBe(200);
      const malformed = await t.http.delete('/v1/api-keys/not-an-id').set(org.auth());
      expect(malformed.status).toBe(404);
      expect(malformed.body.error.code).toBe('API_KEY_NOT_FOUND');
    });

    it('lists only the caller\'s organization\'s keys', async () => {
      const other = await createOrganization(t);
      const res = await t.http.get('/v1/api-keys').set(other.auth());
      expect(res.body.pagination.total).toBe(3);
      expect(res.body.data.map((k: { name: string }) => k.name).sort()).toEqual(['full_access key', 'read_only key', 'read_write key']);
    });
  });
});
