import { randomFillSync } from 'node:crypto';

/**
 * Time-ordered ids (RFC 9562 UUID version 7) for the tables written on every execution: a random
 * (version 4) key sends each insert to a different leaf page of the table's large primary-key
 * index (and of every index on the key), so an index much bigger than memory costs a page read
 * and a full-page WAL image per insert; keys in time order land on the right edge, which stays
 * cached. Layout: 48 bits of Unix milliseconds, version 7, 12 bits that count ids made within
 * the same millisecond (so this process's ids also sort in the order it made them), variant 10,
 * 62 random bits.
 */
const POOL_SIZE = 16 * 256;
const pool = Buffer.alloc(POOL_SIZE);
let poolOffset = POOL_SIZE;
let lastMs = 0;
let sequence = 0;

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function uuidv7(now: number = Date.now()): string {
  if (poolOffset + 10 > POOL_SIZE) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  let ms = now;
  if (ms <= lastMs) {
    // Same (or an earlier, clock stepped back) millisecond: count on from the last id.
    ms = lastMs;
    sequence += 1;
    if (sequence > 0xfff) {
      ms += 1;
      sequence = 0;
    }
  } else {
    sequence = 0;
  }
  lastMs = ms;
  const r = pool.subarray(poolOffset, poolOffset + 8);
  poolOffset += 8;
  const b = new Array<number>(16);
  // 48-bit timestamp, big-endian (not with bit operators: they truncate to 32 bits).
  let t = ms;
  for (let i = 5; i >= 0; i--) {
    b[i] = t % 256;
    t = Math.floor(t / 256);
  }
  b[6] = 0x70 | (sequence >> 8);
  b[7] = sequence & 0xff;
  b[8] = 0x80 | (r[0] & 0x3f);
  for (let i = 9; i < 16; i++) b[i] = r[i - 8];
  const h = b.map((x) => HEX[x]);
  return `${h[0]}${h[1]}${h[2]}${h[3]}-${h[4]}${h[5]}-${h[6]}${h[7]}-${h[8]}${h[9]}-${h[10]}${h[11]}${h[12]}${h[13]}${h[14]}${h[15]}`;
}

/**
 * The smallest UUID whose first 48 bits are the Unix milliseconds `ms`: every version 7 id made at `ms` or later
 * sorts at or above it, every one made before sorts below (a time bound on a time-ordered primary key).
 */
export function uuidv7Floor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}
