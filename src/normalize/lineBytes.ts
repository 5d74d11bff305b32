/** Where a {@link LineBytes} sends its bytes: a worker's output stream, which copies them. */
export interface ByteTarget {
  write(bytes: Uint8Array): Promise<void>;
}

/**
 * Output lines gathered as bytes, for byte strings (src/normalize/byteStrings.ts): a line handed to
 * `write` is copied in as Latin-1, which is its UTF-8 bytes; a reader may also write a line's bytes
 * straight into `buffer` (the CSV reader's rows, src/normalize/csvRowBytes.ts), after asking for
 * `room`. Either way the lines keep their order, and each ends with `\n`.
 *
 * A LineSink (normalizeRecords.ts), sent on in batches of about `flushAt` bytes: only a write that
 * sends returns a promise, so the backpressure contract of LineSink holds. The buffer is reused once
 * the target's write resolves, so the target must copy what it keeps (a worker's output stream does).
 *
 * @example
 * const lines = new LineBytes({ write: async (bytes) => void parts.push(Buffer.from(bytes)) });
 * await lines.write('{"a":1}');
 * await lines.flush(); // parts: ['{"a":1}\n']
 */
export class LineBytes {
  readonly buffer: Buffer;
  /** Bytes of `buffer` in use; a reader writing in place sets it past what it wrote. */
  filled = 0;
  private readonly flushAt: number;

  /**
   * `flushAt` default 56 KiB, `capacity` default 64 KiB: the room above `flushAt` is for a line
   * written in place. (256 KiB, which declines fewer rows for want of room, measured no faster.)
   */
  constructor(
    private readonly target: ByteTarget,
    options: { readonly flushAt?: number; readonly capacity?: number } = {},
  ) {
    const capacity = options.capacity ?? 64 * 1024;
    this.flushAt = Math.min(options.flushAt ?? 56 * 1024, capacity);
    this.buffer = Buffer.allocUnsafeSlow(capacity);
  }

  /**
   * Whether a line of at most `bytes` bytes, its `\n` included, may be written in place at `filled`.
   * No once the batch is due to be sent: the line then goes through `write`, which sends it.
   */
  room(bytes: number): boolean {
    return this.filled < this.flushAt && this.filled + bytes <= this.buffer.byteLength;
  }

  /** Appends a byte string line and its `\n`; sends the batch when it reaches `flushAt`. */
  write(line: string): Promise<void> | undefined {
    const end = this.filled + line.length + 1;
    if (end > this.buffer.byteLength) return this.writeLong(line);
    const written = this.buffer.write(line, this.filled, 'latin1');
    this.buffer[this.filled + written] = 0x0a;
    this.filled = end;
    return this.filled >= this.flushAt ? this.flush() : undefined;
  }

  /** Sends what is gathered. */
  async flush(): Promise<void> {
    if (this.filled === 0) return;
    const bytes = this.buffer.subarray(0, this.filled);
    this.filled = 0;
    await this.target.write(bytes);
  }

  /** A line longer than the room left: what is gathered goes first, then the line, in bytes of its own. */
  private async writeLong(line: string): Promise<void> {
    await this.flush();
    if (line.length + 1 <= this.buffer.byteLength) return this.write(line);
    await this.target.write(Buffer.from(`${line}\n`, 'latin1'));
  }
}
