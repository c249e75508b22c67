/**
 * Group commit for one kind of statement: callers queue an item and wait for its own result; items
 * queued in the same turn of the event loop, or while earlier flushes are running, go to the
 * database together in the next flush (one statement for many). Idle, an item waits only until the
 * end of the current turn (setImmediate); busy, batches grow by themselves to what arrives during one
 * round trip, so the statement count per item falls as the load rises, with no fixed delay to tune.
 *
 * Nothing is acknowledged before its flush has committed: a caller's promise settles with the
 * statement's outcome, so a Bull job completes only once its rows are written and at-least-once
 * delivery is kept. When a batch of several fails with an error that one item can cause
 * (`retrySingly(error)`; say, a log row of a webhook deleted meanwhile: foreign key), each item is
 * tried again alone (in the same slot), so the bad one fails only its own caller, not the attempts
 * that happened to share its statement. Other failures (connection lost) fail the whole batch at once.
 */
export class StatementBatcher<I, O> {
  private queue: { item: I; resolve: (value: O) => void; reject: (error: unknown) => void }[] = [];
  private inFlight = 0;
  private scheduled = false;

  /**
   * @param flush runs one statement for the items, returning one result per item in their order
   * @param maxBatch the most items one statement carries
   * @param maxInFlight statements of this kind running at once (1 keeps row locks in one order)
   * @param retrySingly whether a failed batch's items are tried again one by one
   */
  constructor(
    private readonly flush: (items: I[]) => Promise<O[]>,
    private readonly maxBatch = 500,
    private readonly maxInFlight = 1,
    private readonly retrySingly: (error: unknown) => boolean = () => false,
  ) {}

  run(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Items waiting for a flush (for tests and metrics). */
  get waiting(): number {
    return this.queue.length;
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight++;
      let results: Promise<O[]>;
      try {
        results = this.flush(batch.map((b) => b.item));
      } catch (error) {
        results = Promise.reject(error);
      }
      results
        .then((values) => {
          if (values.length !== batch.length) throw new Error(`batch flush returned ${values.length} results for ${batch.length} items`);
          batch.forEach((b, i) => b.resolve(values[i] as O));
        })
        .catch(async (error: unknown) => {
          if (batch.length === 1 || !this.retrySingly(error)) {
            for (const b of batch) b.reject(error);
            return;
          }
          for (const b of batch) {
            try {
              const values = await this.flush([b.item]);
              if (values.length !== 1) throw new Error(`batch flush returned ${values.length} results for 1 items`);
              b.resolve(values[0] as O);
            } catch (single) {
              b.reject(single);
            }
          }
        })
        .finally(() => {
          this.inFlight--;
          this.schedule();
        });
    }
  }
}
