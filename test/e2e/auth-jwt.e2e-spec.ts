import { createHmac, randomUUID } from 'node:crypto';
import { exportJWK, exportPKCS8, exportSPKI, generateKeyPair, importPKCS8, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTrigger } from '../factories/triggers.js';
import { createWorkflow } from '../factories/workflows.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';

const AUDIENCE = 'https://workflows.e2e.test';
const now = () => Math.floor(Date.now() / 1000);
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

interface Client {
  applicationId: string;
  alg: 'ES256' | 'RS256' | 'EdDSA';
  privateKey: CryptoKey;
  publicPem: string;
}

describe('JWT server-to-server credentials', () => {
  let t: TestApp;
  let org: TestOrganization;
  const clients = {} as Record<'ES256' | 'RS256' | 'EdDSA', Client>;

  /** A token signed by `client`, with valid claims unless overridden. */
  async function sign(client: Client, claims: JWTPayload = {}, alg: string = client.alg): Promise<string> {
    const iat = claims.iat ?? now();
    return new SignJWT({ scope: 'workflows:read triggers:write analytics:read', jti: randomUUID(), sub: 'billing-service', ...claims })
      .setProtectedHeader({ alg, typ: 'JWT' })
      .setIssuer(claims.iss ?? client.applicationId)
      .setAudience(claims.aud ?? AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(claims.exp ?? iat + 600)
      .sign(client.privateKey);
  }

  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  async function register(publicKey: unknown, scopes: string[]) {
    return t.http.post('/v1/jwt-clients').set(org.auth()).send({ name: `client ${randomUUID()}`, public_key: publicKey, scopes });
  }

  function expectInvalidToken(res: { status: number; body: { error?: { code: string } } }) {
    expect(res.status).toBe(401);
    expect(res.body.error?.code).toBe('INVALID_TOKEN');
  }

  beforeAll(async () => {
    t = await startTestApp({ JWT_AUDIENCE: AUDIENCE });
    org = await createOrganization(t);
    const scopes = ['workflows:read', 'workflows:write', 'triggers:write'];
    for (const alg of ['ES256', 'RS256', 'EdDSA'] as const) {
      const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
      const publicPem = await exportSPKI(publicKey);
      // One key registered as a JWK, the others as PEM.
      const res = await register(alg === 'ES256' ? await exportJWK(publicKey) : publicPem, scopes);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      clients[alg] = { applicationId: res.body.data.application_id, alg, privateKey, publicPem };
    }
  });
  afterAll(() => t?.close());

  describe('client registration', () => {
    it('returns application_id, the algorithms the key allows and the scopes', async () => {
      const { publicKey } = await generateKeyPair('RS256', { extractable: true });
      const res = await register(await exportSPKI(publicKey), ['workflows:read', 'workflows:read']);
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ application_id: res.body.data.id, algorithms: ['RS256', 'PS256'], scopes: ['workflows:read'] });
      const list = await t.http.get('/v1/jwt-clients').set(org.auth());
      expect(list.status).toBe(200);
      expect(list.body.data.map((c: { id: string }) => c.id)).toContain(res.body.data.id);
      expect(list.body.data[0]).not.toHaveProperty('public_key');
    });

    it('refuses private keys, symmetric keys, weak or unsupported keys and unknown scopes, naming the field', async () => {
      const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
      const privateJwk = await exportJWK(privateKey);
      const refused: [unknown, string[], string][] = [
        [await exportPKCS8(privateKey), ['workflows:read'], 'public_key'],
        [privateJwk, ['workflows:read'], 'public_key'],
        [{ kty: 'oct', k: Buffer.from('a shared secret of 32 bytes.....').toString('base64url') }, ['workflows:read'], 'public_key'],
        ['not a key', ['workflows:read'], 'public_key'],
        [(await generateKeyPair('ES384', { extractable: true })).publicKey, ['workflows:read'], 'public_key'],
        [await exportJWK(publicKey), ['workflows:admin'], 'scopes'],
        [await exportJWK(publicKey), ['credentials:write'], 'scopes'],
        [await exportJWK(publicKey), [], 'scopes'],
      ];
      const es384 = refused[4];
      es384[0] = await exportJWK(es384[0] as CryptoKey);
      for (const [public_key, scopes, field] of refused) {
        const res = await register(public_key, scopes);
        expect(res.status, JSON.stringify(public_key)).toBe(400);
        expect(res.body.error.field).toBe(field);
        expect(['INVALID_REQUEST', 'MISSING_REQUIRED_FIELD']).toContain(res.body.error.code);
      }
    });

    it('needs a Full Access API key: lower levels get INSUFFICIENT_PERMISSIONS, a JWT SCOPE_INSUFFICIENT', async () => {
      const { publicKey } = await generateKeyPair('EdDSA', { extractable: true });
      const body = { name: 'x', public_key: await exportSPKI(publicKey), scopes: ['workflows:read'] };
      for (const res of [
        await t.http.post('/v1/jwt-clients').set(org.auth('read_write')).send(body),
        await t.http.get('/v1/jwt-clients').set(org.auth('read_only')),
        await t.http.delete(`/v1/jwt-clients/${randomUUID()}`).set(org.auth('read_write')),
      ]) {
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('INSUFFICIENT_PERMISSIONS');
      }
      const byJwt = await t.http.post('/v1/jwt-clients').set(bearer(await sign(clients.ES256))).send(body);
      expect(byJwt.status).toBe(403);
      expect(byJwt.body.error.code).toBe('SCOPE_INSUFFICIENT');
    });

    it("answers 404 JWT_CLIENT_NOT_FOUND for an unknown, malformed or another organization's client", async () => {
      const other = await createOrganization(t);
      for (const [id, auth] of [[randomUUID(), org.auth()], ['not-a-uuid', org.auth()], [clients.RS256.applicationId, other.auth()]] as const) {
        const res = await t.http.delete(`/v1/jwt-clients/${id}`).set(auth);
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('JWT_CLIENT_NOT_FOUND');
      }
    });
  });

  describe('tokens', () => {
    it('accepts ES256, RS256 and EdDSA tokens; /v1/me reports jwt and the granted scopes (token scope ∩ registered)', async () => {
      for (const alg of ['ES256', 'RS256', 'EdDSA'] as const) {
        const res = await t.http.get('/v1/me').set(bearer(await sign(clients[alg])));
        expect(res.status, alg).toBe(200);
        expect(res.body.data).toMatchObject({ credential_type: 'jwt', credential_id: clients[alg].applicationId, organization_id: org.id });
        // analytics:read was asked for but never registered: not granted.
        expect(res.body.data.scopes.sort()).toEqual(['triggers:write', 'workflows:read']);
        expect(res.body.data).not.toHaveProperty('permission_level');
      }
    });

    it('accepts PS256 from an RSA client and a token without jti; a token without scope gets no scope', async () => {
      // WebCrypto binds a key to one RSA scheme: the same private key, imported for RSA-PSS.
      const pss = await importPKCS8(await exportPKCS8(clients.RS256.privateKey), 'PS256');
      expect((await t.http.get('/v1/me').set(bearer(await sign({ ...clients.RS256, privateKey: pss }, {}, 'PS256')))).status).toBe(200);
      expect((await t.http.get('/v1/me').set(bearer(await sign(clients.RS256, { jti: undefined })))).status).toBe(200);
      const none = await t.http.get('/v1/me').set(bearer(await sign(clients.EdDSA, { scope: undefined })));
      expect(none.status).toBe(200);
      expect(none.body.data.scopes).toEqual([]);
    });

    it('enforces scopes: a granted scope passes, a missing one is 403 SCOPE_INSUFFICIENT', async () => {
      const token = () => sign(clients.ES256, { scope: 'workflows:read' });
      expect((await t.http.get('/v1/workflows').set(bearer(await token()))).status).toBe(200);
      for (const res of [
        await t.http.post('/v1/workflows').set(bearer(await token())).send({ name: 'x' }),
        await t.http.get('/v1/triggers').set(bearer(await token())),
        await t.http.get('/v1/customers').set(bearer(await token())),
        await t.http.delete(`/v1/workflows/${randomUUID()}`).set(bearer(await token())),
        await t.http.get('/v1/analytics/realtime').set(bearer(await token())),
        await t.http.get('/v1/analytics/customers/engagement').set(bearer(await token())),
      ]) {
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('SCOPE_INSUFFICIENT');
      }
    });

    it('refuses expired, wrong-audience, unknown-issuer, future-dated and over-long tokens with 401 INVALID_TOKEN', async () => {
      const c = clients.ES256;
      const tokens = [
        await sign(c, { iat: now() - 3000, exp: now() - 61 }),
        await sign(c, { aud: 'https://someone-else.example' }),
        await sign(c, { iss: randomUUID() }),
        await sign(c, { iss: 'not-a-uuid' }),
        await sign(c, { iat: now() + 600, exp: now() + 1200 }),
        await sign(c, { iat: now(), exp: now() + 3601 }),
        await sign(c, { iat: now() - 3700, exp: now() + 600 }),
      ];
      for (const [i, token] of tokens.entries()) {
        const res = await t.http.get('/v1/me').set(bearer(token));
        expect(res.status, `token ${i}`).toBe(401);
        expect(res.body.error.code).toBe('INVALID_TOKEN');
      }
    });

    it('honours 60 s of clock skew and a lifetime of exactly one hour', async () => {
      expect((await t.http.get('/v1/me').set(bearer(await sign(clients.ES256, { iat: now() - 3590, exp: now() - 30 })))).status).toBe(200);
      expect((await t.http.get('/v1/me').set(bearer(await sign(clients.ES256, { iat: now() + 30, exp: now() + 600 })))).status).toBe(200);
    });

    it('refuses alg none, HS256 signed with the public key, another key type\'s algorithm, and a bad signature', async () => {
      const c = clients.RS256;
      const claims = { iss: c.applicationId, aud: AUDIENCE, iat: now(), exp: now() + 600, scope: 'workflows:read' };
      const unsigned = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
      const hmacInput = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}`;
      const hs256 = `${hmacInput}.${createHmac('sha256', c.publicPem).update(hmacInput).digest('base64url')}`;
      const es256ForRsaClient = await sign({ ...clients.ES256, applicationId: c.applicationId });
      const valid = await sign(c);
      const [h, p, s] = valid.split('.');
      const tampered = `${h}.${b64({ ...claims, scope: 'workflows:read workflows:write' })}.${s}`;
      const badSig = `${h}.${p}.${s.slice(0, -4)}AAAA`;
      for (const token of [unsigned, hs256, es256ForRsaClient, tampered, badSig]) expectInvalidToken(await t.http.get('/v1/me').set(bearer(token)));
    });

    it('refuses a replayed jti within the token\'s life, also on another app process', async () => {
      const token = await sign(clients.EdDSA, { jti: randomUUID() });
      expect((await t.http.get('/v1/me').set(bearer(token))).status).toBe(200);
      expectInvalidToken(await t.http.get('/v1/me').set(bearer(token)));
      const second = await startTestApp({ JWT_AUDIENCE: AUDIENCE, REDIS_KEY_PREFIX: t.config.redisKeyPrefix });
      try {
        expectInvalidToken(await second.http.get('/v1/me').set(bearer(token)));
      } finally {
        await second.close();
      }
    });

    it('refuses every JWT when JWT_AUDIENCE is not configured', async () => {
      const bare = await startTestApp({});
      try {
        expectInvalidToken(await bare.http.get('/v1/me').set(bearer(await sign(clients.ES256))));
      } finally {
        await bare.close();
      }
    });

    it('accepts a token without a jti again and again (verified once, then remembered), and forgets it when its client is deleted, on every process', async () => {
      const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
      const created = await register(await exportJWK(publicKey), ['workflows:read']);
      const client: Client = { applicationId: created.body.data.application_id, alg: 'ES256', privateKey, publicPem: '' };
      const token = await sign(client, { jti: undefined });
      expect(JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).jti).toBeUndefined();
      const other = await startTestApp({ JWT_AUDIENCE: AUDIENCE, REDIS_KEY_PREFIX: t.config.redisKeyPrefix });
      try {
        for (const app of [t, other, t, other]) {
          const res = await app.http.get('/v1/me').set(bearer(token));
          expect(res.status).toBe(200);
          expect(res.body.data).toMatchObject({ credential_type: 'jwt', scopes: ['workflows:read'] });
        }
        expect((await t.http.delete(`/v1/jwt-clients/${client.applicationId}`).set(org.auth())).status).toBe(200);
        expectInvalidToken(await t.http.get('/v1/me').set(bearer(token)));
        let status = 200;
        for (let i = 0; i < 50 && status === 200; i++) {
          status = (await other.http.get('/v1/me').set(bearer(token))).status;
          if (status === 200) await new Promise((r) => setTimeout(r, 20));
        }
        expect(status).toBe(401);
      } finally {
        await other.close();
      }
    });

    it('refuses the tokens of a deleted client at once, on every process', async () => {
      const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
      const created = await register(await exportJWK(publicKey), ['workflows:read']);
      const client: Client = { applicationId: created.body.data.application_id, alg: 'ES256', privateKey, publicPem: '' };
      const other = await startTestApp({ JWT_AUDIENCE: AUDIENCE, REDIS_KEY_PREFIX: t.config.redisKeyPrefix });
      try {
        expect((await other.http.get('/v1/me').set(bearer(await sign(client)))).status).toBe(200);
        expect((await t.http.delete(`/v1/jwt-clients/${client.applicationId}`).set(org.auth())).status).toBe(200);
        expectInvalidToken(await t.http.get('/v1/me').set(bearer(await sign(client))));
        let status = 200;
        for (let i = 0; i < 50 && status === 200; i++) {
          status = (await other.http.get('/v1/me').set(bearer(await sign(client)))).status;
          if (status === 200) await new Promise((r) => setTimeout(r, 20));
        }
        expect(status).toBe(401);
      } finally {
        await other.close();
      }
    });
  });

  describe("an api trigger's configuration.authentication", () => {
    it('lets only the named credential type fire it (403 INSUFFICIENT_PERMISSIONS otherwise); any and bearer let every type', async () => {
      const workflow = await createWorkflow(t, org);
      const jwt = async () => bearer(await sign(clients.ES256));
      const cases: [string, Record<string, string>, number][] = [
        ['api_key', org.auth('read_write'), 202],
        ['api_key', await jwt(), 403],
        ['jwt', await jwt(), 202],
        ['jwt', org.auth('read_write'), 403],
        ['oauth', org.auth('full_access'), 403],
        ['oauth', await jwt(), 403],
        ['any', await jwt(), 202],
        ['any', org.auth('read_write'), 202],
        ['bearer', await jwt(), 202],
      ];
      for (const [authentication, auth, status] of cases) {
        const trigger = await createTrigger(t, org, workflow.id, 'api', { authentication });
        const res = await t.http.post(`/v1/triggers/${trigger.id}/fire`).set(auth).send({ data: { n: 1 } });
        expect(res.status, `${authentication} ${auth.Authorization.slice(0, 12)}`).toBe(status);
        if (status === 403) expect(res.body.error.code).toBe('INSUFFICIENT_PERMISSIONS');
      }
    });
  });
});
