import { hash, randomBytes } from 'node:crypto';

const KEY_MARKER = 'wfk_';
const PREFIX_LENGTH = 12;

/** A new key: a marker plus 32 random bytes (256 bits) in base64url. Shown once, stored hashed. */
export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const key = KEY_MARKER + randomBytes(32).toString('base64url');
  return { key, prefix: key.slice(0, PREFIX_LENGTH), hash: hashApiKey(key) };
}

/** Runs on every authenticated request (the cache is keyed by it): the one-shot hash() is ~4x cheaper than createHash(). */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function visiblePrefix(key: string): string {
  return key.slice(0, PREFIX_LENGTH);
}
