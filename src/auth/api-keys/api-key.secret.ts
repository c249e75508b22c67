import { createHash, randomBytes } from 'node:crypto';

const KEY_MARKER = 'wfk_';
const PREFIX_LENGTH = 12;

/** A new key: a marker plus 32 random bytes (256 bits) in base64url. Shown once, stored hashed. */
export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const key = KEY_MARKER + randomBytes(32).toString('base64url');
  return { key, prefix: key.slice(0, PREFIX_LENGTH), hash: hashApiKey(key) };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function visiblePrefix(key: string): string {
  return key.slice(0, PREFIX_LENGTH);
}
