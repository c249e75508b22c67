import { hash, timingSafeEqual } from 'node:crypto';

/** RFC 7636 §4.1 / §4.2: 43-128 unreserved characters (a verifier, and an S256 challenge is 43). */
const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;

export function isPkceValue(value: string): boolean {
  return PKCE_VALUE.test(value);
}

/** Whether BASE64URL(SHA256(verifier)) equals the challenge (RFC 7636 §4.6, S256 only). */
export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!isPkceValue(verifier)) return false;
  const computed = Buffer.from(hash('sha256', verifier, 'base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}
