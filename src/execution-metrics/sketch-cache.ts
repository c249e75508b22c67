import type { Span } from './customer-days.js';

/** A stored sketch as this process read it, and the customer checksum it was valid at. */
export interface HeldSketch {
  checksum: string;
  sketch: Buffer;
}

/**
 * Stored customer sketches this process has read, by rollup table, parent, span and start, with the
 * checksum each was valid at. A summary statement is told which of its spans' sketches the process
 * holds at which checksum, and sends only the others: a period read again (the same 30 days, within
 * the same UTC day) transfers no sketch, where each dense one is 16 KiB (32 KiB of hex on the wire)
 * for PostgreSQL to decompress and encode and for the service to decode. A held sketch is used only
 * while its span's checksum is the one it was valid at, exactly as the stored one is; a span folded
 * anew at another checksum is simply sent again. Least recently used entries go first.
 */
export class SketchCache {
  private readonly entries = new Map<string, HeldSketch>();

  constructor(private readonly capacity: number) {}

  /** The held sketches among these span starts of one parent, by start (ms), whatever their checksum now. */
  held(table: string, parentId: string, span: Span, starts: readonly Date[]): Map<number, HeldSketch> {
    const found = new Map<number, HeldSketch>();
    for (const start of starts) {
      const key = keyOf(table, parentId, span, start);
      const entry = this.entries.get(key);
      if (!entry) continue;
      this.entries.delete(key);
      this.entries.set(key, entry);
      found.set(start.getTime(), entry);
    }
    return found;
  }

  remember(table: string, parentId: string, span: Span, start: Date, held: HeldSketch): void {
    const key = keyOf(table, parentId, span, start);
    this.entries.delete(key);
    this.entries.set(key, held);
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
  }

  get size(): number {
    return this.entries.size;
  }
}

function keyOf(table: string, parentId: string, span: Span, start: Date): string {
  return `${table}\u0000${parentId}\u0000${span}\u0000${start.getTime()}`;
}
