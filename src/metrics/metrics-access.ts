import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { DomainError } from '../common/errors/domain-error.js';
import { MetricsNotLocalError, MetricsTokenInvalidError, MetricsTokenMissingError } from './metrics.errors.js';

/** Who may scrape: the token (METRICS_TOKEN), and whether the process runs with NODE_ENV=production. */
export interface MetricsAccessPolicy {
  token?: string;
  production: boolean;
}

/**
 * Why a scrape is refused, or null when it may proceed (the API's `/metrics`, the worker's health
 * port alike). With a token: the request's bearer credential must be it (compared in constant time,
 * as SHA-256 digests, so neither the content nor the length leaks). Without one: anyone in
 * development, only loopback clients in production. `clientAddress` is the address as `TRUST_PROXY`
 * derives it (Express's `req.ip`).
 */
export function metricsRefusal(policy: MetricsAccessPolicy, authorization: string | undefined, clientAddress: string | undefined): DomainError | null {
  if (policy.token !== undefined) {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
    if (!match) return new MetricsTokenMissingError();
    return sameSecret(match[1]!, policy.token) ? null : new MetricsTokenInvalidError();
  }
  if (policy.production && !isLoopback(clientAddress)) return new MetricsNotLocalError();
  return null;
}

function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** 127.0.0.0/8, ::1, and IPv4 loopback written as IPv6 (::ffff:127.x.y.z). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (isIP(v4) === 4) return v4.startsWith('127.');
  return isIP(address) === 6 && /^(0{0,4}:){2,7}0{0,3}1$|^::1$/i.test(address);
}
