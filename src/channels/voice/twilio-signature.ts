import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * X-Twilio-Signature as Twilio documents it: the base64 HMAC-SHA1, keyed with the account's auth token,
 * of the full public URL of the request (scheme, host, path and query as Twilio called it) followed by
 * each POST parameter's name and value, sorted by name (a repeated name: its distinct values sorted, as Twilio's own library does).
 */
export function twilioSignature(authToken: string, url: string, params: URLSearchParams): string {
  const byName = new Map<string, string[]>();
  for (const [name, value] of params) byName.set(name, [...(byName.get(name) ?? []), value]);
  let data = url;
  for (const name of [...byName.keys()].sort()) for (const value of [...new Set(byName.get(name))].sort()) data += name + value;
  return createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64');
}

/** The header checked against the expected signature in constant time; false when missing or malformed. */
export function twilioSignatureMatches(authToken: string, url: string, params: URLSearchParams, header: string | string[] | undefined): boolean {
  const given = Array.isArray(header) ? header[0] : header;
  if (!given || authToken === '' || !/^[A-Za-z0-9+/]{27}=$/.test(given.trim())) return false;
  const expected = Buffer.from(twilioSignature(authToken, url, params), 'base64');
  return timingSafeEqual(expected, Buffer.from(given.trim(), 'base64'));
}
