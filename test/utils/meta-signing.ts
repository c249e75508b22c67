import { createHmac } from 'node:crypto';

/**
 * X-Hub-Signature-256 as Meta computes it: "sha256=" and the hex HMAC-SHA256 of the raw body bytes
 * keyed with the app secret. The tests' own implementation, so a bug in the app's check cannot
 * agree with itself.
 */
export function metaSignature(appSecret: string, rawBody: string | Buffer): string {
  return `sha256=${createHmac('sha256', appSecret).update(rawBody).digest('hex')}`;
}
