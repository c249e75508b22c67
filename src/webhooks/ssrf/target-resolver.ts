import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { CidrList, isPublicAddress } from './address-classifier.js';

/** Resolves a host name to every address (the system resolver, as connections would). */
export type HostResolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: HostResolver = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));

/** The host resolves only to addresses deliveries may not reach. */
export class TargetNotAllowedError extends Error {
  readonly code = 'ETARGETNOTALLOWED';
  constructor(readonly address: string) {
    super('target address not allowed');
  }
}

/** The host does not resolve (or not in time). */
export class TargetUnresolvedError extends Error {
  readonly code = 'ETARGETUNRESOLVED';
  constructor(hostname: string, reason: string) {
    super(`host ${hostname} does not resolve (${reason})`);
  }
}

export interface TargetPolicy {
  allowPrivate: boolean;
  /** When not empty, the only ranges deliveries may reach. */
  allowed: CidrList;
}

export function addressAllowed(address: string, policy: TargetPolicy): boolean {
  if (!policy.allowed.empty && !policy.allowed.contains(address)) return false;
  return policy.allowPrivate || isPublicAddress(address);
}

/**
 * Resolves a URL's host (an IP literal stays itself) and checks every address; one refused address
 * refuses the host, so that a name mixing public and internal records cannot be used to reach
 * inside. The checked addresses are returned for the connection to be pinned to them.
 */
export async function resolveTarget(hostname: string, policy: TargetPolicy, resolver: HostResolver = systemResolver, timeoutMs = 3000): Promise<LookupAddress[]> {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  const family = isIP(host);
  let addresses: LookupAddress[];
  if (family !== 0) {
    addresses = [{ address: host, family }];
  } else {
    let timer: NodeJS.Timeout | undefined;
    try {
      addresses = await Promise.race([
        resolver(host),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs))),
      ]);
    } catch (error) {
      throw new TargetUnresolvedError(host, (error as NodeJS.ErrnoException).code ?? (error as Error).message);
    } finally {
      clearTimeout(timer);
    }
    if (addresses.length === 0) throw new TargetUnresolvedError(host, 'no addresses');
  }
  const refused = addresses.find((a) => !addressAllowed(a.address, policy));
  if (refused) throw new TargetNotAllowedError(refused.address);
  return addresses;
}

/**
 * A `lookup` for the socket that answers only the addresses already checked, so no second DNS
 * query can rebind the name to an internal address between the check and the connection.
 */
export function pinnedLookup(addresses: readonly LookupAddress[]): LookupFunction {
  return ((_hostname: string, options: { all?: boolean; family?: number | string } | number, callback: (...args: unknown[]) => void) => {
    const opts = typeof options === 'number' ? { family: options } : (options ?? {});
    const family = opts.family === 'IPv4' ? 4 : opts.family === 'IPv6' ? 6 : Number(opts.family ?? 0);
    const candidates = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : [...addresses];
    if (candidates.length === 0) {
      callback(Object.assign(new Error('no checked address of the requested family'), { code: 'ENOTFOUND' }));
      return;
    }
    if (opts.all) callback(null, candidates);
    else callback(null, (candidates[0] as LookupAddress).address, (candidates[0] as LookupAddress).family);
  }) as unknown as LookupFunction;
}

/**
 * Checked addresses of host names, reused for `ttlMs`; an IP literal's (a pure function of the
 * literal and the policy) for as long as the process runs. Only answers that passed the check are
 * kept (a refusal or failure is asked again next time). Safe against rebinding because what is
 * cached is what connections are pinned to: a name whose DNS answer changes to an internal address
 * keeps connecting to the checked address until the entry expires, then is checked again and
 * refused. Concurrent misses for one name share one lookup.
 */
export class CheckedTargetCache {
  private readonly entries = new Map<string, { addresses: Promise<LookupAddress[]>; expires: number }>();

  constructor(private readonly ttlMs: number) {}

  resolve(hostname: string, check: (hostname: string) => Promise<LookupAddress[]>): Promise<LookupAddress[]> {
    const now = Date.now();
    const hit = this.entries.get(hostname);
    if (hit && hit.expires > now) return hit.addresses;
    const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
    const literal = isIP(host) !== 0;
    if (!literal && this.ttlMs <= 0) return check(hostname);
    const addresses = check(hostname);
    const entry = { addresses, expires: literal ? Number.POSITIVE_INFINITY : now + this.ttlMs };
    if (this.entries.size >= 10_000) {
      for (const [key, value] of this.entries) if (value.expires <= now) this.entries.delete(key);
      if (this.entries.size >= 10_000) this.entries.clear();
    }
    this.entries.set(hostname, entry);
    addresses.catch(() => {
      if (this.entries.get(hostname) === entry) this.entries.delete(hostname);
    });
    return addresses;
  }

  clear(): void {
    this.entries.clear();
  }
}
