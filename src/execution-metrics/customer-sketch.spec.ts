import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CustomerUnion, REGISTERS, SPARSE_MAX, STANDARD_ERROR } from './customer-sketch.js';

/** A deterministic signed 64-bit hash per customer number, as PostgreSQL's bigint would arrive. */
const hash = (i: number) => BigInt.asIntN(64, createHash('sha256').update(`customer-${i}`).digest().readBigUInt64BE(0)).toString();

function unionOf(from: number, to: number): CustomerUnion {
  const u = new CustomerUnion();
  for (let i = from; i < to; i++) u.addHash(hash(i));
  return u;
}

describe('CustomerUnion', () => {
  it('counts exactly while sparse, repeats once, and keeps the sparse form up to its limit', () => {
    const u = unionOf(0, SPARSE_MAX);
    u.addHash(hash(5));
    expect(u.count()).toBe(SPARSE_MAX);
    const sketch = u.toSketch();
    expect(sketch[0]).toBe(1);
    expect(sketch.length).toBe(1 + 8 * SPARSE_MAX);
    const back = new CustomerUnion();
    back.addSketch(sketch);
    expect(back.count()).toBe(SPARSE_MAX);
  });

  it('unions of sparse sketches and hashes are exact, overlaps counted once', () => {
    const a = unionOf(0, 1500).toSketch();
    const b = unionOf(1000, 2000).toSketch();
    const u = new CustomerUnion();
    u.addSketch(a);
    u.addSketch(b);
    for (let i = 1900; i < 2600; i++) u.addHash(hash(i));
    // 2600 distinct: beyond the sparse limit, still counted exactly (no dense part was merged).
    expect(u.count()).toBe(2600);
    expect(new CustomerUnion().count()).toBe(0);
  });

  it('goes dense beyond the limit, within three standard errors over the range', () => {
    for (const n of [SPARSE_MAX + 1, 5_000, 20_000, 100_000]) {
      const sketch = unionOf(0, n).toSketch();
      expect(sketch[0]).toBe(2);
      expect(sketch.length).toBe(1 + REGISTERS);
      const u = new CustomerUnion();
      u.addSketch(sketch);
      expect(Math.abs(u.count() - n) / n).toBeLessThan(3 * STANDARD_ERROR);
    }
  }, 60_000);

  it('merging dense sketches equals the sketch of the union, whatever the order', () => {
    const parts = [unionOf(0, 4000), unionOf(3000, 9000), unionOf(8500, 12000)].map((u) => {
      const s = new CustomerUnion();
      s.addSketch(u.toSketch());
      return s;
    });
    const merged = new CustomerUnion();
    for (const p of parts.reverse()) merged.addUnion(p);
    const whole = new CustomerUnion();
    whole.addSketch(unionOf(0, 12000).toSketch());
    expect(merged.toSketch().equals(whole.toSketch())).toBe(true);
    expect(Math.abs(merged.count() - 12000) / 12000).toBeLessThan(3 * STANDARD_ERROR);
    // A dense sketch and exact hashes: the hashes go into the registers.
    const mixed = new CustomerUnion();
    mixed.addSketch(unionOf(0, 4000).toSketch());
    for (let i = 3000; i < 12000; i++) mixed.addHash(hash(i));
    expect(mixed.toSketch().equals(whole.toSketch())).toBe(true);
  }, 60_000);

  it('hashes as 8-byte big-endian values (int8send) count as addHash of each, exact or dense, repeats once', () => {
    const bytes = (from: number, to: number) => {
      const out = Buffer.alloc(8 * (to - from));
      for (let i = from; i < to; i++) out.writeBigInt64BE(BigInt(hash(i)), 8 * (i - from));
      return out;
    };
    const exact = new CustomerUnion();
    exact.addHashes(bytes(0, 1000));
    exact.addHashes(bytes(500, 1500));
    expect(exact.count()).toBe(1500);
    expect(exact.toSketch().equals(unionOf(0, 1500).toSketch())).toBe(true);

    const dense = new CustomerUnion();
    dense.addSketch(unionOf(0, 4000).toSketch());
    dense.addHashes(bytes(3000, 12000));
    const whole = new CustomerUnion();
    whole.addSketch(unionOf(0, 12000).toSketch());
    expect(dense.toSketch().equals(whole.toSketch())).toBe(true);
    expect(() => new CustomerUnion().addHashes(Buffer.alloc(7))).toThrow();
  }, 60_000);

  it('merges dense registers as the byte-wise maximum (four registers at a time)', () => {
    let seed = 42;
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) % 52; // register values 0..51
    const dense = () => {
      const s = Buffer.alloc(1 + REGISTERS);
      s[0] = 2;
      for (let i = 1; i <= REGISTERS; i++) s[i] = random();
      return s;
    };
    const [a, b, c] = [dense(), dense(), dense()];
    const u = new CustomerUnion();
    u.addSketch(a);
    u.addSketch(b);
    const other = new CustomerUnion();
    other.addSketch(c);
    u.addUnion(other);
    const expected = Buffer.alloc(1 + REGISTERS);
    expected[0] = 2;
    for (let i = 1; i <= REGISTERS; i++) expected[i] = Math.max(a[i], b[i], c[i]);
    expect(u.toSketch().equals(expected)).toBe(true);
  });

  it('refuses bytes that are no sketch', () => {
    expect(() => new CustomerUnion().addSketch(Buffer.from([2, 1, 2]))).toThrow();
    expect(() => new CustomerUnion().addSketch(Buffer.from([7]))).toThrow();
  });
});
