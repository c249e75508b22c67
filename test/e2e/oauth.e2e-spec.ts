import { createServer } from 'node:net';
import * as oauth from 'oauth4webapi';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { UsersService } from '../../src/auth/users/users.service.js';
import { createTrigger } from '../factories/triggers.js';
import { createWorkflow } from '../factories/workflows.js';
import { createOrganization, startTestApp, type TestApp, type TestOrganization } from '../utils/test-app.js';

// Every sign-in runs scrypt (N=2^17): seconds each on a loaded machine, and some tests sign in several times.
vi.setConfig({ testTimeout: 180_000 });

const OLD_KEY = 'old-signing-key-0123456789abcdef-0123456789';
const NEW_KEY = 'new-signing-key-fedcba9876543210-9876543210';
const PASSWORD = 'correct horse battery staple';
const REDIRECT = 'http://127.0.0.1:7/callback';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Running {
  t: TestApp;
  base: string;
}

/** The app listening on a port known in advance, so that its issuer (PUBLIC_BASE_URL) is its real address. */
async function listen(overrides: Record<string, string> = {}): Promise<Running> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t = await startTestApp({ LOG_LEVEL: process.env.OAUTH_TEST_LOG ?? 'silent', PUBLIC_BASE_URL: base, TOKEN_SIGNING_KEY: OLD_KEY, OAUTH_LOGIN_ATTEMPTS_PER_EMAIL: '4', OAUTH_LOGIN_ATTEMPTS_PER_IP: '1000', ...overrides });
  await t.app.listen(port, '127.0.0.1');
  return { t, base };
}

const unescape = (text: string) => text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));

interface Page {
  status: number;
  html: string;
  headers: Headers;
  cookie?: string;
  hidden: Record<string, string>;
}

async function getPage(base: string, params: Record<string, string>): Promise<Page> {
  const res = await fetch(`${base}/oauth/authorize?${new URLSearchParams(params)}`, { redirect: 'manual' });
  const html = await res.text();
  const hidden: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) hidden[unescape(m[1] as string)] = unescape(m[2] as string);
  const cookie = res.headers.get('set-cookie')?.split(';')[0];
  return { status: res.status, html, headers: res.headers, cookie, hidden };
}

async function postForm(base: string, page: Page, fields: Record<string, string>, cookie = page.cookie) {
  return fetch(`${base}/oauth/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
    body: new URLSearchParams({ ...page.hidden, ...fields }),
  });
}

describe('OAuth 2.0 authorization server', () => {
  let main: Running;
  let org: TestOrganization;
  let as: oauth.AuthorizationServer;
  let email: string;
  let userId: string;
  const insecure = { [oauth.allowInsecureRequests]: true };

  interface Registered {
    client: oauth.Client;
    secret?: string;
    auth: oauth.ClientAuth;
  }

  async function register(scopes: string[], method: 'client_secret_basic' | 'client_secret_post' | 'none' = 'client_secret_basic', redirectUris = [REDIRECT]): Promise<Registered> {
    const res = await main.t.http.post('/v1/oauth/clients').set(org.auth()).send({ name: `app ${Date.now()}`, redirect_uris: redirectUris, scopes, token_endpoint_auth_method: method });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const secret = res.body.data.client_secret as string | undefined;
    const auth = method === 'none' ? oauth.None() : method === 'client_secret_post' ? oauth.ClientSecretPost(secret as string) : oauth.ClientSecretBasic(secret as string);
    return { client: { client_id: res.body.data.client_id, token_endpoint_auth_method: method }, secret, auth };
  }

  /** Drives the browser part: page, sign-in and approval; answers the redirect's URL. */
  async function consent(client: oauth.Client, extra: Record<string, string> = {}, user = { email, password: PASSWORD }) {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const params = { client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code', state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', ...extra };
    for (const [k, v] of Object.entries(params)) if (v === '') delete (params as Record<string, string>)[k];
    const page = await getPage(main.base, params);
    expect(page.status, page.html).toBe(200);
    const res = await postForm(main.base, page, { email: user.email, password: user.password, decision: 'approve' });
    expect(res.status, await res.clone().text()).toBe(302);
    return { url: new URL(res.headers.get('location') as string), verifier, state };
  }

  /** The whole code flow through oauth4webapi; answers the token response. */
  async function tokens(registered: Registered, scope?: string) {
    const { url, verifier, state } = await consent(registered.client, scope ? { scope } : {});
    const params = oauth.validateAuthResponse(as, registered.client, url, state);
    const res = await oauth.authorizationCodeGrantRequest(as, registered.client, registered.auth, params, REDIRECT, verifier, insecure);
    return oauth.processAuthorizationCodeResponse(as, registered.client, res);
  }

  /** A code (not redeemed yet) with its verifier. */
  async function code(registered: Registered) {
    const { url, verifier } = await consent(registered.client);
    return { code: url.searchParams.get('code') as string, verifier };
  }

  async function tokenRequest(fields: Record<string, string>, basic?: { id: string; secret: string }) {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (basic) headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(basic.id)}:${encodeURIComponent(basic.secret)}`).toString('base64')}`;
    const res = await fetch(`${main.base}/oauth/token`, { method: 'POST', headers, body: new URLSearchParams(fields) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
  }

  const basicOf = (r: Registered) => ({ id: r.client.client_id, secret: r.secret as string });
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  beforeAll(async () => {
    main = await listen();
    org = await createOrganization(main.t);
    email = `user-${Date.now()}@example.com`;
    userId = (await main.t.app.get(UsersService).create(org.id, email, PASSWORD)).id;
    as = await oauth.processDiscoveryResponse(new URL(main.base), await oauth.discoveryRequest(new URL(main.base), { algorithm: 'oauth2', ...insecure }));
  }, 60_000);
  afterAll(() => main?.t.close());

  it('publishes RFC 8414 metadata that oauth4webapi accepts', () => {
    expect(as).toMatchObject({
      issuer: main.base,
      authorization_endpoint: `${main.base}/oauth/authorize`,
      token_endpoint: `${main.base}/oauth/token`,
      revocation_endpoint: `${main.base}/oauth/revoke`,
      introspection_endpoint: `${main.base}/oauth/introspect`,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
    });
  });

  describe('client registration', () => {
    it('returns the secret once, lists clients without it, and needs a Full Access key', async () => {
      const created = await main.t.http.post('/v1/oauth/clients').set(org.auth()).send({ name: 'Dashboard', redirect_uris: ['https://app.example.com/cb'], scopes: ['workflows:read'] }).expect(201);
      expect(created.body.data).toMatchObject({ name: 'Dashboard', token_endpoint_auth_method: 'client_secret_basic', scopes: ['workflows:read'] });
      expect(created.body.data.client_secret).toMatch(/^wocs_/);
      const list = await main.t.http.get('/v1/oauth/clients').set(org.auth()).expect(200);
      const listed = list.body.data.find((c: { id: string }) => c.id === created.body.data.id);
      expect(listed).toBeDefined();
      expect(listed).not.toHaveProperty('client_secret');
      expect(JSON.stringify(list.body)).not.toContain(created.body.data.client_secret);
      const forbidden = await main.t.http.post('/v1/oauth/clients').set(org.auth('read_write')).send({ name: 'x', redirect_uris: ['https://a.example/cb'], scopes: ['workflows:read'] });
      expect(forbidden.status).toBe(403);
      expect((await main.t.http.get('/v1/oauth/clients')).status).toBe(401);
      const publicClient = await main.t.http.post('/v1/oauth/clients').set(org.auth()).send({ name: 'SPA', redirect_uris: ['http://[::1]:8080/cb'], scopes: ['workflows:read'], token_endpoint_auth_method: 'none' }).expect(201);
      expect(publicClient.body.data).not.toHaveProperty('client_secret');
    });

    it('refuses non-https redirect URIs (except loopback IPs), fragments, and unknown scopes', async () => {
      for (const [uri, field] of [['http://app.example.com/cb', 'redirect_uris[0]'], ['https://app.example.com/cb#x', 'redirect_uris[0]'], ['http://localhost/cb', 'redirect_uris[0]']]) {
        const res = await main.t.http.post('/v1/oauth/clients').set(org.auth()).send({ name: 'x', redirect_uris: [uri], scopes: ['workflows:read'] });
        expect(res.status, uri).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', field });
      }
      const scope = await main.t.http.post('/v1/oauth/clients').set(org.auth()).send({ name: 'x', redirect_uris: [REDIRECT], scopes: ['credentials:write'] });
      expect(scope.status).toBe(400);
      expect(scope.body.error.code).toBe('INVALID_REQUEST');
    });

    it('deletes a client of the organization only (404 elsewhere), and its tokens stop working at once', async () => {
      const registered = await register(['workflows:read']);
      const { access_token } = await tokens(registered);
      await main.t.http.get('/v1/workflows').set(bearer(access_token)).expect(200);
      const other = await createOrganization(main.t);
      const elsewhere = await main.t.http.delete(`/v1/oauth/clients/${registered.client.client_id}`).set(other.auth());
      expect(elsewhere.status).toBe(404);
      expect(elsewhere.body.error.code).toBe('OAUTH_CLIENT_NOT_FOUND');
      await main.t.http.delete(`/v1/oauth/clients/${registered.client.client_id}`).set(org.auth()).expect(200);
      const after = await main.t.http.get('/v1/workflows').set(bearer(access_token));
      expect(after.status).toBe(401);
      expect(after.body.error.code).toBe('INVALID_TOKEN');
    });
  });

  describe('authorization code + PKCE + refresh, driven by oauth4webapi', () => {
    it('confidential client (client_secret_basic): tokens, /v1/me, refresh rotation, introspection, revocation', async () => {
      const registered = await register(['workflows:read', 'workflows:write', 'executions:read']);
      const { url, verifier, state } = await consent(registered.client, { scope: 'workflows:read executions:read' });
      expect(url.searchParams.get('iss')).toBe(main.base);
      expect(url.searchParams.get('state')).toBe(state);
      const params = oauth.validateAuthResponse(as, registered.client, url, state);
      const tokenRes = await oauth.authorizationCodeGrantRequest(as, registered.client, registered.auth, params, REDIRECT, verifier, insecure);
      expect(tokenRes.headers.get('cache-control')).toBe('no-store');
      const result = await oauth.processAuthorizationCodeResponse(as, registered.client, tokenRes);
      expect(result).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'workflows:read executions:read' });
      expect(result.refresh_token).toBeTypeOf('string');
      const [header, payload] = result.access_token.split('.').slice(0, 2).map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()));
      expect(header).toMatchObject({ alg: 'HS256', typ: 'at+jwt' });
      expect(header.kid).toBeTypeOf('string');
      expect(payload).toMatchObject({ iss: main.base, sub: userId, org: org.id, client_id: registered.client.client_id, scope: 'workflows:read executions:read' });
      expect(payload.exp - payload.iat).toBe(3600);
      expect(payload.jti).toBeTypeOf('string');

      const me = await main.t.http.get('/v1/me').set(bearer(result.access_token)).expect(200);
      expect(me.body.data).toMatchObject({ credential_type: 'oauth', credential_id: registered.client.client_id, organization_id: org.id, scopes: ['workflows:read', 'executions:read'], user_id: userId });

      const refreshed = await oauth.processRefreshTokenResponse(as, registered.client, await oauth.refreshTokenGrantRequest(as, registered.client, registered.auth, result.refresh_token as string, insecure));
      expect(refreshed.refresh_token).not.toBe(result.refresh_token);
      await main.t.http.get('/v1/workflows').set(bearer(refreshed.access_token)).expect(200);

      const introspected = await oauth.processIntrospectionResponse(as, registered.client, await oauth.introspectionRequest(as, registered.client, registered.auth, refreshed.access_token, insecure));
      expect(introspected).toMatchObject({ active: true, client_id: registered.client.client_id, sub: userId, scope: 'workflows:read executions:read' });
      const refreshInfo = await oauth.processIntrospectionResponse(as, registered.client, await oauth.introspectionRequest(as, registered.client, registered.auth, refreshed.refresh_token as string, insecure));
      expect(refreshInfo).toMatchObject({ active: true, token_type: 'refresh_token' });

      // Revoking the access token: refused on /v1 at once, inactive on introspection; the refresh token still works.
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, registered.client, registered.auth, refreshed.access_token, insecure));
      const revoked = await main.t.http.get('/v1/workflows').set(bearer(refreshed.access_token));
      expect(revoked.status).toBe(401);
      expect(revoked.body.error.code).toBe('INVALID_TOKEN');
      const inactive = await oauth.processIntrospectionResponse(as, registered.client, await oauth.introspectionRequest(as, registered.client, registered.auth, refreshed.access_token, insecure));
      expect(inactive.active).toBe(false);

      // Revoking the refresh token revokes its grant: its access tokens and the refresh token itself.
      const again = await oauth.processRefreshTokenResponse(as, registered.client, await oauth.refreshTokenGrantRequest(as, registered.client, registered.auth, refreshed.refresh_token as string, insecure));
      await main.t.http.get('/v1/workflows').set(bearer(again.access_token)).expect(200);
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, registered.client, registered.auth, again.refresh_token as string, insecure));
      expect((await main.t.http.get('/v1/workflows').set(bearer(again.access_token))).status).toBe(401);
      const dead = await tokenRequest({ grant_type: 'refresh_token', refresh_token: again.refresh_token as string }, basicOf(registered));
      expect(dead.status).toBe(400);
      expect(dead.body.error).toBe('invalid_grant');
      // Unknown tokens: 200 all the same (RFC 7009 §2.2).
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, registered.client, registered.auth, 'not-a-token', insecure));
    });

    it('client_secret_post and public (none) clients complete the flow; a public client must send a code_challenge', async () => {
      for (const method of ['client_secret_post', 'none'] as const) {
        const registered = await register(['triggers:read'], method);
        const result = await tokens(registered);
        await main.t.http.get('/v1/triggers').set(bearer(result.access_token)).expect(200);
      }
      const publicClient = await register(['triggers:read'], 'none');
      const { url } = await consent(publicClient.client, { code_challenge: '', code_challenge_method: '' }).catch(() => ({ url: undefined as unknown as URL }));
      expect(url).toBeUndefined();
      const page = await fetch(`${main.base}/oauth/authorize?${new URLSearchParams({ client_id: publicClient.client.client_id, redirect_uri: REDIRECT, response_type: 'code', state: 's1' })}`, { redirect: 'manual' });
      expect(page.status).toBe(302);
      const location = new URL(page.headers.get('location') as string);
      expect(Object.fromEntries(location.searchParams)).toMatchObject({ error: 'invalid_request', state: 's1', iss: main.base });
    });

    it('client authentication: a wrong secret or another method than the registered one is 401 invalid_client', async () => {
      const registered = await register(['workflows:read']);
      const { code: c, verifier } = await code(registered);
      const wrong = await tokenRequest({ grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT, code_verifier: verifier }, { id: registered.client.client_id, secret: 'wocs_wrong' });
      expect(wrong.status).toBe(401);
      expect(wrong.body.error).toBe('invalid_client');
      expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic/);
      expect(wrong.headers.get('cache-control')).toBe('no-store');
      const post = await tokenRequest({ grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT, code_verifier: verifier, client_id: registered.client.client_id, client_secret: registered.secret as string });
      expect(post.status).toBe(401);
      const none = await tokenRequest({ grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT, code_verifier: verifier, client_id: registered.client.client_id });
      expect(none.status).toBe(401);
      // The code was not spent by those attempts.
      const ok = await tokenRequest({ grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT, code_verifier: verifier }, basicOf(registered));
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      const unsupported = await tokenRequest({ grant_type: 'password', username: email, password: PASSWORD }, basicOf(registered));
      expect(unsupported.body.error).toBe('unsupported_grant_type');
    });
  });

  describe('a confidential client registered without token_endpoint_auth_method', () => {
    /** Registered as the specification writes it: name, redirect_uris, scopes. */
    async function registerDefault(scopes: string[]) {
      const res = await main.t.http.post('/v1/oauth/clients').set(org.auth()).send({ name: `default ${Date.now()}`, redirect_uris: [REDIRECT], scopes });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return { id: res.body.data.client_id as string, secret: res.body.data.client_secret as string, data: res.body.data };
    }

    it('shows both secret methods, and authenticates with client_secret_post or client_secret_basic at /oauth/token, /oauth/revoke and /oauth/introspect', async () => {
      const registered = await registerDefault(['workflows:read']);
      expect(registered.data).toMatchObject({ token_endpoint_auth_method: 'client_secret_basic', token_endpoint_auth_methods: ['client_secret_basic', 'client_secret_post'] });
      const listed = (await main.t.http.get('/v1/oauth/clients').set(org.auth()).expect(200)).body.data.find((c: { id: string }) => c.id === registered.id);
      expect(listed.token_endpoint_auth_methods).toEqual(['client_secret_basic', 'client_secret_post']);
      const client: oauth.Client = { client_id: registered.id };
      for (const [name, auth, other] of [
        ['post', oauth.ClientSecretPost(registered.secret), oauth.ClientSecretBasic(registered.secret)],
        ['basic', oauth.ClientSecretBasic(registered.secret), oauth.ClientSecretPost(registered.secret)],
      ] as const) {
        const result = await tokens({ client, secret: registered.secret, auth });
        await main.t.http.get('/v1/workflows').set(bearer(result.access_token)).expect(200);
        // Refresh with the one method, introspect and revoke with the other: the client may use either on every request.
        const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, auth, result.refresh_token as string, insecure));
        const introspected = await oauth.processIntrospectionResponse(as, client, await oauth.introspectionRequest(as, client, other, refreshed.access_token, insecure));
        expect(introspected, name).toMatchObject({ active: true, client_id: registered.id });
        await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, other, refreshed.access_token, insecure));
        expect((await main.t.http.get('/v1/workflows').set(bearer(refreshed.access_token))).status, name).toBe(401);
        const inactive = await oauth.processIntrospectionResponse(as, client, await oauth.introspectionRequest(as, client, auth, refreshed.access_token, insecure));
        expect(inactive.active, name).toBe(false);
      }
      // The secret is still checked, whichever method carries it; and both at once is no method.
      const { code: c, verifier } = await code({ client, secret: registered.secret, auth: oauth.ClientSecretPost(registered.secret) });
      const redeem = { grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT, code_verifier: verifier };
      const wrongPost = await tokenRequest({ ...redeem, client_id: registered.id, client_secret: 'wocs_wrong' });
      expect([wrongPost.status, wrongPost.body.error]).toEqual([401, 'invalid_client']);
      const wrongBasic = await tokenRequest(redeem, { id: registered.id, secret: 'wocs_wrong' });
      expect([wrongBasic.status, wrongBasic.body.error]).toEqual([401, 'invalid_client']);
      const idAlone = await tokenRequest({ ...redeem, client_id: registered.id });
      expect([idAlone.status, idAlone.body.error]).toEqual([401, 'invalid_client']);
      const both = await tokenRequest({ ...redeem, client_id: registered.id, client_secret: registered.secret }, { id: registered.id, secret: registered.secret });
      expect([both.status, both.body.error]).toEqual([400, 'invalid_request']);
      const ok = await tokenRequest({ ...redeem, client_id: registered.id, client_secret: registered.secret });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    });

    it('a client registered with an explicit method is held to it at every endpoint', async () => {
      const post = await register(['workflows:read'], 'client_secret_post');
      const basic = await register(['workflows:read'], 'client_secret_basic');
      for (const [registered, wrong] of [
        [post, oauth.ClientSecretBasic(post.secret as string)],
        [basic, oauth.ClientSecretPost(basic.secret as string)],
      ] as const) {
        const result = await tokens(registered);
        const method = registered.client.token_endpoint_auth_method as string;
        const listed = (await main.t.http.get('/v1/oauth/clients').set(org.auth()).expect(200)).body.data.find((c: { id: string }) => c.id === registered.client.client_id);
        expect(listed).toMatchObject({ token_endpoint_auth_method: method, token_endpoint_auth_methods: [method] });
        await expect(oauth.refreshTokenGrantRequest(as, registered.client, wrong, result.refresh_token as string, insecure).then((r) => oauth.processRefreshTokenResponse(as, registered.client, r)), method).rejects.toMatchObject({ status: 401 });
        await expect(oauth.introspectionRequest(as, registered.client, wrong, result.access_token, insecure).then((r) => oauth.processIntrospectionResponse(as, registered.client, r)), method).rejects.toMatchObject({ status: 401 });
        await expect(oauth.revocationRequest(as, registered.client, wrong, result.access_token, insecure).then((r) => oauth.processRevocationResponse(r)), method).rejects.toMatchObject({ status: 401 });
        // Not revoked by the refused request.
        await main.t.http.get('/v1/workflows').set(bearer(result.access_token)).expect(200);
      }
    });
  });

  describe('refused redemptions, each with the RFC error', () => {
    let registered: Registered;
    beforeAll(async () => {
      registered = await register(['workflows:read']);
    });
    const redeem = (fields: Record<string, string>, who: Registered = registered) => tokenRequest({ grant_type: 'authorization_code', redirect_uri: REDIRECT, ...fields }, basicOf(who));

    it('code reuse: invalid_grant, and the tokens issued from the code are revoked', async () => {
      const { code: c, verifier } = await code(registered);
      const first = await redeem({ code: c, code_verifier: verifier });
      expect(first.status).toBe(200);
      await main.t.http.get('/v1/workflows').set(bearer(first.body.access_token as string)).expect(200);
      const second = await redeem({ code: c, code_verifier: verifier });
      expect(second.status).toBe(400);
      expect(second.body).toMatchObject({ error: 'invalid_grant' });
      expect(second.body.error_description).toBeTypeOf('string');
      const revoked = await main.t.http.get('/v1/workflows').set(bearer(first.body.access_token as string));
      expect(revoked.status).toBe(401);
      expect(revoked.body.error.code).toBe('INVALID_TOKEN');
      const refresh = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token as string }, basicOf(registered));
      expect(refresh.body.error).toBe('invalid_grant');
    });

    it('wrong redirect URI, wrong verifier, missing verifier: invalid_grant', async () => {
      const { code: c, verifier } = await code(registered);
      const otherRedirect = await redeem({ code: c, code_verifier: verifier, redirect_uri: 'http://127.0.0.1:7/other' });
      expect([otherRedirect.status, otherRedirect.body.error]).toEqual([400, 'invalid_grant']);
      const wrongVerifier = await redeem({ code: c, code_verifier: oauth.generateRandomCodeVerifier() });
      expect([wrongVerifier.status, wrongVerifier.body.error]).toEqual([400, 'invalid_grant']);
      const missingVerifier = await redeem({ code: c });
      expect([missingVerifier.status, missingVerifier.body.error]).toEqual([400, 'invalid_grant']);
      const missingCode = await redeem({ code_verifier: verifier });
      expect([missingCode.status, missingCode.body.error]).toEqual([400, 'invalid_request']);
    });

    it('an expired code (older than 10 minutes): invalid_grant', async () => {
      const { code: c, verifier } = await code(registered);
      // Travel in time: the code was issued 10 minutes and a second ago.
      await main.t.app.get(DataSource).query(`UPDATE oauth_authorization_codes SET expires_at = now() - interval '1 second' WHERE client_id = $1 AND used_at IS NULL`, [registered.client.client_id]);
      const res = await redeem({ code: c, code_verifier: verifier });
      expect([res.status, res.body.error]).toEqual([400, 'invalid_grant']);
    });

    it('a code redeemed by another client: invalid_grant, and its own client can still redeem it', async () => {
      const other = await register(['workflows:read']);
      const { code: c, verifier } = await code(registered);
      const stolen = await redeem({ code: c, code_verifier: verifier }, other);
      expect([stolen.status, stolen.body.error]).toEqual([400, 'invalid_grant']);
      expect((await redeem({ code: c, code_verifier: verifier })).status).toBe(200);
    });

    it('refresh-token reuse: invalid_grant, and the whole chain is revoked', async () => {
      const first = await tokens(registered);
      const second = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token as string }, basicOf(registered));
      expect(second.status).toBe(200);
      const reuse = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token as string }, basicOf(registered));
      expect([reuse.status, reuse.body.error]).toEqual([400, 'invalid_grant']);
      // The token rotated in before the reuse is dead too, and the access tokens of the chain.
      const latest = await tokenRequest({ grant_type: 'refresh_token', refresh_token: second.body.refresh_token as string }, basicOf(registered));
      expect([latest.status, latest.body.error]).toEqual([400, 'invalid_grant']);
      for (const token of [first.access_token, second.body.access_token as string]) {
        const res = await main.t.http.get('/v1/workflows').set(bearer(token));
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('INVALID_TOKEN');
      }
    });

    it('a refresh may narrow the scope, never widen it (invalid_scope)', async () => {
      const wide = await register(['workflows:read', 'triggers:read']);
      const first = await tokens(wide);
      const widen = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token as string, scope: 'workflows:read webhooks:read' }, basicOf(wide));
      expect([widen.status, widen.body.error]).toEqual([400, 'invalid_scope']);
      const narrow = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token as string, scope: 'triggers:read' }, basicOf(wide));
      expect(narrow.status).toBe(200);
      expect(narrow.body.scope).toBe('triggers:read');
    });
  });

  describe('the authorization endpoint and its page', () => {
    let registered: Registered;
    beforeAll(async () => {
      registered = await register(['workflows:read', 'triggers:read']);
    });
    const base = () => ({ client_id: registered.client.client_id, redirect_uri: REDIRECT, response_type: 'code', state: 'xyz<&>"', scope: 'workflows:read' });

    it('renders a self-contained page: CSRF token and cookie, state carried, no framing, strict CSP, no caching', async () => {
      const page = await getPage(main.base, base());
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      const csp = page.headers.get('content-security-policy') as string;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("form-action 'self' http://127.0.0.1:7");
      expect(page.headers.get('cache-control')).toBe('no-store');
      expect(page.cookie).toMatch(/^oauth_csrf=/);
      expect(page.headers.get('set-cookie')).toMatch(/HttpOnly/);
      expect(page.headers.get('set-cookie')).toMatch(/SameSite=Strict/);
      expect(page.hidden.csrf_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(page.hidden.state).toBe('xyz<&>"');
      expect(page.html).not.toContain('xyz<&>"');
      expect(page.html).not.toMatch(/<script|src="http|href="http/);
    });

    it('shows an error page, never a redirect, for an unknown client or an unregistered redirect URI', async () => {
      for (const params of [
        { ...base(), client_id: '00000000-0000-4000-8000-000000000000' },
        { ...base(), client_id: 'nope' },
        { ...base(), redirect_uri: 'https://evil.example/cb' },
        { ...base(), redirect_uri: `${REDIRECT}/` },
      ]) {
        const page = await getPage(main.base, params);
        expect(page.status, JSON.stringify(params)).toBe(400);
        expect(page.headers.get('location')).toBeNull();
        expect(page.headers.get('content-type')).toMatch(/^text\/html/);
        expect(page.headers.get('x-frame-options')).toBe('DENY');
      }
    });

    it('redirects unsupported_response_type and invalid_scope, with state and iss', async () => {
      for (const [params, error] of [
        [{ ...base(), response_type: 'token' }, 'unsupported_response_type'],
        [{ ...base(), scope: 'workflows:read webhooks:read' }, 'invalid_scope'],
        [{ ...base(), scope: 'credentials:read' }, 'invalid_scope'],
        [{ ...base(), code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }, 'invalid_request'],
      ] as const) {
        const res = await fetch(`${main.base}/oauth/authorize?${new URLSearchParams(params)}`, { redirect: 'manual' });
        expect(res.status).toBe(302);
        const location = new URL(res.headers.get('location') as string);
        expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
        expect(Object.fromEntries(location.searchParams)).toMatchObject({ error, state: 'xyz<&>"', iss: main.base });
      }
    });

    it('POST: no CSRF cookie or token is 403, wrong password 401, deny redirects access_denied', async () => {
      const page = await getPage(main.base, base());
      const noCookie = await postForm(main.base, page, { email, password: PASSWORD, decision: 'approve' }, '');
      expect(noCookie.status).toBe(403);
      expect(noCookie.headers.get('location')).toBeNull();
      const badToken = await postForm(main.base, { ...page, hidden: { ...page.hidden, csrf_token: 'x'.repeat(43) } }, { email, password: PASSWORD, decision: 'approve' });
      expect(badToken.status).toBe(403);
      const wrong = await postForm(main.base, page, { email, password: 'not the password', decision: 'approve' });
      expect(wrong.status).toBe(401);
      expect(await wrong.text()).toContain('Wrong email or password');
      const denied = await postForm(main.base, page, { decision: 'deny' });
      expect(denied.status).toBe(302);
      const location = new URL(denied.headers.get('location') as string);
      expect(Object.fromEntries(location.searchParams)).toEqual({ error: 'access_denied', error_description: 'The user denied the request', state: 'xyz<&>"', iss: main.base });
    });

    it('a user of another organization cannot authorize the client', async () => {
      const other = await createOrganization(main.t);
      const outsider = `outsider-${Date.now()}@example.com`;
      await main.t.app.get(UsersService).create(other.id, outsider, PASSWORD);
      const page = await getPage(main.base, base());
      const res = await postForm(main.base, page, { email: outsider, password: PASSWORD, decision: 'approve' });
      expect(res.status).toBe(401);
    });

    it('limits sign-in attempts per email (429 with Retry-After), whatever the password', async () => {
      const target = `limited-${Date.now()}@example.com`;
      const page = await getPage(main.base, base());
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await postForm(main.base, page, { email: target, password: `guess-${i}-xxxxxxxx`, decision: 'approve' })).status);
      expect(statuses).toEqual([401, 401, 401, 401, 429]);
      const limited = await postForm(main.base, page, { email: target, password: 'another guess', decision: 'approve' });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    });

    it('limits sign-in attempts per source IP', async () => {
      // A Redis prefix of its own inside the file's, so that this file's other sign-ins from 127.0.0.1 do
      // not count, and the file's clean-up removes its keys.
      const strict = await listen({ OAUTH_LOGIN_ATTEMPTS_PER_IP: '2', REDIS_KEY_PREFIX: `${inject('redisKeyPrefix')}:oauth-ip` });
      try {
        const page = await getPage(strict.base, base());
        const statuses: number[] = [];
        for (let i = 0; i < 3; i++) statuses.push((await postForm(strict.base, page, { email: `ip-${i}-${Date.now()}@example.com`, password: 'wrong password', decision: 'approve' })).status);
        expect(statuses).toEqual([401, 401, 429]);
      } finally {
        await strict.t.close();
      }
    });
  });

  describe('scopes on /v1 with an OAuth token', () => {
    it('allows exactly the routes whose scope the token carries, one route of each module; 403 SCOPE_INSUFFICIENT otherwise', async () => {
      const workflow = await createWorkflow(main.t, org);
      const routes: [string, string][] = [
        ['workflows:read', `/v1/workflows/${workflow.id}`],
        ['triggers:read', '/v1/triggers'],
        ['executions:read', `/v1/workflows/${workflow.id}/executions`],
        ['webhooks:read', '/v1/webhooks'],
      ];
      for (const [scope, path] of routes) {
        const registered = await register([scope]);
        const { access_token } = await tokens(registered);
        for (const [otherScope, otherPath] of routes) {
          const res = await main.t.http.get(otherPath).set(bearer(access_token));
          if (otherScope === scope) expect(res.status, `${scope} → ${otherPath}`).toBe(200);
          else {
            expect(res.status, `${scope} → ${otherPath}`).toBe(403);
            expect(res.body.error.code).toBe('SCOPE_INSUFFICIENT');
          }
        }
      }
      const reader = await register(['workflows:read']);
      const { access_token } = await tokens(reader);
      const write = await main.t.http.post('/v1/workflows').set(bearer(access_token)).send({ name: 'not allowed' });
      expect([write.status, write.body.error.code]).toEqual([403, 'SCOPE_INSUFFICIENT']);
      // Credential management is never reachable with a token.
      const manage = await main.t.http.get('/v1/oauth/clients').set(bearer(access_token));
      expect([manage.status, manage.body.error.code]).toEqual([403, 'SCOPE_INSUFFICIENT']);
    });

    it("an api trigger with authentication oauth is fired by an OAuth token only (403 INSUFFICIENT_PERMISSIONS for others)", async () => {
      const workflow = await createWorkflow(main.t, org);
      const registered = await register(['triggers:write']);
      const { access_token } = await tokens(registered);
      const cases: [string, Record<string, string>, number][] = [
        ['oauth', bearer(access_token), 202],
        ['oauth', org.auth('read_write'), 403],
        ['api_key', bearer(access_token), 403],
        ['any', bearer(access_token), 202],
      ];
      for (const [authentication, auth, status] of cases) {
        const trigger = await createTrigger(main.t, org, workflow.id, 'api', { authentication });
        const res = await main.t.http.post(`/v1/triggers/${trigger.id}/fire`).set(auth).send({ data: { n: 1 } });
        expect(res.status, `${authentication} ${auth.Authorization.slice(0, 12)}`).toBe(status);
        if (status === 403) expect(res.body.error.code).toBe('INSUFFICIENT_PERMISSIONS');
      }
    });

    it('a tampered, foreign-key or garbage token is 401 INVALID_TOKEN', async () => {
      const registered = await register(['workflows:read']);
      const { access_token } = await tokens(registered);
      const [h, p, s] = access_token.split('.');
      const claims = JSON.parse(Buffer.from(p as string, 'base64url').toString());
      const tampered = `${h}.${Buffer.from(JSON.stringify({ ...claims, scope: 'workflows:read workflows:delete' })).toString('base64url')}.${s}`;
      for (const token of [tampered, `${h}.${p}.${'A'.repeat(43)}`, `${h}.${p}`]) {
        const res = await main.t.http.get('/v1/workflows').set(bearer(token));
        expect(res.status).toBe(401);
        expect(['INVALID_TOKEN', 'INVALID_API_KEY']).toContain(res.body.error.code);
      }
      const res = await main.t.http.get('/v1/workflows').set(bearer(tampered));
      expect(res.body.error.code).toBe('INVALID_TOKEN');
    });
  });

  describe('signing-key rotation (TOKEN_SIGNING_KEY holds several keys, newest first)', () => {
    it('a token signed by the old key verifies while the old key is listed; the new key signs; a removed key no longer verifies', async () => {
      const registered = await register(['workflows:read']);
      const old = await tokens(registered);
      const oldKid = JSON.parse(Buffer.from(old.access_token.split('.')[0] as string, 'base64url').toString()).kid;
      // Processes of one deployment share PUBLIC_BASE_URL, the issuer of the tokens.
      const rotated = await listen({ TOKEN_SIGNING_KEY: `${NEW_KEY},${OLD_KEY}`, PUBLIC_BASE_URL: main.base });
      try {
        // The other process shares the database: the refresh token is redeemable there, the old token verifies there.
        await rotated.t.http.get('/v1/workflows').set(bearer(old.access_token)).expect(200);
        const refreshed = await rotated.t.http
          .post('/oauth/token')
          .type('form')
          .auth(registered.client.client_id, registered.secret as string)
          .send({ grant_type: 'refresh_token', refresh_token: old.refresh_token as string })
          .expect(200);
        const newKid = JSON.parse(Buffer.from((refreshed.body.access_token as string).split('.')[0] as string, 'base64url').toString()).kid;
        expect(newKid).not.toBe(oldKid);
        await rotated.t.http.get('/v1/workflows').set(bearer(refreshed.body.access_token)).expect(200);
        // A process that still has the old key only does not know the new kid.
        expect((await main.t.http.get('/v1/workflows').set(bearer(refreshed.body.access_token))).status).toBe(401);
      } finally {
        await rotated.t.close();
      }
      const retired = await listen({ TOKEN_SIGNING_KEY: NEW_KEY, PUBLIC_BASE_URL: main.base });
      try {
        const res = await retired.t.http.get('/v1/workflows').set(bearer(old.access_token));
        expect([res.status, res.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
      } finally {
        await retired.t.close();
      }
    });
  });

  describe('errors of /oauth/* in the RFC 6749 shape', () => {
    it('a JSON body on the token endpoint is 415 invalid_request; an unknown path is not_found', async () => {
      const json = await fetch(`${main.base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"grant_type":"authorization_code"}' });
      expect(json.status).toBe(415);
      expect(await json.json()).toMatchObject({ error: 'invalid_request' });
      const missing = await fetch(`${main.base}/oauth/nothing`);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toMatchObject({ error: 'not_found' });
      const noClient = await tokenRequest({ grant_type: 'authorization_code', code: 'x' });
      expect([noClient.status, noClient.body.error]).toEqual([401, 'invalid_client']);
    });

    it('introspection needs a confidential client', async () => {
      const spa = await register(['workflows:read'], 'none');
      const res = await fetch(`${main.base}/oauth/introspect`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: 'x', client_id: spa.client.client_id }) });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_client');
    });
  });
});
