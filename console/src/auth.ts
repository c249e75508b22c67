/**
 * Sign-in through the service's own OAuth server: authorization code with PKCE (S256) as the
 * deployment's public console client. The access token lives in this module's memory only; the
 * rotating refresh token is kept in sessionStorage (this tab only) so that a reload does not sign
 * the user out. Sign-out revokes the grant (POST /oauth/revoke with the refresh token).
 */

/** The console's client id (migration ConsoleOAuthClient; src/auth/oauth/console-client.ts). */
export const CONSOLE_CLIENT_ID = 'c0501e00-0000-4000-8000-000000000001';

/** What the console asks for at sign-in: reading only. Write scopes are asked for by the actions that need them. */
export const READ_SCOPES = ['workflows:read', 'triggers:read', 'executions:read', 'analytics:read', 'webhooks:read', 'channels:read'];

const PENDING = 'console.pending';
const REFRESH = 'console.refresh';

interface Tokens {
  access: string;
  expiresAt: number;
  scopes: string[];
}

let tokens: Tokens | null = null;
let refreshing: Promise<Tokens | null> | null = null;

const redirectUri = () => `${location.origin}/console/`;

function base64url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function random(bytes = 32): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** Starts the authorization request: to the consent page, back to `returnTo` afterwards. */
export async function signIn(scopes: string[] = READ_SCOPES, returnTo = location.pathname + location.search): Promise<void> {
  const verifier = random(32);
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  const state = random(16);
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, returnTo }));
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: CONSOLE_CLIENT_ID,
    redirect_uri: redirectUri(),
    scope: [...new Set(scopes)].join(' '),
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  location.assign(`/oauth/authorize?${params}`);
}

/** Asks again with one more scope (an action that changes something), coming back to this page. */
export function askFor(scope: string): Promise<void> {
  return signIn([...(tokens?.scopes ?? READ_SCOPES), scope]);
}

export function hasScope(scope: string): boolean {
  return tokens?.scopes.includes(scope) ?? false;
}

async function tokenRequest(body: Record<string, string>): Promise<Tokens> {
  const res = await fetch('/oauth/token', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...body, client_id: CONSOLE_CLIENT_ID }),
  });
  const json = (await res.json()) as { access_token?: string; refresh_token?: string; expires_in?: number; scope?: string; error_description?: string };
  if (!res.ok || !json.access_token || !json.refresh_token) throw new Error(json.error_description ?? `sign-in failed (${res.status})`);
  sessionStorage.setItem(REFRESH, json.refresh_token);
  return { access: json.access_token, expiresAt: Date.now() + (json.expires_in ?? 3600) * 1000, scopes: (json.scope ?? '').split(' ').filter(Boolean) };
}

/**
 * On load: redeems an authorization response in the URL (then puts back the page the user came
 * from), else refreshes from a stored refresh token. Returns an error message, or null.
 */
export async function completeSignIn(): Promise<string | null> {
  const url = new URL(location.href);
  const code = url.searchParams.get('code');
  const error = url.searchParams.get('error');
  if (!code && !error) return null;
  const pending = JSON.parse(sessionStorage.getItem(PENDING) ?? 'null') as { verifier: string; state: string; returnTo: string } | null;
  sessionStorage.removeItem(PENDING);
  const returnTo = pending?.returnTo && pending.returnTo.startsWith('/console/') ? pending.returnTo : '/console/';
  history.replaceState(null, '', returnTo);
  if (error) return url.searchParams.get('error_description') ?? error;
  if (!pending || url.searchParams.get('state') !== pending.state) return 'The sign-in response does not match the request made from this tab.';
  try {
    // A grant asked for again with more scopes replaces the one before, which is revoked.
    const previous = sessionStorage.getItem(REFRESH);
    tokens = await tokenRequest({ grant_type: 'authorization_code', code: code as string, redirect_uri: redirectUri(), code_verifier: pending.verifier });
    if (previous) void revoke(previous);
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

/** A valid access token, refreshed (rotating the refresh token) when near expiry; null when signed out. */
export async function accessToken(force = false): Promise<string | null> {
  if (tokens && !force && tokens.expiresAt - 60_000 > Date.now()) return tokens.access;
  const refresh = sessionStorage.getItem(REFRESH);
  if (!refresh) return null;
  refreshing ??= tokenRequest({ grant_type: 'refresh_token', refresh_token: refresh })
    .catch(() => {
      sessionStorage.removeItem(REFRESH);
      return null;
    })
    .finally(() => (refreshing = null));
  tokens = await refreshing;
  return tokens?.access ?? null;
}

export async function signOut(): Promise<void> {
  const refresh = sessionStorage.getItem(REFRESH);
  sessionStorage.removeItem(REFRESH);
  tokens = null;
  if (refresh) await revoke(refresh);
}

/** Revokes a grant through its refresh token: every access token issued from it is refused from then on. */
async function revoke(refresh: string): Promise<void> {
  await fetch('/oauth/revoke', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: refresh, token_type_hint: 'refresh_token', client_id: CONSOLE_CLIENT_ID }),
  });
}
