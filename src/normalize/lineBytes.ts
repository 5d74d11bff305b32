/** Lines handed to `write` are copied into the buffer once they hold this many bytes. */
const PENDING_BYTES = 16 * 1024;

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
  /** Lines handed to `write`, not yet copied into `buffer`, and their bytes with their `\n`. */
  private pending: string[] = [];
  private pendingBytes = 0;

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
   * No once the batch is due to be sent: the line then goes through `write`, which sends it. Lines
   * handed to `write` before are copied in first, so the order holds.
   */
  room(bytes: number): boolean {
    if (this.pendingBytes > 0) this.copyPending();
    return this.filled < this.flushAt && this.filled + bytes <= this.buffer.byteLength;
  }

  /**
   * Whether the batch is due to be sent: it holds bytes and reached `flushAt`, and `room` refuses every
   * line until `flush`. Never when it is empty, so that a line refused then is never waiting for nothing.
   */
  get due(): boolean {
    const gathered = this.filled + this.pendingBytes;
    return gathered > 0 && gathered >= this.flushAt;
  }

  /** Appends a byte string line and its `\n`; sends the batch when it reaches `flushAt`. */
  write(line: string): Promise<void> | undefined {
    this.pending.push(line);
    this.pendingBytes += line.length + 1;
    // Lines waiting as strings survive the young generation's collections: at Lambda's 128 MB heap
    // limits 64 KiB of them made the mixed CSV about 10 % slower than 16 KiB (normalizeWorker.ts).
    if (this.pendingBytes >= PENDING_BYTES && this.filled + this.pendingBytes <= this.flushAt) this.copyPending();
    return this.filled + this.pendingBytes >= this.flushAt ? this.flush() : undefined;
  }

  /** Sends what is gathered. */
  async flush(): Promise<void> {
    if (this.pendingBytes > 0) {
      if (this.filled + this.pendingBytes > this.buffer.byteLength) await this.send();
      if (this.pendingBytes > this.buffer.byteLength) {
        // A line longer than the buffer: in bytes of its own.
        const bytes = Buffer.from(this.joinPending(), 'latin1');
        await this.target.write(bytes);
      } else {
        this.copyPending();
      }
    }
    await this.send();
  }

  private async send(): Promise<void> {
    if (this.filled === 0) return;
    const bytes = this.buffer.subarray(0, this.filled);
    this.filled = 0;
    await this.target.write(bytes);
  }

  /**
   * The lines handed to `write`, joined into the buffer in one copy: joining and copying a batch costs
   * far less than copying each line (a cons string is flattened either way). They fit: `write` sends
   * once they would reach `flushAt`.
   */
  private copyPending(): void {
    this.filled += this.buffer.write(this.joinPending(), this.filled, 'latin1');
  }

  /** The pending lines, each with its `\n`, as one string; none pending after. */
  private joinPending(): string {
    const text = joinLines(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    return text;
  }
}

/**
 * `lines`, each followed by `\n`, as one string; `lines` is left holding an extra empty string, for
 * the caller to drop. The last terminator comes from joining that empty string: appending `\n` to the
 * joined text would make a cons string, which the copy or encode that follows would flatten again.
 */
export function joinLines(lines: string[]): string {
  lines.push('');
  return lines.join('\n');
}
