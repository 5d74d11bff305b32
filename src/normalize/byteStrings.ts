import { isUtf8 } from 'node:buffer';

/*
 * Byte strings: text held as its UTF-8 bytes, one character per byte (the Latin-1 form that
 * `Buffer#toString('latin1')` makes and `Buffer#write(s, 'latin1')` writes back). The CSV reader's
 * syntax is ASCII, so it reads byte strings as it reads text, and a line built from them is its
 * output's bytes already: copied into a part buffer, not encoded. The CPU profile of the mixed CSV
 * showed decoding (TextDecoder, 0.75 GB per CPU second) and encoding (V8's UTF-8 writer, 10 times
 * slower for a string with one non-ASCII character than for an ASCII one) at a tenth of the worker.
 */

/** The byte string of `text` (its UTF-8 bytes; a lone surrogate becomes U+FFFD's). */
export function toByteString(text: string): string {
  return NON_ASCII.test(text) ? Buffer.from(text, 'utf8').toString('latin1') : text;
}

/** The text a byte string encodes. */
export function fromByteString(bytes: string): string {
  return NON_ASCII.test(bytes) ? Buffer.from(bytes, 'latin1').toString('utf8') : bytes;
}

const NON_ASCII = /[\u0080-\uffff]/;

/**
 * A byte string trimmed as String#trim trims the text it encodes. Its ASCII white space is cut
 * directly; a non-ASCII character left at an end may be Unicode white space (U+00A0, U+3000...),
 * which only the decoded text can tell: String#trim on the bytes would take the byte 0xA0, the
 * second byte of `à`, for a no-break space.
 *
 * @example
 * trimmedByteString(toByteString(' à ')); // toByteString('à')
 */
export function trimmedByteString(bytes: string): string {
  let start = 0;
  let end = bytes.length;
  while (start < end && isAsciiSpace(bytes.charCodeAt(start))) start++;
  while (end > start && isAsciiSpace(bytes.charCodeAt(end - 1))) end--;
  const cut = start === 0 && end === bytes.length ? bytes : bytes.slice(start, end);
  if (cut === '' || (cut.charCodeAt(0) < 0x80 && cut.charCodeAt(cut.length - 1) < 0x80)) return cut;
  const text = Buffer.from(cut, 'latin1').toString('utf8');
  const trimmed = text.trim();
  return trimmed.length === text.length ? cut : Buffer.from(trimmed, 'utf8').toString('latin1');
}

/** White space String#trim removes, in ASCII: TAB, LF, VT, FF, CR and the space. */
function isAsciiSpace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d);
}

/**
 * UTF-8 byte chunks as byte strings, with the text TextDecoder (`fatal: false`) would decode from
 * them: a sequence cut between two chunks is held until the next, and a chunk that is not valid
 * UTF-8 is decoded (invalid sequences become U+FFFD) and encoded back. Valid chunks, nearly all,
 * are copied as they are.
 *
 * @example
 * for await (const bytes of utf8ByteStrings(chunks)) reader.push(bytes);
 */
export async function* utf8ByteStrings(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  let held: Buffer | undefined;
  for await (const chunk of chunks) {
    let bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : asBuffer(chunk);
    if (held !== undefined) {
      bytes = Buffer.concat([held, bytes]);
      held = undefined;
    }
    const cut = incompleteTailStart(bytes);
    if (cut < bytes.length) {
      held = Buffer.from(bytes.subarray(cut));
      bytes = bytes.subarray(0, cut);
    }
    if (bytes.length > 0) yield byteStringOf(bytes);
  }
  if (held !== undefined) yield byteStringOf(held);
}

function byteStringOf(bytes: Buffer): string {
  if (isUtf8(bytes)) return bytes.toString('latin1');
  // Not a stream decoder: the sequence cut at the end was held back, and at the end of input the
  // held bytes are decoded alone, as a flushing decoder would.
  return Buffer.from(new TextDecoder('utf-8', { fatal: false, ignoreBOM: true }).decode(bytes), 'utf8').toString(
    'latin1',
  );
}

/**
 * Where the UTF-8 sequence that the end of `bytes` cuts short starts, or bytes.length. Splitting
 * there never changes the decoded text: the cut is before a byte that is not a continuation byte,
 * which ends any sequence before it the same way whether it follows at once or in the next chunk.
 */
export function incompleteTailStart(bytes: Uint8Array): number {
  const n = bytes.length;
  for (let i = n - 1; i >= 0 && i >= n - 3; i--) {
    const b = bytes[i] as number;
    if (b < 0x80) return n;
    if (b >= 0xc0) {
      const length = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
      return n - i < length ? i : n;
    }
  }
  return n;
}

function asBuffer(chunk: Uint8Array): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}
