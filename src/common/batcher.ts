/**
 * Coalesces concurrent calls into batched calls, one batch in flight at a time ("group commit"):
 * the first call goes out at once, alone; calls made while it is in flight wait and then go out
 * together. Nothing waits when the process is quiet, and under load many items share one
 * statement: one round trip, one commit, one lock on each shared row (such as a workflow's
 * counters) instead of one each.
 *
 * Items sharing a key (`keys`) never share a batch: the second waits for the next. When a batch
 * fails, its items are retried one by one, so only the item that fails alone rejects (unless
 * `retrySingly` is false).
 */
export class Batcher<Item, Result> {
  private readonly waiting: { item: Item; resolve: (r: Result) => void; reject: (e: unknown) => void }[] = [];
  private flushing = false;

  constructor(
    private readonly runBatch: (items: Item[]) => Promise<Result[]>,
    private readonly keys: (item: Item) => (string | null)[],
    private readonly maxBatch = 50,
    /** false: a failed batch fails each of its items (the failure is not an item's). */
    private readonly retrySingly = true,
  ) {}

  submit(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.take();
        try {
          const results = await this.runBatch(batch.map((w) => w.item));
          batch.forEach((w, i) => w.resolve(results[i]));
        } catch (error) {
          if (batch.length === 1 || !this.retrySingly) for (const w of batch) w.reject(error);
          else for (const w of batch) await this.runBatch([w.item]).then(([r]) => w.resolve(r), w.reject);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  /** The oldest waiting items, up to maxBatch, skipping any that shares a key with one taken. */
  private take(): typeof this.waiting {
    const taken: typeof this.waiting = [];
    const used = new Set<string>();
    for (let i = 0; i < this.waiting.length && taken.length < this.maxBatch; ) {
      const keys = this.keys(this.waiting[i].item).filter((k): k is string => k !== null);
      if (keys.some((k) => used.has(k))) {
        i += 1;
        continue;
      }
      for (const k of keys) used.add(k);
      taken.push(...this.waiting.splice(i, 1));
    }
    return taken;
  }
}
