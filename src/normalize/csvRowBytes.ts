import type { LineBytes } from './lineBytes.js';

const QUOTE = 0x22;
const COMMA = 0x2c;
const SPACE = 0x20;
const LF = 0x0a;
const CR = 0x0d;
const NULL_BYTES = [0x6e, 0x75, 0x6c, 0x6c]; // null
/** Rows longer than this many bytes per column are declined (see write). */
const LONG_FIELD = 64;

/**
 * Writes a CSV data row's JSON line straight into a {@link LineBytes} buffer: the bytes that
 * `CsvHeader.toJson` and the sink would make, with no field strings, no JSON string and no batch to
 * join. The CPU profile of the bundled worker over the bench's CSV had a third of its time in
 * those (slicing fields, concatenating the line, flattening and copying it, and their garbage).
 *
 * It reads a byte string's lines (src/normalize/byteStrings.ts) and takes only the common rows; any
 * other it declines, touching nothing, and the reader makes a record of it as before. It declines:
 * - a field count other than the header's (the row is quarantined), and a blank line;
 * - a character JSON escapes (a control character, TAB included, `\\`, a literal `"`);
 * - a quoted field with a line break, a doubled quote or anything but a delimiter after its closing
 *   quote;
 * - a value that may start or end with Unicode white space, which String#trim would cut (the space,
 *   the only ASCII white space left, is cut here);
 * - a row that does not fit in the buffer's room (`LineBytes.room`): when the batch is due to be sent
 *   (`waitsForSend`), the reader sends it and asks again; a row that no buffer of its size could hold
 *   goes the record path;
 * - a row of long fields (more than 64 bytes a column on average), which the record path reads faster.
 *
 * @example
 * const header = compileCsvHeader(['id', 'name'], { byteStrings: true });
 * const rows = new CsvRowBytes(header.ok ? header.keyPrefixes : [], lineBytes);
 * rows.load('1, Ada \n');
 * rows.write(0, 7); // true: lineBytes holds {"id":"1","name":"Ada"}\n
 */
export class CsvRowBytes {
  /**
   * The key prefixes, each with the opening quote of its value (`{"id":"` for the first column,
   * `,"name":"` for the others), as 32-bit words: column `c`'s are `[wordEnds[c - 1], wordEnds[c])`,
   * its last word padded with bytes the value overwrites. Copied a word at a time, as values are.
   */
  private readonly prefixWords: Int32Array;
  private readonly wordEnds: Int32Array;
  private readonly prefixLengths: Int32Array;
  /**
   * The prefixes' bytes and, per column, room for `null`, plus `}` and `\n`, and a word: the last
   * word written may reach three bytes past the line.
   */
  private readonly overhead: number;
  /** Rows longer than this, in bytes, are declined. */
  private readonly longRow: number;
  /** The loaded text's bytes (its first `text.length`), in a buffer reused from text to text. */
  private text: Buffer = Buffer.allocUnsafeSlow(64 * 1024 + WORD);
  /** `text`, and the buffer the rows are written in, read and written a word at a time. */
  private textWords = new DataView(this.text.buffer, this.text.byteOffset, this.text.byteLength);
  private readonly outWords: DataView;

  /** `keyPrefixes`: a byte strings header's (CsvHeader.keyPrefixes, compiled with `byteStrings`). */
  constructor(
    keyPrefixes: readonly string[],
    private readonly lines: LineBytes,
  ) {
    const prefixes = keyPrefixes.map((prefix) => Buffer.from(`${prefix}"`, 'latin1'));
    const words = prefixes.map((prefix) => Math.ceil(prefix.byteLength / WORD));
    this.prefixWords = new Int32Array(words.reduce((n, w) => n + w, 0));
    this.wordEnds = new Int32Array(prefixes.length);
    this.prefixLengths = new Int32Array(prefixes.length);
    const padded = Buffer.alloc(WORD * this.prefixWords.length);
    let end = 0;
    prefixes.forEach((prefix, column) => {
      prefix.copy(padded, WORD * end);
      end += words[column] as number;
      this.wordEnds[column] = end;
      this.prefixLengths[column] = prefix.byteLength;
    });
    const view = new DataView(padded.buffer, padded.byteOffset, padded.byteLength);
    for (let w = 0; w < end; w++) this.prefixWords[w] = view.getInt32(WORD * w, true);
    this.overhead = prefixes.reduce((n, p) => n + p.byteLength + 3, 2 + WORD);
    this.longRow = LONG_FIELD * keyPrefixes.length;
    const out = lines.buffer;
    this.outWords = new DataView(out.buffer, out.byteOffset, out.byteLength);
  }

  /**
   * Takes the byte string the next rows are in (the CSV reader's current chunk), as bytes: V8 reads a
   * Uint8Array faster than a string's characters.
   */
  load(text: string): void {
    if (this.text.byteLength < text.length + WORD) {
      // Room past the text for a word read that starts before its end.
      this.text = Buffer.allocUnsafeSlow(text.length + WORD);
      this.textWords = new DataView(this.text.buffer, this.text.byteOffset, this.text.byteLength);
    }
    this.text.write(text, 0, 'latin1');
  }

  /** Whether a row declined may be written once the batch is sent: the batch is due (LineBytes.due). */
  get waitsForSend(): boolean {
    return this.lines.due;
  }

  /**
   * Writes the JSON line of the row at `[start, eol)` of the loaded text (`eol` its terminator's
   * index) and returns true; or returns false, having written nothing, for a row it declines.
   *
   * Each value is scanned and copied in one pass, four bytes at a time (stopBytes): the terminator at
   * `eol` stops every scan, so no byte is compared with `eol` too. Scanning, then copying, byte by byte
   * took about twice the time over the bench's rows.
   */
  write(start: number, eol: number): boolean {
    const text = this.text;
    const lines = this.lines;
    // Long fields are left to the record path, whose native string search and copies beat a byte loop
    // there: the bench's two-column CSV of 240-byte values ran 15 % slower through this loop.
    if (eol - start > this.longRow) return false;
    // The scans below stop at the terminator: it must be there.
    const terminator = text[eol] as number;
    if (terminator !== LF && terminator !== CR) return false;
    // A value's bytes are at most its field's; its quotes or `null` are in the overhead.
    if (!lines.room(this.overhead + eol - start)) return false;
    const out = lines.buffer;
    const outWords = this.outWords;
    const textWords = this.textWords;
    const prefixWords = this.prefixWords;
    const wordEnds = this.wordEnds;
    const prefixLengths = this.prefixLengths;
    const columns = wordEnds.length;
    let o = lines.filled;
    let pos = start;
    let w = 0;
    for (let column = 0; column < columns; column++) {
      // Past the terminator: the row has fewer fields than the header.
      if (pos > eol) return false;
      // The prefix, with the value's opening quote; its last word's padding is overwritten after.
      const valueStart = o + (prefixLengths[column] as number);
      for (const wordEnd = wordEnds[column] as number; w < wordEnd; w++, o += WORD) {
        outWords.setInt32(o, prefixWords[w] as number, true);
      }
      o = valueStart;
      const quoted = (text[pos] as number) === QUOTE;
      let at = quoted ? pos + 1 : pos;
      // Spaces at a value's ends are cut: those before it skipped, those after it taken back.
      while ((text[at] as number) === SPACE) at++;
      // Whole words of the value are copied as they are; the first word that holds a byte which stops
      // it is copied too, and `at` and `o` moved to that byte: the bytes past it are overwritten next.
      const stops = quoted ? QUOTED_STOPS : UNQUOTED_STOPS;
      let word = textWords.getInt32(at, true);
      let found = stopBytes(word, stops);
      for (; found === 0; found = stopBytes(word, stops)) {
        outWords.setInt32(o, word, true);
        at += WORD;
        o += WORD;
        word = textWords.getInt32(at, true);
      }
      outWords.setInt32(o, word, true);
      const before = firstByteOf(found);
      at += before;
      o += before;
      const c = text[at] as number;
      if (quoted) {
        // A line break or the end of the line before the closing quote: not a simple row.
        if (c !== QUOTE) return false;
        pos = at + 1;
        if (pos !== eol && (text[pos] as number) !== COMMA) return false;
      } else {
        // A literal quote, `\\` or a control character: JSON escapes them.
        if (c !== COMMA && at !== eol) return false;
        pos = at;
      }
      pos++; // the delimiter, or the terminator after the last field
      while (o > valueStart && (out[o - 1] as number) === SPACE) o--;
      if (o === valueStart) {
        // A single empty field is a blank line when unquoted: the reader counts those.
        if (columns === 1 && !quoted) return false;
        o--; // the opening quote
        for (let j = 0; j < 4; j++) out[o++] = NULL_BYTES[j] as number;
        continue;
      }
      if ((out[valueStart] as number) >= 0x80 && unicodeSpaceAt(out, valueStart, o) > 0) return false;
      if ((out[o - 1] as number) >= 0x80 && unicodeSpaceEndsAt(out, valueStart, o)) return false;
      out[o++] = QUOTE;
    }
    // More fields than the header's.
    if (pos !== eol + 1) return false;
    out[o++] = 0x7d; // }
    out[o++] = 0x0a;
    lines.filled = o;
    return true;
  }
}

/** The bytes, besides the control characters, that stop a quoted value (`"`, `\\`) and an unquoted one (`,` too). */
export const QUOTED_STOPS = 0;
export const UNQUOTED_STOPS = 1;

/**
 * The bytes of `word` that may stop a value, as a mask with bit 7 of each byte set for such a byte:
 * a control character, `"`, `\\`, and with UNQUOTED_STOPS `,`. The tests are the classic zero-byte
 * ones (Hacker's Delight, 6-1): `(x - 0x01..) & ~x & 0x80..` is not zero exactly when a byte of `x`
 * is zero, and `(x - 0x20..) & ~x & 0x80..` when one is below 0x20. A borrow can mark a byte above a
 * marked one too, never below: the lowest marked byte is exact (see firstByteOf).
 */
export function stopBytes(word: number, stops: number): number {
  const quote = word ^ 0x22222222;
  const backslash = word ^ 0x5c5c5c5c;
  const comma = stops === UNQUOTED_STOPS ? word ^ 0x2c2c2c2c : word;
  const marked =
    ((word - 0x20202020) & ~word) |
    ((quote - 0x01010101) & ~quote) |
    ((backslash - 0x01010101) & ~backslash) |
    ((comma - 0x01010101) & ~comma);
  return marked & 0x80808080;
}

/** The index (0 to 3) of the first byte a stopBytes mask marks, the word read little-endian. */
export function firstByteOf(marked: number): number {
  return (31 - Math.clz32(marked & -marked)) >> 3;
}

/** Bytes read and written at once: a 32-bit word (SWAR, "SIMD within a register"). */
const WORD = 4;

/**
 * The length of the Unicode white space (as String#trim has it, beyond ASCII) whose UTF-8 bytes start
 * at `at` in `text`, before `end`, or 0: U+00A0, U+1680, U+2000 to U+200A, U+2028,
 * U+2029, U+202F, U+205F, U+3000 and U+FEFF.
 */
export function unicodeSpaceAt(text: Uint8Array, at: number, end: number): number {
  const a = text[at] as number;
  if (a === 0xc2) return at + 1 < end && (text[at + 1] as number) === 0xa0 ? 2 : 0;
  if (at + 3 > end) return 0;
  const b = text[at + 1] as number;
  const c = text[at + 2] as number;
  switch (a) {
    case 0xe1:
      return b === 0x9a && c === 0x80 ? 3 : 0;
    case 0xe2:
      if (b === 0x80) return (c >= 0x80 && c <= 0x8a) || c === 0xa8 || c === 0xa9 || c === 0xaf ? 3 : 0;
      return b === 0x81 && c === 0x9f ? 3 : 0;
    case 0xe3:
      return b === 0x80 && c === 0x80 ? 3 : 0;
    case 0xef:
      return b === 0xbb && c === 0xbf ? 3 : 0;
    default:
      return 0;
  }
}

/** Whether `text[from, to)` ends with Unicode white space (see unicodeSpaceAt). */
export function unicodeSpaceEndsAt(text: Uint8Array, from: number, to: number): boolean {
  return (
    (to - 2 >= from && unicodeSpaceAt(text, to - 2, to) === 2) ||
    (to - 3 >= from && unicodeSpaceAt(text, to - 3, to) === 3)
  );
}
