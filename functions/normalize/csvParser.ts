import { exceedsUtf8Bytes, excerpt, oversizeReason, type RecordLimits, resolveRecordLimits } from './recordLimits.js';
import { SurrogateCarry } from './surrogateCarry.js';

/** One CSV record as it appears in the file, before any header is applied. */
export interface CsvRecord {
  /** 1-based physical line on which the record starts (quoted newlines count as lines). */
  readonly line: number;
  /**
   * Field values with quoting undone (`"a ""b"""` -> `a "b"`), NOT trimmed. Empty when the record was
   * too large to keep (then `problem` says so).
   */
  readonly fields: string[];
  /** Why the record cannot be used (`record exceeds 1 MiB`, an unterminated quote...), else undefined. */
  readonly problem: string | undefined;
  /** The record's original text without its line terminator, cut to `maxRawChars`. */
  readonly raw: string;
  /** True when `raw` is shorter than the record. */
  readonly rawTruncated: boolean;
  /**
   * True when no field holds a character that JSON must escape (`"`, `\\`, controls, surrogates): lets
   * the serializer skip a per-field scan. False is always safe.
   */
  readonly escapeFree: boolean;
}

/** Characters JSON.stringify escapes: `"`, `\\`, controls, and surrogates (lone ones become `\\uXXXX`). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000-U+001F are exactly the characters JSON must escape.
export const JSON_ESCAPED_CHARACTER = /["\\\u0000-\u001f\ud800-\udfff]/;

/** Reason given for a quoted field still open when the input ends. */
export const UNTERMINATED_QUOTE_REASON = 'unterminated quoted field at end of input';

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;

/** Where the scanner is inside the current field. */
const FieldState = {
  /** Nothing of the field consumed yet: a `"` here opens a quoted field. */
  START: 0,
  /** Inside an unquoted field: runs to the next `,` or newline; quotes are literal. */
  UNQUOTED: 1,
  /** Inside a quoted field: runs to the next `"`; commas and newlines are data. */
  QUOTED: 2,
  /** Just read a `"` inside a quoted field: `""` is an escaped quote, anything else closes the field. */
  QUOTE_SEEN: 3,
  /** After the closing quote: only whitespace may follow before the delimiter. */
  AFTER_QUOTE: 4,
} as const;
type FieldState = (typeof FieldState)[keyof typeof FieldState];

/**
 * An incremental RFC 4180 CSV reader over decoded text. It never rescans text it has passed and never
 * holds more than the current chunk plus one bounded record, so a file far larger than memory streams
 * through it.
 *
 * Dialect (deterministic, independent of how the text is split into chunks):
 * - Records end at LF or CRLF; a CR directly before the LF (or at the end of input) is dropped. A lone
 *   CR elsewhere is data.
 * - A field is quoted only when its FIRST character is `"` (RFC 4180 section 2.5). Inside it, `""` is a
 *   literal quote and commas, CR and LF are data. A `"` inside an unquoted field is literal (`5" disk`).
 * - After a closing quote only spaces, tabs and CR may precede the delimiter; other text makes the
 *   record unusable (`unexpected text after the closing quote of field 2`), like Python's csv strict mode.
 * - A quoted field still open at end of input makes the record unusable (`unterminated quoted field at
 *   end of input`).
 * - Blank records (a single unquoted field of only whitespace, e.g. an empty line) are skipped.
 * - A record longer than `maxRecordBytes` UTF-8 bytes is returned with no fields and the problem
 *   `record exceeds 1 MiB`; its text is dropped as soon as the limit is passed, while quote tracking
 *   continues so reading resumes exactly at the next record.
 * - A UTF-8 BOM is NOT handled here: strip it before the first `push` (normalizeRecords does).
 * - A chunk may end between the halves of a surrogate pair: the high half waits for the next chunk, so
 *   byte counts (and so the size limit) never depend on where the text was cut.
 *
 * Usage: `push` a chunk, drain `nextRecord()` until it returns undefined, push the next chunk; after the
 * last chunk call `end()` and drain once more.
 *
 * @example
 * const reader = new CsvRecordReader();
 * reader.push('id,name\n1,"Smith, J"\n');
 * reader.end();
 * reader.nextRecord()?.fields; // ['id', 'name']
 * reader.nextRecord()?.fields; // ['1', 'Smith, J']
 * reader.nextRecord();         // undefined
 */
export class CsvRecordReader {
  private readonly limits: RecordLimits;
  private readonly oversize: string;

  private readonly heldHighSurrogate = new SurrogateCarry();
  private text = '';
  private pos = 0;
  private ended = false;
  /** Physical line number of the character at `pos`. */
  private line = 1;
  /** Cached index of the next `\n` / `,` / `"` at or after `pos` (text.length when none; stale when < pos). */
  private nextLf = -1;
  private nextComma = -1;
  private nextQuote = -1;

  // The record in progress.
  private inRecord = false;
  private recordLine = 1;
  /** Index in `text` where the part of the record held in this chunk starts. */
  private recordStart = 0;
  private fields: string[] = [];
  private state: FieldState = FieldState.START;
  /** Start in `text` of the field content not yet copied into `fieldPrefix`. */
  private segmentStart = 0;
  /** Field content gathered from earlier chunks (and, for quoted fields, earlier segments). */
  private fieldPrefix = '';
  private sawQuote = false;
  private problem: string | undefined;
  /** Set once the record is known to be oversized: its content is no longer kept. */
  private discarding = false;
  /** Size of the record's text in earlier chunks, and the first characters of it (for `raw`). */
  private carriedChars = 0;
  private carriedBytes = 0;
  private carriedRaw = '';
  private carriedEndsWithCr = false;

  constructor(limits: Partial<RecordLimits> = {}) {
    this.limits = resolveRecordLimits(limits);
    this.oversize = oversizeReason(this.limits.maxRecordBytes);
  }

  /** Hands the reader the next piece of text. Call it only once `nextRecord()` has returned undefined. */
  push(text: string): void {
    if (this.ended) throw new Error('CsvRecordReader.push called after end()');
    if (this.pos < this.text.length)
      throw new Error('CsvRecordReader.push called before the previous text was drained');
    this.load(this.heldHighSurrogate.take(text));
  }

  /** Marks the end of input; the next `nextRecord()` calls return the final record, if any. */
  end(): void {
    this.ended = true;
  }

  private load(text: string): void {
    this.text = text;
    this.pos = 0;
    this.recordStart = 0;
    this.segmentStart = 0;
    this.nextLf = -1;
    this.nextComma = -1;
    this.nextQuote = -1;
  }

  /** Returns the next complete, non-blank record, or undefined when more text (or `end()`) is needed. */
  nextRecord(): CsvRecord | undefined {
    const record = this.scan();
    if (record !== undefined || !this.ended) return record;
    // The text is drained: a high surrogate held back from the last chunk is the input's final character.
    const held = this.heldHighSurrogate.flush();
    if (held !== '') {
      this.load(held);
      const last = this.scan();
      if (last !== undefined) return last;
    }
    return this.finishAtEnd();
  }

  /** Advances through the current text: returns the next non-blank record, or undefined once the text is exhausted. */
  private scan(): CsvRecord | undefined {
    const text = this.text;
    const len = text.length;
    for (;;) {
      if (!this.inRecord) {
        if (this.pos >= len) return undefined;
        this.inRecord = true;
        this.recordStart = this.pos;
        this.recordLine = this.line;
        // Fast path: the whole record is a line of this chunk without any quote, so String#split does it.
        const lf = this.lfAt();
        if (lf < len && this.quoteAt() > lf) {
          const record = this.finishPlainLine(text, lf);
          if (record !== undefined) return record;
          continue; // blank line
        }
      }
      switch (this.state) {
        case FieldState.START: {
          if (this.pos >= len) return this.suspend();
          if (text.charCodeAt(this.pos) === QUOTE) {
            this.state = FieldState.QUOTED;
            this.sawQuote = true;
            this.pos += 1;
          } else {
            this.state = FieldState.UNQUOTED;
          }
          this.segmentStart = this.pos;
          break;
        }
        case FieldState.UNQUOTED: {
          const comma = this.commaAt();
          const lf = this.lfAt();
          const end = Math.min(comma, lf);
          if (end >= len) {
            this.appendSegment(text, this.segmentStart, len);
            this.pos = len;
            return this.suspend();
          }
          this.appendSegment(text, this.segmentStart, end);
          this.pos = end + 1;
          if (end === comma) {
            this.pushField(false);
            this.state = FieldState.START;
            break;
          }
          this.pushField(true);
          this.line += 1;
          const record = this.finish(text, end);
          if (record !== undefined) return record;
          break; // blank line
        }
        case FieldState.QUOTED: {
          const quote = this.quoteAt();
          // Count the physical lines the quoted data spans, so later line numbers stay right.
          for (let lf = this.lfAt(); lf < quote; lf = this.lfAt()) {
            this.line += 1;
            this.pos = lf + 1;
          }
          if (quote >= len) {
            this.appendSegment(text, this.segmentStart, len);
            this.pos = len;
            return this.suspend();
          }
          this.appendSegment(text, this.segmentStart, quote);
          this.pos = quote + 1;
          this.state = FieldState.QUOTE_SEEN;
          break;
        }
        case FieldState.QUOTE_SEEN: {
          if (this.pos >= len) return this.suspend();
          const c = text.charCodeAt(this.pos);
          if (c === QUOTE) {
            // RFC 4180 2.7: a doubled quote inside a quoted field is one literal quote.
            if (!this.discarding) this.fieldPrefix += '"';
            this.pos += 1;
            this.segmentStart = this.pos;
            this.state = FieldState.QUOTED;
          } else if (c === COMMA) {
            this.pushField(false);
            this.pos += 1;
            this.state = FieldState.START;
          } else if (c === LF) {
            this.pushField(false);
            this.pos += 1;
            this.line += 1;
            const record = this.finish(text, this.pos - 1);
            if (record !== undefined) return record;
          } else {
            this.segmentStart = this.pos;
            this.state = FieldState.AFTER_QUOTE;
          }
          break;
        }
        case FieldState.AFTER_QUOTE: {
          const comma = this.commaAt();
          const lf = this.lfAt();
          const end = Math.min(comma, lf);
          if (this.problem === undefined && !isSpaceRun(text, this.segmentStart, end)) {
            this.problem = `unexpected text after the closing quote of field ${this.fields.length + 1}`;
          }
          if (end >= len) {
            this.pos = len;
            return this.suspend();
          }
          this.pos = end + 1;
          this.pushField(false); // the quoted content; the whitespace after it is dropped
          if (end === comma) {
            this.state = FieldState.START;
            break;
          }
          this.line += 1;
          const record = this.finish(text, end);
          if (record !== undefined) return record;
          break;
        }
      }
    }
  }

  /** The common case: a quote-free line wholly inside the current chunk. */
  private finishPlainLine(text: string, lf: number): CsvRecord | undefined {
    const start = this.pos;
    const end = lf > start && text.charCodeAt(lf - 1) === CR ? lf - 1 : lf;
    this.pos = lf + 1;
    this.line += 1;
    const content = text.slice(start, end);
    this.inRecord = false;
    if (exceedsUtf8Bytes(text, start, lf, 0, this.limits.maxRecordBytes)) {
      const { raw, truncated } = excerpt(content, content.length, this.limits.maxRawChars);
      return {
        line: this.recordLine,
        fields: [],
        problem: this.oversize,
        raw,
        rawTruncated: truncated,
        escapeFree: false,
      };
    }
    const fields = content.split(',');
    if (fields.length === 1 && isBlank(content)) return undefined;
    // One scan of the line instead of one per field (the serializer's hot path).
    const escapeFree = !JSON_ESCAPED_CHARACTER.test(content);
    if (content.length <= this.limits.maxRawChars) {
      return { line: this.recordLine, fields, problem: undefined, raw: content, rawTruncated: false, escapeFree };
    }
    const { raw, truncated } = excerpt(content, content.length, this.limits.maxRawChars);
    return { line: this.recordLine, fields, problem: undefined, raw, rawTruncated: truncated, escapeFree };
  }

  /**
   * Completes the record in progress; `end` is the index of its terminating LF (or text.length at the end
   * of input). Returns undefined for a blank record, which is dropped.
   */
  private finish(text: string, end: number): CsvRecord | undefined {
    const inChunk = end - this.recordStart;
    const totalChars = this.carriedChars + inChunk;
    const oversized =
      this.discarding || exceedsUtf8Bytes(text, this.recordStart, end, this.carriedBytes, this.limits.maxRecordBytes);
    const endsWithCr = inChunk > 0 ? text.charCodeAt(end - 1) === CR : this.carriedEndsWithCr;
    const contentChars = endsWithCr ? totalChars - 1 : totalChars;
    const fields = this.fields;
    const problem = oversized ? this.oversize : this.problem;
    const blank = problem === undefined && fields.length === 1 && !this.sawQuote && isBlank(fields[0] ?? '');

    let record: CsvRecord | undefined;
    if (!blank) {
      const maxRaw = this.limits.maxRawChars;
      const headEnd = Math.min(end, this.recordStart + Math.max(0, maxRaw + 1 - this.carriedRaw.length));
      const head = this.carriedRaw + text.slice(this.recordStart, headEnd);
      const { raw, truncated } = excerpt(head, contentChars, maxRaw);
      const kept = oversized ? [] : fields;
      record = { line: this.recordLine, fields: kept, problem, raw, rawTruncated: truncated, escapeFree: false };
    }
    this.resetRecord();
    this.recordStart = this.pos;
    return record;
  }

  /** End of input with a record still open: close it the way its state implies. */
  private finishAtEnd(): CsvRecord | undefined {
    if (!this.inRecord) return undefined;
    switch (this.state) {
      case FieldState.START:
        this.pushField(false); // `a,b,` then EOF: the last field is empty
        break;
      case FieldState.UNQUOTED:
        this.pushField(true);
        break;
      case FieldState.QUOTED:
        this.problem = UNTERMINATED_QUOTE_REASON;
        this.pushField(false);
        break;
      default:
        this.pushField(false);
    }
    return this.finish(this.text, this.text.length);
  }

  /** The chunk is exhausted mid-record: move what the record needs out of the chunk's indices. */
  private suspend(): undefined {
    const text = this.text;
    const len = text.length;
    if (this.recordStart < len) {
      const piece = text.slice(this.recordStart, len);
      this.carriedChars += piece.length;
      this.carriedBytes += Buffer.byteLength(piece, 'utf8');
      const room = this.limits.maxRawChars + 1 - this.carriedRaw.length;
      if (room > 0) this.carriedRaw += piece.length <= room ? piece : piece.slice(0, room);
      this.carriedEndsWithCr = piece.charCodeAt(piece.length - 1) === CR;
      if (!this.discarding && this.carriedBytes > this.limits.maxRecordBytes) {
        // Bound memory: from here on only the quote state is tracked, to find where the record ends.
        this.discarding = true;
        this.fields = [];
        this.fieldPrefix = '';
      }
    }
    this.recordStart = len;
    this.segmentStart = len;
    return undefined;
  }

  private appendSegment(text: string, start: number, end: number): void {
    if (end > start && !this.discarding) this.fieldPrefix += text.slice(start, end);
  }

  /** Ends the current field; `recordEnd` drops the CR of a CRLF terminator from an unquoted last field. */
  private pushField(recordEnd: boolean): void {
    let value = this.fieldPrefix;
    this.fieldPrefix = '';
    if (this.discarding) return;
    if (recordEnd && value.charCodeAt(value.length - 1) === CR) value = value.slice(0, -1);
    this.fields.push(value);
  }

  private resetRecord(): void {
    this.inRecord = false;
    this.fields = [];
    this.state = FieldState.START;
    this.fieldPrefix = '';
    this.sawQuote = false;
    this.problem = undefined;
    this.discarding = false;
    this.carriedChars = 0;
    this.carriedBytes = 0;
    this.carriedRaw = '';
    this.carriedEndsWithCr = false;
  }

  private lfAt(): number {
    if (this.nextLf < this.pos) this.nextLf = indexOrLength(this.text, '\n', this.pos);
    return this.nextLf;
  }

  private commaAt(): number {
    if (this.nextComma < this.pos) this.nextComma = indexOrLength(this.text, ',', this.pos);
    return this.nextComma;
  }

  private quoteAt(): number {
    if (this.nextQuote < this.pos) this.nextQuote = indexOrLength(this.text, '"', this.pos);
    return this.nextQuote;
  }
}

function indexOrLength(text: string, needle: string, from: number): number {
  const i = text.indexOf(needle, from);
  return i === -1 ? text.length : i;
}

/** True when text[start, end) holds only spaces, tabs and CRs (the padding tolerated after a closing quote). */
function isSpaceRun(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== CR) return false;
  }
  return true;
}

/** A blank record: nothing but whitespace (String#trim's definition, the one values are trimmed with). */
function isBlank(value: string): boolean {
  return value.length === 0 || value.trim().length === 0;
}
