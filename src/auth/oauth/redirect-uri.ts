import { isIP } from 'node:net';

export const MAX_REDIRECT_URI_LENGTH = 2000;

/**
 * Why a redirect URI cannot be registered, or undefined when it can (RFC 6749 §3.1.2, RFC 9700 §2.1,
 * RFC 8252 §7.3): an absolute https URL, or http on a loopback IP literal (127.0.0.0/8, [::1]) for
 * native apps; no fragment, no user info. `localhost` is refused, as RFC 8252 §8.3 advises (it
 * may resolve elsewhere). Matching at authorization time is exact string comparison.
 */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return `must be at most ${MAX_REDIRECT_URI_LENGTH} characters`;
  if (/\s/.test(uri)) return 'must not contain whitespace';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URL';
  }
  if (uri.includes('#')) return 'must not contain a fragment';
  if (url.username !== '' || url.password !== '') return 'must not contain user information';
  if (url.protocol === 'https:') return url.hostname === '' ? 'must name a host' : undefined;
  if (url.protocol === 'http:') return isLoopback(url.hostname) ? undefined : 'must use https (http only on a loopback IP: 127.0.0.1 or [::1])';
  return 'must use https (http only on a loopback IP: 127.0.0.1 or [::1])';
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) === 4) return host.startsWith('127.');
  return isIP(host) === 6 && host === '::1';
}
