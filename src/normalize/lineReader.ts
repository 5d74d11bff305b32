import { WorkerConfigurationError } from '../errors.js';
import { checkOptions } from '../options/checkOptions.js';
import { exceedsUtf8Bytes, RECORD_LIMIT_NAMES, type RecordLimits, resolveRecordLimits } from './recordLimits.js';
import { SurrogateCarry } from './surrogateCarry.js';

/** One physical line of text, as returned by {@link LineReader}. */
export interface TextLine {
  /** 1-based line number. */
  readonly line: number;
  /**
   * The line without its LF / CRLF / CR terminator. When `oversized`, only its first `maxRawChars + 1`
   * characters (enough to build a truncated excerpt) are kept.
   */
  readonly text: string;
  /** Length of the whole line in characters (terminator excluded), even when `text` is cut. */
  readonly chars: number;
  /** True when the line is longer than `maxRecordBytes` UTF-8 bytes; its content was not buffered. */
  readonly oversized: boolean;
}

const LF = 0x0a;

/**
 * Splits streamed text into lines (LF, CRLF or a lone CR, in any mixture: one definition of a physical
 * line for every format, so a quarantine line number is the line an editor shows) with bounded memory: a line longer than
 * `maxRecordBytes` stops being buffered once the limit is passed and is returned `oversized`, and
 * reading resumes at the next line. Results do not depend on how the text is split into chunks, even
 * between the halves of a surrogate pair.
 *
 * Usage: `push` a chunk, drain `nextLine()` until undefined, push the next; after the last chunk call
 * `end()` and drain once more (a final line without a terminator is returned then).
 *
 * @example
 * const reader = new LineReader();
 * reader.push('{"a":1}\r\n{"b"');
 * reader.nextLine(); // { line: 1, text: '{"a":1}', chars: 7, oversized: false }
 * reader.nextLine(); // undefined: the second line is incomplete
 * reader.push(':2}');
 * reader.end();
 * reader.nextLine(); // { line: 2, text: '{"b":2}', chars: 7, oversized: false }
 */
export class LineReader {
  private readonly limits: RecordLimits;
  private readonly heldHighSurrogate = new SurrogateCarry();
  private text = '';
  private pos = 0;
  private ended = false;
  private line = 1;
  // The line in progress, carried over from earlier chunks.
  private inLine = false;
  private prefix = '';
  private carriedChars = 0;
  private carriedBytes = 0;
  private discarding = false;
  /** Cached index of the next `\n` / `\r` at or after `pos` (text.length when none; stale when < pos). */
  private nextLf = -1;
  private nextCr = -1;
  /** Index at which an LF completes the CRLF whose CR ended the previous line; 0 across chunks. */
  private lfAfterCr = -1;

  constructor(limits: Partial<RecordLimits> = {}) {
    checkOptions('LineReader', limits, RECORD_LIMIT_NAMES, (m) => new WorkerConfigurationError(m));
    this.limits = resolveRecordLimits(limits);
  }

  /** Hands the reader the next piece of text. Call it only once `nextLine()` has returned undefined. */
  push(text: string): void {
    if (this.ended) throw new Error('LineReader.push called after end()');
    if (this.pos < this.text.length) throw new Error('LineReader.push called before the previous text was drained');
    this.load(this.heldHighSurrogate.take(text));
  }

  /**
   * The input stops here for good (the rest cannot be read): returns the 1-based line on which the
   * unfinished line starts (or the next line), and forgets it; it is neither returned nor counted.
   */
  abandon(): number {
    const line = this.line;
    this.inLine = false;
    this.prefix = '';
    this.carriedChars = 0;
    this.carriedBytes = 0;
    this.discarding = false;
    this.text = '';
    this.pos = 0;
    this.ended = true;
    this.heldHighSurrogate.flush();
    return line;
  }

  private load(text: string): void {
    this.lfAfterCr = this.lfAfterCr !== -1 && this.lfAfterCr >= this.text.length ? 0 : -1;
    this.text = text;
    this.pos = 0;
    this.nextLf = -1;
    this.nextCr = -1;
  }

  /** Marks the end of input; the next `nextLine()` returns the unterminated last line, if any. */
  end(): void {
    this.ended = true;
  }

  /** Returns the next complete line, or undefined when more text (or `end()`) is needed. */
  nextLine(): TextLine | undefined {
    for (;;) {
      const text = this.text;
      const len = text.length;
      // The LF of a CRLF whose CR ended the previous line: part of that terminator.
      if (this.pos === this.lfAfterCr && text.charCodeAt(this.pos) === LF) this.pos += 1;
      if (this.pos < len) {
        if (this.nextLf < this.pos) this.nextLf = indexOrLength(text, '\n', this.pos);
        if (this.nextCr < this.pos) this.nextCr = indexOrLength(text, '\r', this.pos);
        const eol = Math.min(this.nextLf, this.nextCr);
        if (eol < len) {
          const start = this.pos;
          if (eol !== this.nextCr) this.pos = eol + 1;
          else if (text.charCodeAt(eol + 1) === LF) this.pos = eol + 2;
          else {
            this.pos = eol + 1;
            this.lfAfterCr = eol + 1; // the LF may start the next chunk
          }
          return this.finish(text, start, eol);
        }
        this.carry(text, this.pos, len);
        this.pos = len;
      }
      if (!this.ended) return undefined;
      // The text is drained: a high surrogate held back from the last chunk is the input's final character.
      const held = this.heldHighSurrogate.flush();
      if (held !== '') {
        this.load(held);
        continue;
      }
      if (!this.inLine) return undefined;
      return this.finish(text, len, len);
    }
  }

  private carry(text: string, start: number, end: number): void {
    const piece = text.slice(start, end);
    const keep = this.limits.maxRawChars + 1;
    this.inLine = true;
    this.carriedChars += piece.length;
    this.carriedBytes += Buffer.byteLength(piece, 'utf8');
    if (!this.discarding) {
      this.prefix += piece;
      if (this.carriedBytes > this.limits.maxRecordBytes) {
        // Bound memory: keep only what a quarantine excerpt needs and skip the rest of the line.
        this.discarding = true;
        this.prefix = this.prefix.slice(0, keep);
      }
    } else if (this.prefix.length < keep) {
      this.prefix += piece.slice(0, keep - this.prefix.length);
    }
  }

  private finish(text: string, start: number, end: number): TextLine {
    const chars = this.carriedChars + (end - start);
    const oversized =
      this.discarding || exceedsUtf8Bytes(text, start, end, this.carriedBytes, this.limits.maxRecordBytes);
    let content: string;
    if (oversized) {
      const keep = this.limits.maxRawChars + 1;
      const head = this.prefix.length > keep ? this.prefix.slice(0, keep) : this.prefix;
      content = head + text.slice(start, Math.min(end, start + Math.max(0, keep - head.length)));
      if (content.length > chars) content = content.slice(0, chars);
    } else {
      content = this.prefix === '' ? text.slice(start, end) : this.prefix + text.slice(start, end);
    }
    const result: TextLine = { line: this.line, text: content, chars, oversized };
    this.line += 1;
    this.inLine = false;
    this.prefix = '';
    this.carriedChars = 0;
    this.carriedBytes = 0;
    this.discarding = false;
    return result;
  }
}

function indexOrLength(text: string, needle: string, from: number): number {
  const i = text.indexOf(needle, from);
  return i === -1 ? text.length : i;
}
