import { hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessTokenSigner } from '../../src/auth/oauth/access-token.signer.js';
import { prepareDatabase } from '../../src/database/prepare-database.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';
import { TEST_POSTGRES_URL } from '../utils/test-env.js';

/*
 * Access tokens when TOKEN_SIGNING_KEY is unset. The derivation below is written out here on purpose
 * (not imported): HKDF-SHA256 over the key material, salt `workflow-automation-service`, info
 * `oauth-access-token/v1 hs256` (32-byte HMAC key) and `oauth-access-token/v1 kid` (12-byte kid,
 * base64url). The constant is the development key material the service used to fall back to.
 */
const OLD_DEVELOPMENT_KEY_MATERIAL = 'workflow-automation-service insecure development key';
const BASE = 'http://127.0.0.1:1';

function derive(material: string): { secret: Uint8Array; kid: string } {
  const ikm = Buffer.from(material, 'utf8');
  return {
    secret: new Uint8Array(hkdfSync('sha256', ikm, 'workflow-automation-service', 'oauth-access-token/v1 hs256', 32)),
    kid: Buffer.from(hkdfSync('sha256', ikm, 'workflow-automation-service', 'oauth-access-token/v1 kid', 12)).toString('base64url'),
  };
}

async function forge(material: string, claims: { org: string; client_id: string; scope: string }): Promise<string> {
  const { secret, kid } = derive(material);
  return new SignJWT({ ...claims, jti: randomUUID(), gid: randomUUID() })
    .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid })
    .setIssuer(BASE)
    .setSubject(randomUUID())
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(secret);
}

describe('OAuth signing key without TOKEN_SIGNING_KEY', () => {
  // A database of its own, fresh from the migrations: the two apps below are its first start.
  const databaseName = `was_test_keys_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const databaseUrl = `${TEST_POSTGRES_URL}/${databaseName}`;
  let a: TestApp;
  let b: TestApp;
  let org: TestOrganization;
  let clientId: string;
  let clientSecret: string;

  beforeAll(async () => {
    await prepareDatabase({ databaseUrl });
    // Both start at once against the empty key table: they must agree on one key.
    [a, b] = await Promise.all([
      startTestApp({ DATABASE_URL: databaseUrl, PUBLIC_BASE_URL: BASE }),
      startTestApp({ DATABASE_URL: databaseUrl, PUBLIC_BASE_URL: BASE }),
    ]);
    org = await createOrganization(a);
    const res = await a.http.post('/v1/oauth/clients').set(org.auth()).send({ name: 'reader', redirect_uris: ['http://127.0.0.1:7/cb'], scopes: ['workflows:read'] });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    clientId = res.body.data.client_id as string;
    clientSecret = res.body.data.client_secret as string;
  });

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    const admin = new Client({ connectionString: `${TEST_POSTGRES_URL}/postgres` });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await admin.end();
  });

  async function storedMaterial(): Promise<string> {
    const client = new Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ material: string }>("SELECT material FROM service_keys WHERE name = 'token_signing_key'");
      expect(rows).toHaveLength(1);
      return rows[0]!.material;
    } finally {
      await client.end();
    }
  }

  it('refuses a token signed with the key derived from the old development constant (401)', async () => {
    const token = await forge(OLD_DEVELOPMENT_KEY_MATERIAL, { org: org.id, client_id: clientId, scope: 'workflows:read' });
    for (const app of [a, b]) {
      const res = await app.http.get('/v1/workflows').set('Authorization', `Bearer ${token}`);
      expect(res.status, JSON.stringify(res.body)).toBe(401);
    }
  });

  it('generates one random key, stored once, that every app instance of the deployment uses', async () => {
    const material = await storedMaterial();
    expect(material.length).toBeGreaterThanOrEqual(32);
    expect(material).not.toContain('development');
    // Minted by one instance, accepted by the other (and by the one that minted it).
    const token = a.app.get(AccessTokenSigner).sign({ sub: randomUUID(), org: org.id, client_id: clientId, scope: 'workflows:read', gid: randomUUID() }).token;
    for (const app of [b, a]) expect((await app.http.get('/v1/workflows').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    // And the stored row is the material both sign with (the documented derivation).
    const fromRow = await forge(material, { org: org.id, client_id: clientId, scope: 'workflows:read' });
    expect((await b.http.get('/v1/workflows').set('Authorization', `Bearer ${fromRow}`)).status).toBe(200);
  });

  it('a later start reads the same key back (a restart does not log anyone out)', async () => {
    const token = a.app.get(AccessTokenSigner).sign({ sub: randomUUID(), org: org.id, client_id: clientId, scope: 'workflows:read', gid: randomUUID() }).token;
    const c = await startTestApp({ DATABASE_URL: databaseUrl, PUBLIC_BASE_URL: BASE });
    try {
      expect((await c.http.get('/v1/workflows').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    } finally {
      await c.close();
    }
  });

  it("grants a token no scope beyond its client's registered scopes", async () => {
    const token = await forge(await storedMaterial(), { org: org.id, client_id: clientId, scope: 'workflows:read webhooks:read' });
    expect((await a.http.get('/v1/workflows').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    const webhooks = await a.http.get('/v1/webhooks').set('Authorization', `Bearer ${token}`);
    expect(webhooks.status, JSON.stringify(webhooks.body)).toBe(403);
    // Introspection reports the scope the token really has.
    const introspected = await a.http.post('/oauth/introspect').auth(clientId, clientSecret).type('form').send({ token });
    expect(introspected.status, JSON.stringify(introspected.body)).toBe(200);
    expect(introspected.body).toMatchObject({ active: true, scope: 'workflows:read' });
  });
});
