/**
 * Text from a byte stream, decoded correctly. Decoding each chunk on its own (`String(chunk)`,
 * `chunk.toString()`) corrupts any multi-byte character that a chunk boundary splits, and where
 * boundaries fall differs from run to run: the same input would give different outputs. These
 * helpers keep a split sequence until its remaining bytes arrive.
 */

/**
 * The UTF-8 text of a byte stream, chunk by chunk, multi-byte safe across chunks: a sequence split
 * between two chunks is decoded whole, a leading byte order mark is removed, invalid bytes become
 * U+FFFD (visible in the output, never a crash). String chunks pass through as they are.
 *
 * @example
 * for await (const text of decodeText(body)) await output.write(text.toUpperCase());
 */
export async function* decodeText(
  body: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: false });
  let pending = false;
  for await (const chunk of body) {
    let text: string;
    if (typeof chunk === 'string') {
      text = pending ? decoder.decode() + chunk : chunk;
      pending = false;
    } else {
      text = decoder.decode(chunk, { stream: true });
      pending = true;
    }
    if (text !== '') yield text;
  }
  if (pending) {
    const tail = decoder.decode(); // an incomplete sequence at the end becomes U+FFFD
    if (tail !== '') yield tail;
  }
}

/**
 * The lines of a text stream, without their terminators. LF, CRLF and a lone CR (classic Mac OS) all
 * end a line, a CRLF split between chunks included, as the reference normalizer reads them; a last
 * line without a terminator is returned too, an empty input has no lines. Each line is held whole in
 * memory, so bound your input's line length if it is not yours (the reference worker's readers do).
 *
 * @example
 * for await (const line of splitLines(decodeText(body))) count += 1;
 */
export async function* splitLines(text: AsyncIterable<string> | Iterable<string>): AsyncGenerator<string> {
  let carry = '';
  let skipLf = false;
  for await (const chunk of text) {
    let start = 0;
    if (skipLf && chunk.charCodeAt(0) === 0x0a) start = 1;
    skipLf = false;
    for (let i = start; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (c !== 0x0a && c !== 0x0d) continue;
      yield carry + chunk.slice(start, i);
      carry = '';
      if (c === 0x0d) {
        if (i + 1 < chunk.length) {
          if (chunk.charCodeAt(i + 1) === 0x0a) i += 1;
        } else {
          skipLf = true; // the LF of this CRLF may start the next chunk
        }
      }
      start = i + 1;
    }
    carry += chunk.slice(start);
  }
  if (carry !== '') yield carry;
}
