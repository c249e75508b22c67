import { isIP } from 'node:net';

/**
 * Which IP addresses a webhook delivery may reach. Pure functions over the address text: no DNS,
 * no sockets, so every range is unit-tested without traffic.
 *
 * Blocked (docs/API.md, "Outbound webhooks", targets): loopback, RFC 1918 private, link-local (incl. the cloud metadata
 * address 169.254.169.254), CGNAT 100.64/10, 0/8 "this network", IETF protocol assignments 192.0.0/24,
 * benchmarking 198.18/15, the documentation ranges, 6to4 relay anycast, multicast, reserved 240/4 and
 * broadcast; IPv6 unspecified and loopback, ULA fc00::/7, link-local fe80::/10, the deprecated
 * site-local fec0::/10, multicast, documentation, discard-only 100::/64, local-use NAT64 64:ff9b:1::/48,
 * Teredo 2001::/32 (a tunnel whose far end the address hides), benchmarking 2001:2::/48, ORCHID
 * 2001:10::/28 and 2001:20::/28; and the forms of a blocked IPv4 address inside IPv6: IPv4-mapped
 * (::ffff:0:0/96), IPv4-translated (SIIT, ::ffff:0:0:0/96), IPv4-compatible (::/96), NAT64
 * (64:ff9b::/96) and 6to4 (2002::/16).
 */

type Range = readonly [prefix: Uint8Array, bits: number];

const V4_BLOCKED: readonly string[] = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
  '255.255.255.255/32',
];

const V6_BLOCKED: readonly string[] = [
  '::/128',
  '::1/128',
  '100::/64',
  '64:ff9b:1::/48',
  '2001::/32',
  '2001:2::/48',
  '2001:10::/28',
  '2001:20::/28',
  '2001:db8::/32',
  '3fff::/20',
  'fc00::/7',
  'fe80::/10',
  'fec0::/10',
  'ff00::/8',
];

/** The 16 (or 4) bytes of an address, or undefined when the text is not an IP address. */
export function addressBytes(address: string): Uint8Array | undefined {
  const text = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(text);
  if (family === 4) return Uint8Array.from(text.split('.').map(Number));
  if (family !== 6) return undefined;
  const zoneless = text.split('%')[0] as string;
  let head = zoneless;
  let tailV4: number[] = [];
  const lastColon = zoneless.lastIndexOf(':');
  if (zoneless.slice(lastColon + 1).includes('.')) {
    tailV4 = zoneless.slice(lastColon + 1).split('.').map(Number);
    head = zoneless.slice(0, lastColon + 1) + '0:0';
  }
  const [left, right] = head.includes('::') ? head.split('::') : [head, undefined];
  const groups = (s: string | undefined) => (s ? s.split(':').filter((g) => g !== '').map((g) => parseInt(g, 16)) : []);
  const l = groups(left);
  const r = groups(right);
  const words = right === undefined ? l : [...l, ...new Array<number>(8 - l.length - r.length).fill(0), ...r];
  const bytes = new Uint8Array(16);
  words.forEach((w, i) => {
    bytes[i * 2] = w >> 8;
    bytes[i * 2 + 1] = w & 0xff;
  });
  if (tailV4.length === 4) bytes.set(tailV4, 12);
  return bytes;
}

function parseRange(cidr: string): Range {
  const [address, bits] = cidr.split('/') as [string, string];
  const prefix = addressBytes(address);
  const length = Number(bits);
  if (!prefix || !Number.isInteger(length) || length < 0 || length > prefix.length * 8) throw new Error(`Not a CIDR: ${cidr}`);
  return [prefix, length];
}

function inRange(bytes: Uint8Array, [prefix, bits]: Range): boolean {
  if (bytes.length !== prefix.length) return false;
  const whole = bits >> 3;
  for (let i = 0; i < whole; i++) if (bytes[i] !== prefix[i]) return false;
  const rest = bits & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((bytes[whole] as number) & mask) === ((prefix[whole] as number) & mask);
}

const V4_RANGES = V4_BLOCKED.map(parseRange);
const V6_RANGES = V6_BLOCKED.map(parseRange);
const MAPPED = parseRange('::ffff:0:0/96');
const TRANSLATED = parseRange('::ffff:0:0:0/96');
const COMPATIBLE = parseRange('::/96');
const NAT64 = parseRange('64:ff9b::/96');
const SIX_TO_FOUR = parseRange('2002::/16');

/** The IPv4 address an IPv6 address carries (mapped, translated, compatible, NAT64, 6to4), if any. */
function embeddedV4(bytes: Uint8Array): Uint8Array | undefined {
  if (inRange(bytes, MAPPED) || inRange(bytes, TRANSLATED) || inRange(bytes, COMPATIBLE) || inRange(bytes, NAT64)) return bytes.slice(12, 16);
  if (inRange(bytes, SIX_TO_FOUR)) return bytes.slice(2, 6);
  return undefined;
}

/** True when the address is public: deliveries may reach it without WEBHOOK_ALLOW_PRIVATE_TARGETS. Non-addresses are not public. */
export function isPublicAddress(address: string): boolean {
  const bytes = addressBytes(address);
  if (!bytes) return false;
  if (bytes.length === 4) return !V4_RANGES.some((r) => inRange(bytes, r));
  if (V6_RANGES.some((r) => inRange(bytes, r))) return false;
  const v4 = embeddedV4(bytes);
  return v4 === undefined || !V4_RANGES.some((r) => inRange(v4, r));
}

/** Membership in a list of CIDRs (an operator's allow-list); an IPv4-mapped address also matches its IPv4 ranges. */
export class CidrList {
  private readonly ranges: Range[];

  constructor(cidrs: readonly string[]) {
    this.ranges = cidrs.map(parseRange);
  }

  get empty(): boolean {
    return this.ranges.length === 0;
  }

  contains(address: string): boolean {
    const bytes = addressBytes(address);
    if (!bytes) return false;
    const mapped = bytes.length === 16 && inRange(bytes, MAPPED) ? bytes.slice(12, 16) : undefined;
    return this.ranges.some((r) => inRange(bytes, r) || (mapped !== undefined && inRange(mapped, r)));
  }
}
