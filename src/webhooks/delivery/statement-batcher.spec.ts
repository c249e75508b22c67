import { describe, expect, it } from 'vitest';
import { StatementBatcher } from './statement-batcher.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('StatementBatcher', () => {
  it('sends the items of one turn together and each caller gets its own result', async () => {
    const flushes: number[][] = [];
    const batcher = new StatementBatcher<number, number>(async (items) => {
      flushes.push(items);
      return items.map((i) => i * 10);
    });
    const results = await Promise.all([1, 2, 3].map((i) => batcher.run(i)));
    expect(results).toEqual([10, 20, 30]);
    expect(flushes).toEqual([[1, 2, 3]]);
  });

  it('queues what arrives during a flush for the next one (at most maxInFlight at once) and splits at maxBatch', async () => {
    const flushes: number[][] = [];
    let release!: () => void;
    let running = 0;
    let maxRunning = 0;
    const batcher = new StatementBatcher<number, void>(
      async (items) => {
        flushes.push(items);
        running++;
        maxRunning = Math.max(maxRunning, running);
        if (flushes.length === 1) await new Promise<void>((r) => (release = r));
        running--;
        return items.map(() => undefined);
      },
      2,
      1,
    );
    const first = batcher.run(1);
    await tick();
    const later = [2, 3, 4, 5, 6].map((i) => batcher.run(i));
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
    const batcher = new StatementBatcher<number, number>(
      async (items) => {
        flushes++;
        if (fail) throw new Error('connection lost');
        return items;
      },
      500,
      1,
      (error) => (error as Error).message === 'foreign key violation',
    );
    const failed = [1, 2].map((i) => batcher.run(i));
    for (const p of failed) await expect(p).rejects.toThrow('connection lost');
    expect(flushes).toBe(1); // not an error of one item: not retried item by item
    fail = false;
    await expect(batcher.run(3)).resolves.toBe(3);
  });

  it('fails only the bad item of a failed batch: the others are written alone', async () => {
    const written: number[] = [];
    const batcher = new StatementBatcher<number, number>(
      async (items) => {
        if (items.includes(13)) throw new Error('foreign key violation');
        written.push(...items);
        return items.map((i) => i * 2);
      },
      500,
      1,
      (error) => (error as Error).message === 'foreign key violation',
    );
    const results = await Promise.allSettled([12, 13, 14].map((i) => batcher.run(i)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(results[0]).toEqual({ status: 'fulfilled', value: 24 });
    expect(written).toEqual([12, 14]);
  });

  it('rejects when the flush returns the wrong number of results', async () => {
    const batcher = new StatementBatcher<number, number>(async () => [], 500, 1, () => true);
    await expect(Promise.all([batcher.run(1), batcher.run(2)])).rejects.toThrow('returned 0 results for 1 items');
  });
});
