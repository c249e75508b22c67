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
    const batcher = new Batcher<string, string>(r.run);
    const results = [batcher.submit('a'), batcher.submit('b'), batcher.submit('c')];
    expect(r.batches).toEqual([['a']]);
    await r.release();
    await expect(Promise.all(results)).resolves.toEqual(['A', 'B', 'C']);
    expect(r.batches).toEqual([['a'], ['b', 'c']]);
  });

  it('never puts two items sharing a key in one batch, and keeps their order', async () => {
    const r = recorder();
    const batcher = new Batcher<string, string>(r.run, { keys: (item) => [item[0], null] });
    const results = ['x0', 'a1', 'a2', 'b1', 'a3'].map((i) => batcher.submit(i));
    await r.release();
    await expect(Promise.all(results)).resolves.toEqual(['X0', 'A1', 'A2', 'B1', 'A3']);
    expect(r.batches).toEqual([['x0'], ['a1', 'b1'], ['a2'], ['a3']]);
  });

  it('limits the batch size', async () => {
    const r = recorder();
    const batcher = new Batcher<string, string>(r.run, { maxBatch: 2 });
    const results = ['a', 'b', 'c', 'd'].map((i) => batcher.submit(i));
    await r.release();
    await Promise.all(results);
    expect(r.batches).toEqual([['a'], ['b', 'c'], ['d']]);
  });

  it('retries a failed batch item by item, so only the item that fails alone rejects', async () => {
    const r = recorder((item) => item === 'bad');
    const batcher = new Batcher<string, string>(r.run);
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
    const batcher = new Batcher<string, string>(r.run);
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
    }, { retrySingly: () => false });
    const first = batcher.submit(1);
    const rest = [batcher.submit(2), batcher.submit(3)];
    release();
    await expect(first).rejects.toThrow('down');
    for (const p of rest) await expect(p).rejects.toThrow('down');
    expect(calls).toEqual([[1], [2, 3]]);
  });
});

const tick = () => new Promise((r) => setImmediate(r));

describe('Batcher gathering one turn (several in flight, retried singly only for the errors one item can cause)', () => {
  it('sends the items of one turn together and each caller gets its own result', async () => {
    const flushes: number[][] = [];
    const batcher = new Batcher<number, number>(async (items) => {
      flushes.push(items);
      return items.map((i) => i * 10);
    }, { maxBatch: 500, gather: 'one-turn', retrySingly: () => false });
    const results = await Promise.all([1, 2, 3].map((i) => batcher.submit(i)));
    expect(results).toEqual([10, 20, 30]);
    expect(flushes).toEqual([[1, 2, 3]]);
  });

  it('queues what arrives during a flush for the next one (at most maxInFlight at once) and splits at maxBatch', async () => {
    const flushes: number[][] = [];
    let release!: () => void;
    let running = 0;
    let maxRunning = 0;
    const batcher = new Batcher<number, void>(
      async (items) => {
        flushes.push(items);
        running++;
        maxRunning = Math.max(maxRunning, running);
        if (flushes.length === 1) await new Promise<void>((r) => (release = r));
        running--;
        return items.map(() => undefined);
      },
      { maxBatch: 2, maxInFlight: 1, gather: 'one-turn', retrySingly: () => false },
    );
    const first = batcher.submit(1);
    await tick();
    const later = [2, 3, 4, 5, 6].map((i) => batcher.submit(i));
    await tick();
    expect(flushes).toEqual([[1]]);
    expect(batcher.waiting).toBe(5);
    release();
    await Promise.all([first, ...later]);
    expect(flushes).toEqual([[1], [2, 3], [4, 5], [6]]);
    expect(maxRunning).toBe(1);
  });

  it('rejects every item of a failed flush (nothing acknowledged before it is written) and goes on with the next', async () => {
    let fail = true;
    let flushes = 0;
    const batcher = new Batcher<number, number>(
      async (items) => {
        flushes++;
        if (fail) throw new Error('connection lost');
        return items;
      },
      { maxBatch: 500, maxInFlight: 1, gather: 'one-turn', retrySingly: (error) => (error as Error).message === 'foreign key violation' },
    );
    const failed = [1, 2].map((i) => batcher.submit(i));
    for (const p of failed) await expect(p).rejects.toThrow('connection lost');
    expect(flushes).toBe(1); // not an error of one item: not retried item by item
    fail = false;
    await expect(batcher.submit(3)).resolves.toBe(3);
  });

  it('fails only the bad item of a failed batch: the others are written alone', async () => {
    const written: number[] = [];
    const batcher = new Batcher<number, number>(
      async (items) => {
        if (items.includes(13)) throw new Error('foreign key violation');
        written.push(...items);
        return items.map((i) => i * 2);
      },
      { maxBatch: 500, maxInFlight: 1, gather: 'one-turn', retrySingly: (error) => (error as Error).message === 'foreign key violation' },
    );
    const results = await Promise.allSettled([12, 13, 14].map((i) => batcher.submit(i)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(results[0]).toEqual({ status: 'fulfilled', value: 24 });
    expect(written).toEqual([12, 14]);
  });

  it('rejects when the flush returns the wrong number of results', async () => {
    const batcher = new Batcher<number, number>(async () => [], { maxBatch: 500, maxInFlight: 1, gather: 'one-turn', retrySingly: () => true });
    await expect(Promise.all([batcher.submit(1), batcher.submit(2)])).rejects.toThrow('returned 0 results for 1 items');
  });
});
