import { describe, expect, it } from 'vitest';
import { SketchCache } from './sketch-cache.js';

const day = (n: number) => new Date(Date.UTC(2026, 10, n));
const held = (checksum: string) => ({ checksum, sketch: Buffer.from([1]) });

describe('SketchCache', () => {
  it('finds the held sketches of a parent, span and table by start, with the checksum each was valid at', () => {
    const cache = new SketchCache(10);
    cache.remember('workflow_customer_sketches', 'w1', 'day', day(1), held('11'));
    cache.remember('workflow_customer_sketches', 'w1', 'day', day(2), held('12'));
    cache.remember('workflow_customer_sketches', 'w1', 'month', day(1), held('99'));
    cache.remember('trigger_customer_sketches', 'w1', 'day', day(1), held('31'));
    const found = cache.held('workflow_customer_sketches', 'w1', 'day', [day(1), day(2), day(3)]);
    expect([...found].map(([ms, h]) => [ms, h.checksum])).toEqual([[day(1).getTime(), '11'], [day(2).getTime(), '12']]);
    expect(cache.held('workflow_customer_sketches', 'w2', 'day', [day(1)]).size).toBe(0);
    // Folded anew at another checksum: the newer one replaces it.
    cache.remember('workflow_customer_sketches', 'w1', 'day', day(1), held('13'));
    expect(cache.held('workflow_customer_sketches', 'w1', 'day', [day(1)]).get(day(1).getTime())?.checksum).toBe('13');
    expect(cache.size).toBe(4);
  });

  it('keeps at most its capacity, dropping the least recently used', () => {
    const cache = new SketchCache(2);
    cache.remember('t', 'p', 'day', day(1), held('1'));
    cache.remember('t', 'p', 'day', day(2), held('2'));
    cache.held('t', 'p', 'day', [day(1)]); // day 1 used: day 2 is now the oldest
    cache.remember('t', 'p', 'day', day(3), held('3'));
    expect([...cache.held('t', 'p', 'day', [day(1), day(2), day(3)]).keys()]).toEqual([day(1).getTime(), day(3).getTime()]);
    expect(cache.size).toBe(2);
  });
});
