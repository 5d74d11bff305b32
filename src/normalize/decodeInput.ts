import { isAscii } from 'node:buffer';
import { toByteString, utf8ByteStrings } from './byteStrings.js';
import { inflateGzip } from './inflateGzip.js';
import { ContentKind, SNIFF_BYTES, sniffContent, TextEncoding } from './inputSniffer.js';
import { SurrogateCarry } from './surrogateCarry.js';

/** Defaults of the gzip bomb guard (see {@link DecodeLimits}). */
export const DEFAULT_MAX_INFLATED_BYTES = 32 * 1024 ** 3;
export const DEFAULT_MAX_INFLATE_RATIO = 1000;
/** Below this many decompressed bytes the ratio is not enforced: a tiny gzip of repeated rows is harmless. */
export const INFLATE_RATIO_FLOOR_BYTES = 64 * 1024 ** 2;

/** Bounds on decompression, so that a small upload cannot keep a worker busy for its whole timeout. */
export interface DecodeLimits {
  /**
   * Largest decompressed size of a gzip input, in bytes.
   * @default 32 GiB (more than a 15-minute Lambda can normalize)
   */
  readonly maxInflatedBytes?: number;
  /**
   * Largest ratio of decompressed to compressed size (text compresses 5-20x; a gzip bomb 1000x+),
   * enforced once the output passes `ratioFloorBytes`.
   * @default 1000
   */
  readonly maxInflateRatio?: number;
  /**
   * Decompressed size below which the ratio is not enforced: a small gzip of repeated rows is harmless.
   * @default 64 MiB
   */
  readonly ratioFloorBytes?: number;
  /**
   * Size of the object as stored (its ContentLength), for the ratio. Without it only
   * `maxInflatedBytes` applies.
   */
  readonly storedBytes?: number;
  /**
   * Told the size of every decompressed chunk of a gzip input before it is decoded: the worker's
   * guard on decoded size and time (TransformInput.countDecoded). An error it throws ends decoding
   * and is thrown unchanged (unlike the bomb guard, which ends the text with `report.rejected`).
   * @default none
   */
  readonly onInflated?: (bytes: number) => void;
}

/** What decoding found out about the input; filled in while the text is read. */
export interface DecodeReport {
  /** e.g. `utf-8`, `utf-16le`, `gzip+utf-8` (empty until the first bytes were seen). */
  encoding: string;
  /**
   * Set when reading stopped early and for good: the content is not text, or a gzip stream is corrupt
   * or too large. The text yielded before it is real input; what follows is unread.
   */
  rejected?: string;
}

/**
 * Turns an input's byte chunks into text chunks: sniffs the first bytes (inputSniffer.ts), decompresses
 * gzip while streaming (memory stays one chunk, whatever the ratio), decodes UTF-8 or UTF-16 with a BOM
 * (a BOM is removed; a sequence split between chunks is decoded whole; invalid UTF-8 becomes U+FFFD,
 * so that the problem is visible in the output and nothing crashes). Content that is not text, a
 * corrupt or truncated gzip stream and a gzip bomb end the text with `report.rejected`, never with a
 * throw: those are properties of the input, and a retry would meet them again. Errors of the source
 * itself (a network reset while reading S3) are thrown unchanged: those are worth a retry.
 *
 * String chunks are text already and pass through (a leading U+FEFF removed).
 *
 * With `byteStrings`, the text comes as byte strings (src/normalize/byteStrings.ts): the UTF-8 bytes
 * of the same text, one character each. Valid UTF-8 is copied, not decoded; other encodings, invalid
 * UTF-8 and string chunks are decoded as above and encoded back.
 *
 * @example
 * const report: DecodeReport = { encoding: '' };
 * for await (const text of decodeInput(body, report)) process(text);
 * if (report.rejected) quarantineRest(report.rejected);
 */
export async function* decodeInput(
  input: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
  report: DecodeReport,
  limits: DecodeLimits = {},
  byteStrings = false,
): AsyncGenerator<string> {
  const source = toAsync(input)[Symbol.asyncIterator]();
  const first = await nextNonEmpty(source);
  if (first === undefined) {
    report.encoding = TextEncoding.UTF8;
    return;
  }
  if (typeof first === 'string') {
    report.encoding = 'text';
    const texts = textPassThrough(first, source);
    yield* byteStrings ? asByteStrings(texts) : texts;
    return;
  }
  const { head, rest } = await readHead(first, source);
  const sniffed = sniffContent(head);
  if (sniffed.kind === ContentKind.BINARY) {
    report.encoding = 'binary';
    report.rejected = sniffed.reason;
    await source.return?.(undefined);
    return;
  }
  if (sniffed.kind === ContentKind.TEXT) {
    report.encoding = sniffed.encoding;
    yield* decodeText(prepend(head.subarray(sniffed.bomBytes), rest), sniffed.encoding, byteStrings);
    return;
  }
  // gzip: decompress, then sniff what it holds (a gzip inside a gzip, or a zip, is rejected there).
  const inflated = inflate(prepend(head, rest), report, limits);
  const innerFirst = await nextNonEmpty(inflated);
  if (innerFirst === undefined || typeof innerFirst === 'string') {
    report.encoding = 'gzip+utf-8';
    return;
  }
  const inner = await readHead(innerFirst, inflated);
  const innerSniffed = sniffContent(inner.head);
  if (innerSniffed.kind !== ContentKind.TEXT) {
    report.encoding = 'gzip+binary';
    report.rejected =
      innerSniffed.kind === ContentKind.GZIP
        ? 'binary content: gzip inside gzip (decompress it once before uploading)'
        : innerSniffed.reason;
    await inflated.return?.(undefined);
    return;
  }
  report.encoding = `gzip+${innerSniffed.encoding}`;
  yield* decodeText(
    prepend(inner.head.subarray(innerSniffed.bomBytes), inner.rest),
    innerSniffed.encoding,
    byteStrings,
  );
}

async function* textPassThrough(first: string, source: AsyncIterator<Uint8Array | string>): AsyncGenerator<string> {
  yield first.charCodeAt(0) === 0xfeff ? first.slice(1) : first;
  // Later byte chunks of a mixed input are UTF-8 (the historical contract of normalizeRecords).
  const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
  let pending = false;
  for (let step = await source.next(); !step.done; step = await source.next()) {
    const chunk = step.value;
    if (typeof chunk === 'string') {
      const text = pending ? decoder.decode() + chunk : chunk;
      pending = false;
      if (text !== '') yield text;
    } else {
      pending = true;
      const text = decoder.decode(chunk, { stream: true });
      if (text !== '') yield text;
    }
  }
  if (pending) {
    const tail = decoder.decode();
    if (tail !== '') yield tail;
  }
}

/** Texts as byte strings, a surrogate pair cut between two of them encoded whole. */
async function* asByteStrings(texts: AsyncIterable<string>): AsyncGenerator<string> {
  const carry = new SurrogateCarry();
  for await (const text of texts) {
    const whole = carry.take(text);
    if (whole !== '') yield toByteString(whole);
  }
  const held = carry.flush();
  if (held !== '') yield toByteString(held);
}

function decodeText(
  chunks: AsyncIterable<Uint8Array | string>,
  encoding: TextEncoding,
  byteStrings: boolean,
): AsyncGenerator<string> {
  if (!byteStrings) return decodedText(chunks, encoding);
  // UTF-8 is copied as it is (byteStrings.ts); UTF-16 is decoded, then encoded as UTF-8.
  return encoding === TextEncoding.UTF8 ? utf8ByteStrings(chunks) : asByteStrings(decodedText(chunks, encoding));
}

async function* decodedText(
  chunks: AsyncIterable<Uint8Array | string>,
  encoding: TextEncoding,
): AsyncGenerator<string> {
  // ignoreBOM: the sniffer removed the leading BOM; a U+FEFF later on is data.
  const decoder = new TextDecoder(encoding, { fatal: false, ignoreBOM: true });
  // While every UTF-8 chunk so far was ASCII the decoder has been fed nothing and holds nothing, so
  // an ASCII chunk is its own text: copied as Latin-1 (a one-byte string, several times faster than
  // the decoder, which the CPU profile showed at 12 % of the worker's time). From the first other
  // chunk on, everything goes through the decoder, whose state then matters.
  let asciiSoFar = encoding === 'utf-8';
  for await (const chunk of chunks) {
    let text: string;
    if (typeof chunk === 'string') text = chunk;
    else if (asciiSoFar && isAscii(chunk))
      text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1');
    else {
      asciiSoFar = false;
      text = decoder.decode(chunk, { stream: true });
    }
    if (text !== '') yield text;
  }
  if (asciiSoFar) return;
  const tail = decoder.decode(); // an incomplete sequence at the end becomes U+FFFD
  if (tail !== '') yield tail;
}

/**
 * Decompresses a gzip input (inflateGzip.ts) within the bomb guard's bound: a byte count fixed
 * before reading (from the stored size), so where the text stops does not depend on how the network
 * cut the input into chunks.
 */
function inflate(
  compressed: AsyncIterable<Uint8Array | string>,
  report: DecodeReport,
  limits: DecodeLimits,
): AsyncGenerator<Uint8Array> {
  const maxBytes = limits.maxInflatedBytes ?? DEFAULT_MAX_INFLATED_BYTES;
  const ratio = limits.maxInflateRatio ?? DEFAULT_MAX_INFLATE_RATIO;
  const byRatio =
    limits.storedBytes !== undefined
      ? Math.max(limits.ratioFloorBytes ?? INFLATE_RATIO_FLOOR_BYTES, limits.storedBytes * ratio)
      : Number.POSITIVE_INFINITY;
  const bound = Math.min(maxBytes, byRatio);
  const boundReason =
    bound === maxBytes
      ? `gzip content exceeds ${maxBytes} bytes when decompressed (bomb guard: maxInflatedBytes)`
      : `gzip content expands more than ${ratio}x its stored ${limits.storedBytes} bytes (bomb guard: maxInflateRatio)`;
  return inflateGzip(compressed, report, {
    bound,
    boundReason,
    ...(limits.onInflated ? { onInflated: limits.onInflated } : {}),
  });
}

/** Collects at least SNIFF_BYTES leading bytes (fewer at end of input); `rest` continues after them. */
async function readHead(
  first: Uint8Array,
  source: AsyncIterator<Uint8Array | string>,
): Promise<{ head: Uint8Array; rest: AsyncIterator<Uint8Array | string> }> {
  const parts: Uint8Array[] = [first];
  let size = first.length;
  while (size < SNIFF_BYTES) {
    const step = await source.next();
    if (step.done) break;
    const chunk = typeof step.value === 'string' ? Buffer.from(step.value, 'utf8') : step.value;
    parts.push(chunk);
    size += chunk.length;
  }
  return { head: parts.length === 1 ? first : Buffer.concat(parts), rest: source };
}

async function* prepend(
  head: Uint8Array,
  rest: AsyncIterator<Uint8Array | string>,
): AsyncGenerator<Uint8Array | string> {
  try {
    if (head.length > 0) yield head;
    for (let step = await rest.next(); !step.done; step = await rest.next()) yield step.value;
  } finally {
    await rest.return?.();
  }
}

async function nextNonEmpty<T extends Uint8Array | string>(source: AsyncIterator<T>): Promise<T | undefined> {
  for (;;) {
    const step = await source.next();
    if (step.done) return undefined;
    if (step.value.length > 0) return step.value;
  }
}

async function* toAsync<T>(input: AsyncIterable<T> | Iterable<T>): AsyncGenerator<T> {
  yield* input;
}
