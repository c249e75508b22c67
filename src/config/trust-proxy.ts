import { isIP } from 'node:net';

/** Express's `trust proxy` value: off, a hop count, or the addresses / CIDRs / named ranges of trusted proxies. */
export type TrustProxy = false | number | string[];

const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);
const MAX_HOPS = 10;

/**
 * TRUST_PROXY as Express's `trust proxy` setting, or an error message. Unset, empty, `false` or `0`:
 * off (X-Forwarded-For ignored, the socket address is the client). A number n from 1 to 10: the
 * client is the address n hops behind this server. Otherwise a comma-separated list of IP addresses,
 * CIDRs and the names `loopback`, `linklocal`, `uniquelocal`: the proxies whose X-Forwarded-For is
 * believed. `true` (believe anyone) is refused: any client could then choose its own address.
 */
export function parseTrustProxy(value: string | undefined): TrustProxy | { error: string } {
  const text = (value ?? '').trim();
  if (text === '' || text.toLowerCase() === 'false' || text === '0') return false;
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    return hops <= MAX_HOPS ? hops : { error: `a hop count must be from 0 to ${MAX_HOPS}` };
  }
  if (text.toLowerCase() === 'true') return { error: 'true (trust every sender) is refused: any client could choose its address; name the proxies or a hop count' };
  const entries = text.split(',').map((e) => e.trim());
  for (const entry of entries) {
    if (NAMED_RANGES.has(entry)) continue;
    const [address, bits, ...rest] = entry.split('/');
    const family = isIP(address ?? '');
    const bitsValid = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (family === 0 || !bitsValid || rest.length > 0) {
      return { error: `"${entry}" is not an IP address, a CIDR, loopback, linklocal or uniquelocal` };
    }
  }
  return entries;
}
