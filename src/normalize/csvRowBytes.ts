import type { LineBytes } from './lineBytes.js';

const QUOTE = 0x22;
const COMMA = 0x2c;
const SPACE = 0x20;
const BACKSLASH = 0x5c;
const NULL_BYTES = [0x6e, 0x75, 0x6c, 0x6c]; // null
/** Values longer than this are copied with one TypedArray#set, not byte by byte. */
const LONG_VALUE = 32;
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
 * - a row that does not fit in the buffer's room (`LineBytes.room`), which the batch's send then makes;
 * - a row of long fields (more than 64 bytes a column on average), which the record path reads faster.
 *
 * @example
 * const header = compileCsvHeader(['id', 'name'], { byteStrings: true });
 * const rows = new CsvRowBytes(header.ok ? header.keyPrefixes : [], lineBytes);
 * rows.load('1, Ada \n');
 * rows.write(0, 7); // true: lineBytes holds {"id":"1","name":"Ada"}\n
 */
export class CsvRowBytes {
  /** Per column, the bytes before its value: `{"id":` for the first, `,"name":` for the others. */
  private readonly prefixes: Uint8Array[];
  /** The prefixes' bytes and, per column, room for `null`, plus `}` and `\n`. */
  private readonly overhead: number;
  /** Rows longer than this, in bytes, are declined. */
  private readonly longRow: number;
  /** The loaded text's bytes (its first `text.length`), in a buffer reused from text to text. */
  private text: Buffer = Buffer.allocUnsafeSlow(64 * 1024);

  /** `keyPrefixes`: a byte strings header's (CsvHeader.keyPrefixes, compiled with `byteStrings`). */
  constructor(
    keyPrefixes: readonly string[],
    private readonly lines: LineBytes,
  ) {
    this.prefixes = keyPrefixes.map((prefix) => Buffer.from(prefix, 'latin1'));
    this.overhead = this.prefixes.reduce((n, p) => n + p.byteLength + 4, 2);
    this.longRow = LONG_FIELD * keyPrefixes.length;
  }

  /**
   * Takes the byte string the next rows are in (the CSV reader's current chunk), as bytes: V8 reads a
   * Uint8Array faster than a string's characters.
   */
  load(text: string): void {
    if (this.text.byteLength < text.length) this.text = Buffer.allocUnsafeSlow(text.length);
    this.text.write(text, 0, 'latin1');
  }

  /**
   * Writes the JSON line of the row at `[start, eol)` of the loaded text (`eol` its terminator's
   * index) and returns true; or returns false, having written nothing, for a row it declines.
   */
  write(start: number, eol: number): boolean {
    const text = this.text;
    const lines = this.lines;
    // Long fields are left to the record path, whose native string search and copies beat a byte loop
    // there: the bench's two-column CSV of 240-byte values ran 15 % slower through this loop.
    if (eol - start > this.longRow) return false;
    // A value's bytes are at most its field's; its quotes or `null` are in the overhead.
    if (!lines.room(this.overhead + eol - start)) return false;
    const out = lines.buffer;
    const prefixes = this.prefixes;
    const columns = prefixes.length;
    let o = lines.filled;
    let pos = start;
    for (let column = 0; column < columns; column++) {
      // Past the terminator: the row has fewer fields than the header.
      if (pos > eol) return false;
      const prefix = prefixes[column] as Uint8Array;
      for (let j = 0; j < prefix.length; j++) out[o++] = prefix[j] as number;
      // The value is scanned, after its opening quote; spaces at its ends are cut, then it is copied.
      const quoted = pos < eol && (text[pos] as number) === QUOTE;
      let at = quoted ? pos + 1 : pos;
      while (at < eol && (text[at] as number) === SPACE) at++;
      const from = at;
      if (quoted) {
        for (let c = text[at] as number; c !== QUOTE; c = text[++at] as number) {
          // A line break or the end of the line before the closing quote: not a simple row.
          if (at >= eol || c < SPACE || c === BACKSLASH) return false;
        }
        pos = at + 1;
        if (pos !== eol && (text[pos] as number) !== COMMA) return false;
      } else {
        for (; at < eol; at++) {
          const c = text[at] as number;
          if (c === COMMA) break;
          if (c < SPACE || c === BACKSLASH || c === QUOTE) return false;
        }
        pos = at;
      }
      pos++; // the delimiter, or the terminator after the last field
      let to = at;
      while (to > from && (text[to - 1] as number) === SPACE) to--;
      if (from === to) {
        // A single empty field is a blank line when unquoted: the reader counts those.
        if (columns === 1 && !quoted) return false;
        for (let j = 0; j < 4; j++) out[o++] = NULL_BYTES[j] as number;
        continue;
      }
      if ((text[from] as number) >= 0x80 && unicodeSpaceAt(text, from, to) > 0) return false;
      if ((text[to - 1] as number) >= 0x80 && unicodeSpaceEndsAt(text, from, to)) return false;
      out[o++] = QUOTE;
      // A short value byte by byte; a long one in one native copy, which beats the loop past a few dozen bytes.
      if (to - from <= LONG_VALUE) {
        for (let i = from; i < to; i++) out[o++] = text[i] as number;
      } else {
        out.set(text.subarray(from, to), o);
        o += to - from;
      }
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
