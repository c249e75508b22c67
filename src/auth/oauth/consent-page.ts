import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Response } from 'express';

/** The scopes, as a person reads them on the consent page. */
const ACTION_WORDS: Record<string, string> = { read: 'read', write: 'create and change', delete: 'delete' };

export const CSRF_COOKIE = 'oauth_csrf';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function describeScope(scope: string): string {
  const [resource, action] = scope.split(':');
  return `${ACTION_WORDS[action ?? ''] ?? action} your ${resource}`;
}

const STYLE = `body{font:16px/1.4 system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1b1f24}
h1{font-size:1.3rem}ul{padding-left:1.2rem}label{display:block;margin:.8rem 0 .2rem}input[type=email],input[type=password]{width:100%;padding:.5rem;box-sizing:border-box}
.error{background:#fdecea;border:1px solid #f5c2c0;padding:.6rem;border-radius:4px}.buttons{margin-top:1.2rem;display:flex;gap:.6rem}
button{padding:.5rem 1rem;font-size:1rem}`;

/**
 * The security headers of both pages: no framing (clickjacking), a CSP that allows nothing but the
 * page's own nonce'd style and posting the form to us (and, since browsers apply form-action to the
 * redirect that follows, to the client's redirect URI), no caching, no referrer (the query carries state).
 */
function setPageHeaders(res: Response, status: number, nonce: string, redirectOrigin?: string): void {
  res.status(status);
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader(
    'Content-Security-Policy',
    `default-src 'none'; style-src 'nonce-${nonce}'; form-action 'self'${redirectOrigin ? ` ${redirectOrigin}` : ''}; frame-ancestors 'none'; base-uri 'none'`,
  );
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Content-Type-Options', 'nosniff');
}

function page(nonce: string, title: string, body: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><style nonce="${nonce}">${STYLE}</style></head><body>${body}</body></html>`;
}

/** The error page shown instead of redirecting (unknown client, unregistered redirect URI). */
export function sendErrorPage(res: Response, status: number, message: string): void {
  const nonce = randomBytes(16).toString('base64');
  setPageHeaders(res, status, nonce);
  res.send(page(nonce, 'Authorization error', `<h1>This authorization request cannot be processed</h1><p class="error">${escapeHtml(message)}</p>`));
}

export interface ConsentPage {
  clientName: string;
  scopes: string[];
  /** The authorization request's parameters, carried through the form. */
  carried: Record<string, string>;
  csrfToken: string;
  redirectUri: string;
  email?: string;
  error?: string;
}

/** The sign-in and consent form, posting to POST /oauth/authorize. */
export function sendConsentPage(res: Response, status: number, view: ConsentPage): void {
  const nonce = randomBytes(16).toString('base64');
  setPageHeaders(res, status, nonce, new URL(view.redirectUri).origin);
  const hidden = Object.entries({ ...view.carried, csrf_token: view.csrfToken })
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  const scopes = view.scopes.map((s) => `<li>${escapeHtml(describeScope(s))} <code>${escapeHtml(s)}</code></li>`).join('');
  const body = `<h1>${escapeHtml(view.clientName)} asks for access</h1>
<p>Sign in to allow it to:</p><ul>${scopes}</ul>
${view.error ? `<p class="error" role="alert">${escapeHtml(view.error)}</p>` : ''}
<form method="post" action="/oauth/authorize">${hidden}
<label for="email">Email</label><input id="email" type="email" name="email" autocomplete="username" value="${escapeHtml(view.email ?? '')}">
<label for="password">Password</label><input id="password" type="password" name="password" autocomplete="current-password">
<div class="buttons"><button type="submit" name="decision" value="approve">Allow</button><button type="submit" name="decision" value="deny">Deny</button></div>
</form>`;
  res.send(page(nonce, `Authorize ${view.clientName}`, body));
}

/**
 * CSRF protection of the consent form, stateless so that any API process can check it: a random
 * nonce in an HttpOnly, SameSite=Strict cookie, and in the form an HMAC of it under a key derived
 * from TOKEN_SIGNING_KEY. A cross-site form post carries neither the cookie nor a matching token.
 */
export class CsrfTokens {
  constructor(
    private readonly key: Buffer,
    private readonly secureCookie: boolean,
  ) {}

  /** The nonce of the request's cookie when well formed, else a new one (set on the response). */
  issue(cookieHeader: string | undefined, res: Response): string {
    let nonce = readCookie(cookieHeader, CSRF_COOKIE);
    if (!nonce || !/^[A-Za-z0-9_-]{22}$/.test(nonce)) {
      nonce = randomBytes(16).toString('base64url');
      res.setHeader('Set-Cookie', `${CSRF_COOKIE}=${nonce}; Path=/oauth; HttpOnly; SameSite=Strict; Max-Age=3600${this.secureCookie ? '; Secure' : ''}`);
    }
    return this.tokenFor(nonce);
  }

  verify(cookieHeader: string | undefined, token: unknown): boolean {
    const nonce = readCookie(cookieHeader, CSRF_COOKIE);
    if (!nonce || typeof token !== 'string') return false;
    const expected = Buffer.from(this.tokenFor(nonce));
    const given = Buffer.from(token);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }

  private tokenFor(nonce: string): string {
    return createHmac('sha256', this.key).update(nonce).digest('base64url');
  }
}

function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
