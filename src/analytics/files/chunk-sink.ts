import { Writable } from 'node:stream';
import type { FilesRepository } from './files.repository.js';

export const CHUNK_BYTES = 1024 * 1024;

/**
 * A writable stream that stores what is written as the file's chunks of CHUNK_BYTES. Text is
 * encoded straight into one chunk buffer allocated once per file (no intermediate Buffers, so a
 * large file leaves little garbage behind), and a write completes only once its bytes are in that
 * buffer or stored: a producer that awaits 'drain' is held back while a chunk goes to the database.
 */
export class ChunkSink extends Writable {
  private readonly buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  private readonly encoder = new TextEncoder();
  private filled = 0;
  private seq = 0;
  bytes = 0;

  constructor(
    private readonly files: FilesRepository,
    private readonly fileId: string,
  ) {
    super({ highWaterMark: CHUNK_BYTES, decodeStrings: false });
  }

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.append(chunk).then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    (this.filled > 0 ? this.store() : Promise.resolve()).then(() => callback(), callback);
  }

  private async append(chunk: Buffer | string): Promise<void> {
    if (typeof chunk === 'string') {
      let rest = chunk;
      while (rest.length > 0) {
        const { read, written } = this.encoder.encodeInto(rest, this.buffer.subarray(this.filled));
        this.filled += written;
        this.bytes += written;
        rest = read === rest.length ? '' : rest.slice(read);
        if (rest.length > 0 || this.filled === CHUNK_BYTES) await this.store();
      }
      return;
    }
    for (let offset = 0; offset < chunk.length; ) {
      const n = chunk.copy(this.buffer, this.filled, offset);
      offset += n;
      this.filled += n;
      this.bytes += n;
      if (this.filled === CHUNK_BYTES) await this.store();
    }
  }

  /** Stores the filled part of the buffer as the next chunk; the buffer is reused once the insert is done. */
  private async store(): Promise<void> {
    await this.files.writeChunk(this.fileId, this.seq++, this.buffer.subarray(0, this.filled));
    this.filled = 0;
  }
}
