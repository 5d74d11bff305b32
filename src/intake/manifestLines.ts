import { RerunError } from '../errors.js';

/**
 * The longest line read from a manifest or an inventory data file, in bytes. A row names one object:
 * its key is at most 1,024 bytes, URL-encoded at most three times that, and an inventory row adds a
 * few dozen short columns; 64 KiB leaves room for all of them. A gzip of a few hundred kilobytes can
 * expand to one line of 600 MiB, which reading line by line would hold whole (a RangeError past V8's
 * longest string, gigabytes before that).
 */
export const MAX_MANIFEST_LINE_BYTES = 64 * 1024;

/**
 * A line of a manifest or inventory data file is longer than any row naming one object can be:
 * reading stopped there, with no more than the limit held. Not retryable: the file must be fixed.
 *
 * @example
 * throw new ManifestLineTooLongError('s3://inv/data/a.csv.gz', 1, 65536);
 */
export class ManifestLineTooLongError extends RerunError {
  /** The file, as `s3://bucket/key`. */
  readonly file: string;
  /** The 1-based line number. */
  readonly line: number;
  readonly limitBytes: number;
  constructor(file: string, line: number, limitBytes: number) {
    super(
      `${file}: line ${line} is longer than ${limitBytes} bytes, more than any row naming one object can be ` +
        '(a corrupt or hostile file, e.g. a small gzip that expands to one huge line); reading stopped there. ' +
        'Check the file, or build the manifest again from a listing.',
      { retryable: false },
    );
    this.name = 'ManifestLineTooLongError';
    this.file = file;
    this.line = line;
    this.limitBytes = limitBytes;
  }
}

/**
 * The lines of a byte stream (`\n`, or `\r\n`, ends one; the last may end without), decoded as UTF-8,
 * holding at most `maxLineBytes` of a line in memory: a longer one throws
 * {@link ManifestLineTooLongError} naming the file and the line as soon as it passes the limit.
 *
 * @example
 * for await (const line of boundedLines(body.pipe(createGunzip()), { file: 's3://inv/data/a.csv.gz' })) use(line);
 */
export async function* boundedLines(
  chunks: AsyncIterable<Uint8Array | string>,
  options: { readonly file: string; readonly maxLineBytes?: number },
): AsyncGenerator<string> {
  const limit = options.maxLineBytes ?? MAX_MANIFEST_LINE_BYTES;
  let parts: Buffer[] = [];
  let held = 0;
  let line = 1;
  const text = (last: Buffer) => {
    const all = parts.length === 0 ? last : Buffer.concat([...parts, last]);
    parts = [];
    held = 0;
    const end = all.length > 0 && all[all.length - 1] === 0x0d ? all.length - 1 : all.length;
    return all.toString('utf8', 0, end);
  };
  for await (const value of chunks) {
    const chunk =
      typeof value === 'string'
        ? Buffer.from(value, 'utf8')
        : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    let start = 0;
    for (let at = chunk.indexOf(0x0a, start); at >= 0; at = chunk.indexOf(0x0a, start)) {
      if (held + (at - start) > limit) throw new ManifestLineTooLongError(options.file, line, limit);
      yield text(chunk.subarray(start, at));
      line++;
      start = at + 1;
    }
    const rest = chunk.subarray(start);
    if (held + rest.length > limit) throw new ManifestLineTooLongError(options.file, line, limit);
    if (rest.length > 0) {
      // A copy: the stream may reuse the chunk's memory.
      parts.push(Buffer.from(rest));
      held += rest.length;
    }
  }
  if (held > 0) yield text(Buffer.alloc(0));
}

/**
 * The largest manifest.json of an inventory read, in bytes. It lists the data files, about 200 bytes
 * each: 16 MiB holds tens of thousands of them, far more than an inventory writes.
 */
export const MAX_MANIFEST_JSON_BYTES = 16 * 1024 ** 2;

/**
 * A manifest (an inventory's manifest.json) is larger than any real one: reading stopped at the
 * limit instead of holding the object whole. Not retryable: the file must be fixed.
 *
 * @example
 * throw new ManifestTooLargeError('s3://inv/manifest.json', 16777216);
 */
export class ManifestTooLargeError extends RerunError {
  /** The file, as `s3://bucket/key`. */
  readonly file: string;
  readonly limitBytes: number;
  constructor(file: string, limitBytes: number) {
    super(
      `${file} is larger than ${limitBytes} bytes, more than any inventory manifest.json (a list of its data files) ` +
        'can be; reading stopped there. Check that the URL names the manifest.json of an S3 Inventory report.',
      { retryable: false },
    );
    this.name = 'ManifestTooLargeError';
    this.file = file;
    this.limitBytes = limitBytes;
  }
}

/**
 * A manifest's whole text, read as it streams, holding at most `maxBytes`: a larger one throws
 * {@link ManifestTooLargeError} as soon as it passes the limit.
 *
 * @example
 * const manifest = parseInventoryManifest(await boundedText(body, { file: 's3://inv/manifest.json' }));
 */
export async function boundedText(
  chunks: AsyncIterable<Uint8Array | string>,
  options: { readonly file: string; readonly maxBytes?: number },
): Promise<string> {
  const limit = options.maxBytes ?? MAX_MANIFEST_JSON_BYTES;
  const parts: Buffer[] = [];
  let size = 0;
  for await (const value of chunks) {
    const chunk = typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value);
    size += chunk.length;
    if (size > limit) throw new ManifestTooLargeError(options.file, limit);
    parts.push(chunk);
  }
  return Buffer.concat(parts).toString('utf8');
}
