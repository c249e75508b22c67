import { describe, expect, it } from 'vitest';
import { Batcher } from './batcher.js';

/** A batch function that records its batches and answers when told to. */
function recorder(fail: (item: string) => boolean = () => false) {
  const batches: string[][] = [];
  const pending: (() => void)[] = [];
  const run = (items: string[]) =>
    new Promise<string[]>((resolve, reject) => {
      batches.push(items);
      pending.push(() => (items.some(fail) ? reject(new Error(`failed: ${items.join(',')}`)) : resolve(items.map((i) => i.toUpperCase()))));
    });
  const release = async () => {
    while (pending.length > 0) {
      pending.shift()!();
      await new Promise((r) => setImmediate(r));
    }
  };
  return { batches, run, release };
}

describe('Batcher', () => {
  it('sends the first item at once and the items that arrive meanwhile together, each getting its own result', async () => {
    const r = recorder();
    const batcher = new Batcher<string, string>(r.run, () => []);
    const results = [batcher.submit('a'), batcher.submit('b'), batcher.submit('c')];
    expect(r.batches).toEqual([['a']]);
    await r.release();
    await expect(Promise.all(results)).resolves.toEqual(['A', 'B', 'C']);
    expect(r.batches).toEqual([['a'], ['b', 'c']]);
  });

  it('never puts two items sharing a key in one batch, and keeps their order', async () => {
    const r = recorder();
    const batcher = new Batcher<string, string>(r.run, (item) => [item[0], null]);
    const results = ['x0', 'a1', 'a2', 'b1', 'a3'].map((i) => batcher.submit(i));
    await r.release();
    await expect(Promise.all(results)).resolves.toEqual(['X0', 'A1', 'A2', 'B1', 'A3']);
    expect(r.batches).toEqual([['x0'], ['a1', 'b1'], ['a2'], ['a3']]);
  });

  it('limits the batch size', async () => {
    const r = recorder();
    const batcher = new Batcher<string, string>(r.run, () => [], 2);
    const results = ['a', 'b', 'c', 'd'].map((i) => batcher.submit(i));
    await r.release();
    await Promise.all(results);
    expect(r.batches).toEqual([['a'], ['b', 'c'], ['d']]);
  });

  it('retries a failed batch item by item, so only the item that fails alone rejects', async () => {
    const r = recorder((item) => item === 'bad');
    const batcher = new Batcher<string, string>(r.run, () => []);
    const settled = Promise.allSettled(['a', 'b', 'bad'].map((i) => batcher.submit(i)));
    await r.release();
    const [first, good, bad] = await settled;
    expect(first).toEqual({ status: 'fulfilled', value: 'A' });
    expect(good).toEqual({ status: 'fulfilled', value: 'B' });
    expect(bad).toMatchObject({ status: 'rejected', reason: { message: 'failed: bad' } });
    expect(r.batches).toEqual([['a'], ['b', 'bad'], ['b'], ['bad']]);
  });

  it('keeps working after a failure', async () => {
    const r = recorder((item) => item === 'bad');
    const batcher = new Batcher<string, string>(r.run, () => []);
    const bad = batcher.submit('bad').catch((error: Error) => error.message);
    await r.release();
    await expect(bad).resolves.toBe('failed: bad');
    const next = batcher.submit('c');
    await r.release();
    await expect(next).resolves.toBe('C');
  });
});

describe('Batcher without retrySingly', () => {
  it('rejects every item of a failed batch without retrying them one by one', async () => {
    const calls: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const batcher = new Batcher<number, number>(async (items) => {
      calls.push(items);
      if (calls.length === 1) await gate;
      throw new Error('down');
    }, () => [], 50, false);
    const first = batcher.submit(1);
    const rest = [batcher.submit(2), batcher.submit(3)];
    release();
    await expect(first).rejects.toThrow('down');
    for (const p of rest) await expect(p).rejects.toThrow('down');
    expect(calls).toEqual([[1], [2, 3]]);
  });
});
