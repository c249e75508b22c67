/** How a Batcher gathers its items; every field has the default shown. */
export interface BatcherOptions<Item> {
  /** Items sharing a key never share a batch: the second waits for the next one (default: no keys). */
  keys?: (item: Item) => (string | null)[];
  /** The most items one batch carries (50). */
  maxBatch?: number;
  /** Batches running at once (1: one in flight, so shared rows are always locked in one order). */
  maxInFlight?: number;
  /**
   * Whether a failed batch of several is tried again item by item, so that only the item that
   * fails alone rejects: for errors that one item can cause (a foreign key, say), not for those
   * that fail every item (a lost connection). Default: always.
   */
  retrySingly?: (error: unknown) => boolean;
  /**
   * `at-once` (default): when a slot is free the first item goes out at once, alone, and the items
   * that arrive while batches are in flight go out together in the next one: nothing waits when
   * the process is quiet. `one-turn`: an item waits until the end of the current turn of the event
   * loop (setImmediate), so that the items queued in one turn share a batch.
   */
  gather?: 'at-once' | 'one-turn';
}

interface Waiting<Item, Result> {
  item: Item;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: coalesces concurrent calls into batched calls (one statement for many items: one
 * round trip, one commit, one lock on each shared row, such as a workflow's counters, instead of
 * one each). Batches grow by themselves to what arrives during one round trip, so the statement
 * count per item falls as the load rises, with no fixed delay to tune.
 *
 * Nothing is acknowledged before its batch has committed: each caller's promise settles with its
 * own item's outcome (so a Bull job completes only once its rows are written). A batch returns one
 * result per item, in their order; any other count fails the batch.
 */
export class Batcher<Item, Result> {
  private readonly queue: Waiting<Item, Result>[] = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly keys: (item: Item) => (string | null)[];
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private readonly retrySingly: (error: unknown) => boolean;
  private readonly gather: 'at-once' | 'one-turn';

  /** @param runBatch runs one statement for the items, returning one result per item in their order */
  constructor(
    private readonly runBatch: (items: Item[]) => Promise<Result[]>,
    options: BatcherOptions<Item> = {},
  ) {
    this.keys = options.keys ?? (() => []);
    this.maxBatch = options.maxBatch ?? 50;
    this.maxInFlight = options.maxInFlight ?? 1;
    this.retrySingly = options.retrySingly ?? (() => true);
    this.gather = options.gather ?? 'at-once';
  }

  submit(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Items waiting for a batch (for tests and metrics). */
  get waiting(): number {
    return this.queue.length;
  }

  private schedule(): void {
    if (this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    if (this.gather === 'at-once') {
      this.dispatch();
      return;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.take();
      this.inFlight++;
      void this.send(batch).finally(() => {
        this.inFlight--;
        this.schedule();
      });
    }
  }

  /** The oldest waiting items, up to maxBatch, skipping any that shares a key with one taken. */
  private take(): Waiting<Item, Result>[] {
    const taken: Waiting<Item, Result>[] = [];
    const used = new Set<string>();
    for (let i = 0; i < this.queue.length && taken.length < this.maxBatch; ) {
      const keys = this.keys(this.queue[i].item).filter((k): k is string => k !== null);
      if (keys.some((k) => used.has(k))) {
        i += 1;
        continue;
      }
      for (const k of keys) used.add(k);
      taken.push(...this.queue.splice(i, 1));
    }
    return taken;
  }

  private async send(batch: Waiting<Item, Result>[]): Promise<void> {
    try {
      const results = await this.runBatch(batch.map((w) => w.item));
      if (results.length !== batch.length) throw new Error(`batch flush returned ${results.length} results for ${batch.length} items`);
      batch.forEach((w, i) => w.resolve(results[i]));
    } catch (error) {
      if (batch.length === 1 || !this.retrySingly(error)) {
        for (const w of batch) w.reject(error);
        return;
      }
      for (const w of batch) {
        try {
          const results = await this.runBatch([w.item]);
          if (results.length !== 1) throw new Error(`batch flush returned ${results.length} results for 1 items`);
          w.resolve(results[0]);
        } catch (single) {
          w.reject(single);
        }
      }
    }
  }
}
