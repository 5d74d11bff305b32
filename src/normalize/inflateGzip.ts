import { crc32, createInflateRaw } from 'node:zlib';

/** Where a gzip input tells why it stopped being read (decodeInput.ts's DecodeReport is one). */
interface InflateReport {
  rejected?: string;
}

/** What bounds a gzip input's inflation (decodeInput.ts derives them from DecodeLimits). */
export interface InflateLimits {
  /** Decompressed bytes at most; beyond them reading stops with `boundReason`. */
  readonly bound: number;
  readonly boundReason: string;
  /** Told the size of every decompressed chunk; an error it throws is thrown unchanged. */
  readonly onInflated?: (bytes: number) => void;
}

/**
 * Decompresses a gzip stream chunk by chunk, member after member (concatenated members too, and
 * zero padding between them, as `gzip -d` reads them). Stops with `report.rejected` on corrupt
 * data, truncation, or output beyond `limits.bound` (the bomb guard, set by decodeInput.ts). Bytes
 * after the last member that start no member are counted and named in `report.rejected` once every
 * row before them is out: `gzip -d` keeps the data and warns likewise.
 * Node's Gunzip met such bytes inside the call that finished the member and dropped that call's
 * output with its error: 100 rows became 0. So each member runs through its own raw inflate, whose
 * `bytesWritten` says where the member's data ended, and its trailer (CRC-32, size) is checked here.
 *
 * @example
 * for await (const bytes of inflateGzip(body, report, { bound: 1e9, boundReason: 'too large' })) use(bytes);
 */
export async function* inflateGzip(
  compressed: AsyncIterable<Uint8Array | string>,
  report: InflateReport,
  limits: InflateLimits,
): AsyncGenerator<Uint8Array> {
  const input = new ByteQueue(compressed[Symbol.asyncIterator]());
  const state = { produced: 0 };
  try {
    for (let members = 0; ; members++) {
      if (members > 0) {
        // Between members: the end, zero padding (gzip -d skips it), another member, or stray bytes.
        await input.skipZeros();
        const next = await input.peek(2);
        if (next.length === 0) return;
        if (next[0] !== 0x1f || next[1] !== 0x8b) {
          const ignored = await input.drain();
          report.rejected = `${ignored} trailing byte${ignored === 1 ? '' : 's'} after the gzip data ignored (not a gzip member; gzip -d warns likewise): every row before them was read`;
          return;
        }
      }
      const header = await gzipHeader(input);
      if (header !== undefined) {
        report.rejected = header;
        return;
      }
      const ended = yield* inflateMember(input, state, report, limits);
      if (!ended) return;
    }
  } finally {
    await input.close();
  }
}

/**
 * Inflates one member's deflate data (its header read already) and checks its trailer. Returns true
 * when the member ended whole; false when it set `report.rejected` (corrupt, truncated, too large).
 */
async function* inflateMember(
  input: ByteQueue,
  state: { produced: number },
  report: InflateReport,
  limits: InflateLimits,
): AsyncGenerator<Uint8Array, boolean> {
  const { bound, boundReason } = limits;
  const raw = createInflateRaw();
  let sourceError: { error: unknown } | undefined;
  const abort = new AbortController();
  // Feeds the member's bytes one chunk at a time; inflateRaw consumes a whole chunk unless its data
  // ends inside it, and then `bytesWritten` (bytes consumed) says where: the rest goes back.
  const feeding = (async () => {
    let written = 0;
    try {
      for (;;) {
        if (abort.signal.aborted) return;
        const chunk = await input.next();
        if (chunk === undefined) {
          raw.end();
          return;
        }
        written += chunk.length;
        await new Promise<void>((resolve, reject) => raw.write(chunk, (e) => (e ? reject(e) : resolve())));
        const unread = written - raw.bytesWritten;
        if (unread > 0) {
          input.unshift(chunk.subarray(chunk.length - unread));
          raw.end();
          return;
        }
      }
    } catch (error) {
      if (!abort.signal.aborted && !raw.destroyed) {
        sourceError = { error };
        raw.destroy();
      }
    }
  })();
  let crc = 0;
  let size = 0;
  let guardError: { error: unknown } | undefined;
  try {
    for await (const out of raw as AsyncIterable<Buffer>) {
      try {
        limits.onInflated?.(out.length);
      } catch (error) {
        guardError = { error };
        throw error;
      }
      if (state.produced + out.length > bound) {
        const room = bound - state.produced;
        if (room > 0) yield out.subarray(0, room);
        report.rejected = boundReason;
        return false;
      }
      state.produced += out.length;
      crc = crc32(out, crc);
      size = (size + out.length) % 2 ** 32;
      yield out;
    }
  } catch (error) {
    if (guardError) throw guardError.error;
    if (sourceError) throw sourceError.error;
    if (abort.signal.aborted) return false;
    report.rejected = gzipFailure((error as { code?: string }).code);
    return false;
  } finally {
    abort.abort();
    raw.destroy();
    await feeding;
  }
  if (sourceError) throw sourceError.error;
  // RFC 1952: CRC-32 and size (modulo 2^32) of the member's data, little-endian.
  const trailer = await input.take(8);
  if (trailer.length < 8) {
    report.rejected = gzipFailure('Z_BUF_ERROR');
    return false;
  }
  const view = Buffer.from(trailer.buffer, trailer.byteOffset, 8);
  if (view.readUInt32LE(0) !== crc >>> 0 || view.readUInt32LE(4) !== size) {
    report.rejected = gzipFailure('Z_DATA_ERROR');
    return false;
  }
  return true;
}

/** The reason a gzip stream stopped being read, by zlib's error code. */
function gzipFailure(code: string | undefined): string {
  return code === 'Z_BUF_ERROR'
    ? 'gzip stream is truncated: the rest of the file could not be read'
    : `gzip stream is corrupt (${code ?? 'unknown error'}): the rest of the file could not be read`;
}

/** The longest gzip header read (its optional name, comment and extra field included). */
const MAX_GZIP_HEADER_BYTES = 1024 * 1024;

/**
 * Reads one member's header (RFC 1952: magic, method 8, flags, time, extra field, name, comment,
 * header CRC) off `input`; returns undefined when it was whole, else the reason to stop.
 */
async function gzipHeader(input: ByteQueue): Promise<string | undefined> {
  for (let want = 10; ; want = Math.min(want * 2, MAX_GZIP_HEADER_BYTES)) {
    const head = await input.peek(want);
    const length = gzipHeaderLength(head);
    if (typeof length === 'number') {
      await input.take(length);
      return undefined;
    }
    if (length === 'corrupt') return gzipFailure('Z_DATA_ERROR');
    // More is needed: none comes, or the header would be longer than any sensible one.
    if (head.length < want) return gzipFailure('Z_BUF_ERROR');
    if (want === MAX_GZIP_HEADER_BYTES) return gzipFailure('Z_DATA_ERROR');
  }
}

/** A gzip header's length in `head`, 'more' when it does not end within it, 'corrupt' when it is not one. */
function gzipHeaderLength(head: Uint8Array): number | 'more' | 'corrupt' {
  if (head.length < 10) return 'more';
  const flags = head[3] as number;
  if (head[0] !== 0x1f || head[1] !== 0x8b || head[2] !== 8 || (flags & 0xe0) !== 0) return 'corrupt';
  let at = 10;
  if (flags & 4) {
    if (head.length < at + 2) return 'more';
    at += 2 + ((head[at] as number) | ((head[at + 1] as number) << 8));
  }
  for (const flag of [8, 16]) {
    if (!(flags & flag)) continue;
    const zero = head.indexOf(0, at);
    if (zero < 0) return 'more';
    at = zero + 1;
  }
  if (flags & 2) at += 2;
  return at <= head.length ? at : 'more';
}

/** Bytes from an async source, read as needed, with room to peek ahead and to put bytes back. */
class ByteQueue {
  private pending: Uint8Array[] = [];
  private done = false;
  constructor(private readonly source: AsyncIterator<Uint8Array | string>) {}

  /** The next chunk (put-back bytes first), or undefined at the end. */
  async next(): Promise<Uint8Array | undefined> {
    const first = this.pending.shift();
    if (first) return first;
    if (this.done) return undefined;
    const step = await this.source.next();
    if (step.done) {
      this.done = true;
      return undefined;
    }
    return typeof step.value === 'string' ? Buffer.from(step.value, 'utf8') : step.value;
  }

  unshift(bytes: Uint8Array): void {
    if (bytes.length > 0) this.pending.unshift(bytes);
  }

  /** Up to `n` leading bytes, left in place (fewer only at the end). */
  async peek(n: number): Promise<Uint8Array> {
    let size = this.pending.reduce((sum, b) => sum + b.length, 0);
    while (size < n) {
      const next = this.done ? undefined : await this.next();
      if (next === undefined) break;
      this.pending.push(next);
      size += next.length;
    }
    const all = this.pending.length === 1 ? (this.pending[0] as Uint8Array) : Buffer.concat(this.pending);
    this.pending = all.length > 0 ? [all] : [];
    return all.subarray(0, n);
  }

  /** Up to `n` leading bytes, removed. */
  async take(n: number): Promise<Uint8Array> {
    const head = await this.peek(n);
    const all = this.pending[0];
    this.pending = all && all.length > head.length ? [all.subarray(head.length)] : [];
    return head;
  }

  /** Removes leading zero bytes. */
  async skipZeros(): Promise<void> {
    for (let chunk = await this.next(); chunk !== undefined; chunk = await this.next()) {
      const at = chunk.findIndex((b) => b !== 0);
      if (at >= 0) {
        this.unshift(chunk.subarray(at));
        return;
      }
    }
  }

  /** Reads to the end, keeping nothing; returns how many bytes there were. */
  async drain(): Promise<number> {
    let count = 0;
    for (let chunk = await this.next(); chunk !== undefined; chunk = await this.next()) count += chunk.length;
    return count;
  }

  async close(): Promise<void> {
    this.pending = [];
    await this.source.return?.(undefined);
  }
}
