// An OAuth access token for the bench, obtained as a client would: a user (CLI), a registered client,
// the consent form, and the code exchanged with PKCE at the token endpoint.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { ROOT } from './context.mjs';

const run = promisify(execFile);
const REDIRECT = 'http://127.0.0.1:9/bench/callback';

export async function obtainOAuthToken(ctx, appUrl, scopes = ['workflows:read']) {
  const me = await ctx.api(appUrl, 'GET', '/v1/me');
  const org = me.body?.data?.organization_id;
  const email = `bench-${randomBytes(6).toString('hex')}@example.com`;
  const password = randomBytes(18).toString('base64url');
  await run(process.execPath, ['dist/src/cli.js', 'user:create', '--org', org, '--email', email, `--password=${password}`], {
    cwd: ROOT,
    env: ctx.childEnv({ REDIS_URL: ctx.config.redisUrl, REDIS_KEY_PREFIX: ctx.redisKeyPrefix, LOG_LEVEL: 'warn' }),
  });
  const client = await ctx.api(appUrl, 'POST', '/v1/oauth/clients', { name: 'bench client', redirect_uris: [REDIRECT], scopes });
  if (client.status !== 201) throw new Error(`POST /v1/oauth/clients answered ${client.status}: ${JSON.stringify(client.body)}`);
  const { client_id: clientId, client_secret: secret } = client.body.data;
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const query = new URLSearchParams({ client_id: clientId, redirect_uri: REDIRECT, response_type: 'code', scope: scopes.join(' '), state: 'bench', code_challenge: challenge, code_challenge_method: 'S256' });
  const page = await fetch(`${appUrl}/oauth/authorize?${query}`);
  const html = await page.text();
  if (page.status !== 200) throw new Error(`GET /oauth/authorize answered ${page.status}`);
  const hidden = Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2].replace(/&#(\d+);/g, (_, c) => String.fromCharCode(Number(c)))]));
  const form = await fetch(`${appUrl}/oauth/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: page.headers.get('set-cookie').split(';')[0] },
    body: new URLSearchParams({ ...hidden, email, password, decision: 'approve' }),
  });
  const code = new URL(form.headers.get('location') ?? 'http://x/').searchParams.get('code');
  if (form.status !== 302 || !code) throw new Error(`POST /oauth/authorize answered ${form.status}`);
  const token = await fetch(`${appUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }),
  });
  const body = await token.json();
  if (token.status !== 200) throw new Error(`POST /oauth/token answered ${token.status}: ${JSON.stringify(body)}`);
  return body.access_token;
}
