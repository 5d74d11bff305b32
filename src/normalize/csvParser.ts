import { WorkerConfigurationError } from '../errors.js';
import { checkOptions } from '../options/checkOptions.js';
import { fromByteString, toByteString, trimmedByteString } from './byteStrings.js';
import type { CsvRowBytes } from './csvRowBytes.js';
import {
  JSON_SAFE_RUN,
  JSON_SAFE_RUN_IN_QUOTED_RECORD,
  JSON_SAFE_RUN_QUOTES_ALLOWED,
  jsonSafeRunEnd,
} from './jsonEscapes.js';
import {
  exceedsUtf8Bytes,
  excerpt,
  oversizeReason,
  RECORD_LIMIT_NAMES,
  type RecordLimits,
  resolveRecordLimits,
} from './recordLimits.js';
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
 * - Records end at LF, CRLF or a lone CR (classic Mac OS line endings, which "CSV (Macintosh)" exports
 *   still write), in any mixture; each terminator counts one physical line, a CRLF split between two
 *   chunks included. Treating a lone CR as data instead would make a Mac file one huge header and lose
 *   every row.
 * - A field is quoted only when its FIRST character is `"` (RFC 4180 section 2.5). Inside it, `""` is a
 *   literal quote and commas, CR and LF are data (and still count physical lines). A `"` inside an
 *   unquoted field is literal (`5" disk`).
 * - After a closing quote only spaces and tabs may precede the delimiter; other text makes the
 *   record unusable (`unexpected text after the closing quote of field 2`), like Python's csv strict mode.
 * - A quoted field still open at end of input makes the record unusable (`unterminated quoted field at
 *   end of input`).
 * - Blank records (a single unquoted field of only whitespace, e.g. an empty line) are skipped, and
 *   counted in `blankRecords` so that every physical record is accounted for.
 * - A record longer than `maxRecordBytes` UTF-8 bytes is returned with no fields and the problem
 *   `record exceeds 1 MiB`; its text is dropped as soon as the limit is passed, while quote tracking
 *   continues so reading resumes exactly at the next record.
 * - A UTF-8 BOM is NOT handled here: strip it before the first `push` (normalizeRecords does).
 * - A chunk may end between the halves of a surrogate pair: the high half waits for the next chunk, so
 *   byte counts (and so the size limit) never depend on where the text was cut.
 * - With `{ byteStrings: true }` it reads byte strings (src/normalize/byteStrings.ts: the text's UTF-8
 *   bytes, one character each, as valid UTF-8) and returns fields and `raw` as byte strings; sizes,
 *   `raw`'s cut and blank records are judged on the text they encode, so the records are the same.
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
  /** Reading byte strings (see the class comment). */
  private readonly bytes: boolean;
  /**
   * How much of a record's start is kept for `raw`: maxRawChars + 1 characters of text, or of a byte
   * string enough bytes for them (at most 3 per UTF-16 unit) and for one character cut at the end.
   */
  private readonly rawKeep: number;

  private readonly heldHighSurrogate = new SurrogateCarry();
  private text = '';
  private pos = 0;
  private ended = false;
  /** Physical line number of the character at `pos`. */
  private line = 1;
  /** Cached index of the next `\n` / `\r` / `,` / `"` at or after `pos` (text.length when none; stale when < pos). */
  private nextLf = -1;
  private nextCr = -1;
  /**
   * Index at which an LF completes a CRLF whose CR was already consumed (a terminator or quoted data),
   * so that the LF neither ends a second record nor counts a second line; 0 in a new chunk when the
   * previous one ended with that CR. -1 when none.
   */
  private lfAfterCr = -1;
  /** Blank records skipped so far (see the class comment). */
  private blank = 0;
  /** Where data rows are written as bytes, once the header is known (see writeRowsAsBytes). */
  private rowBytes: CsvRowBytes | undefined;
  /** Rows written by `rowBytes`, which `nextRecord` never returned. */
  private rowsWritten = 0;
  /** The scan stopped at a row that waits for the send of the rows written as bytes (waitsForSend). */
  private waiting = false;
  private nextComma = -1;
  private nextQuote = -1;
  /** Cached index of the next character JSON must escape at or after a position (as nextQuote). */
  private nextEscape = -1;
  /** The same, quotes left out (see JSON_SAFE_RUN_QUOTES_ALLOWED). */
  private nextEscapeBesidesQuote = -1;

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
  /** A field of the record holds a literal `"` (a doubled quote, or a quote inside an unquoted field). */
  private literalQuote = false;
  private problem: string | undefined;
  /** Set once the record is known to be oversized: its content is no longer kept. */
  private discarding = false;
  /** Size of the record's text in earlier chunks, and the first characters of it (for `raw`). */
  private carriedChars = 0;
  private carriedBytes = 0;
  private carriedRaw = '';

  constructor(limits: Partial<RecordLimits> = {}, options: { readonly byteStrings?: boolean } = {}) {
    checkOptions('CsvRecordReader', limits, RECORD_LIMIT_NAMES, (m) => new WorkerConfigurationError(m));
    checkOptions('CsvRecordReader', options, { byteStrings: true }, (m) => new WorkerConfigurationError(m));
    this.limits = resolveRecordLimits(limits);
    this.oversize = oversizeReason(this.limits.maxRecordBytes);
    this.bytes = options.byteStrings ?? false;
    this.rawKeep = this.bytes ? 3 * (this.limits.maxRawChars + 1) + 3 : this.limits.maxRawChars + 1;
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

  /** Blank records skipped so far: they hold no data, but they are physical records of the file. */
  get blankRecords(): number {
    return this.blank;
  }

  /**
   * From the next record on, writes every data row it can as its JSON line's bytes (csvRowBytes.ts)
   * instead of returning it; the rows it declines are returned as records, in order. Only for byte
   * strings, and only once the header is read: `rows` holds its keys.
   */
  writeRowsAsBytes(rows: CsvRowBytes): void {
    if (!this.bytes) throw new Error('CsvRecordReader.writeRowsAsBytes needs byte strings');
    this.rowBytes = rows;
    rows.load(this.text);
  }

  /**
   * Whether the last `nextRecord()` returned undefined because the rows written as bytes filled their
   * batch, not because the text is drained: send the batch (LineBytes.flush), then call it again.
   * Taking that row the record path's way instead cost a scan of the chunk's rest for characters
   * JSON escapes, once a batch: 4 % of the worker's CPU profile over the bench's CSV.
   */
  get waitsForSend(): boolean {
    return this.waiting;
  }

  /** Data rows written as bytes so far (writeRowsAsBytes): records of the file nextRecord did not return. */
  get rowsWrittenAsBytes(): number {
    return this.rowsWritten;
  }

  /**
   * The input stops here for good (the rest of it cannot be read, e.g. a truncated gzip stream): returns
   * the 1-based line on which the unfinished record starts (or the next line when none is open), and
   * forgets that record. It is then neither returned nor counted; the caller accounts for it.
   */
  abandon(): number {
    const line = this.inRecord ? this.recordLine : this.line;
    this.resetRecord();
    this.text = '';
    this.pos = 0;
    this.ended = true;
    this.heldHighSurrogate.flush();
    return line;
  }

  private load(text: string): void {
    // A CR consumed as the previous text's last character may be the first half of a CRLF.
    this.lfAfterCr = this.lfAfterCr !== -1 && this.lfAfterCr >= this.text.length ? 0 : -1;
    this.text = text;
    this.pos = 0;
    this.recordStart = 0;
    this.segmentStart = 0;
    this.nextLf = -1;
    this.nextCr = -1;
    this.nextComma = -1;
    this.nextQuote = -1;
    this.nextEscape = -1;
    this.nextEscapeBesidesQuote = -1;
    this.rowBytes?.load(text);
  }

  /** Returns the next complete, non-blank record, or undefined when more text (or `end()`) is needed. */
  nextRecord(): CsvRecord | undefined {
    const record = this.scan();
    if (record !== undefined || !this.ended || this.waiting) return record;
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
    this.waiting = false;
    const text = this.text;
    const len = text.length;
    for (;;) {
      if (!this.inRecord) {
        // The LF of a CRLF whose CR ended the previous record: part of that terminator.
        if (this.pos === this.lfAfterCr && text.charCodeAt(this.pos) === LF) this.pos += 1;
        if (this.pos >= len) return undefined;
        this.inRecord = true;
        this.recordStart = this.pos;
        this.recordLine = this.line;
        const eol = this.eolAt();
        // Fastest path: a data row written as its JSON line's bytes (csvRowBytes.ts), counted here.
        const rows = this.rowBytes;
        if (rows !== undefined && eol < len && eol - this.pos <= this.limits.maxRecordBytes) {
          if (rows.write(this.pos, eol)) {
            this.endLine(text, eol);
            this.inRecord = false;
            this.rowsWritten += 1;
            continue;
          }
          // The batch is full: the row waits for its send (see waitsForSend), not the record path.
          if (rows.waitsForSend) {
            this.inRecord = false;
            this.waiting = true;
            return undefined;
          }
        }
        // Fast path: the whole record is a line of this chunk without any quote, so String#split does it.
        if (eol < len && this.quoteAt() > eol) {
          const record = this.finishPlainLine(text, eol);
          if (record !== undefined) return record;
          continue; // blank line
        }
        // Second fast path: a line of this chunk whose quotes only wrap whole fields, with none inside.
        if (eol < len) {
          const record = this.finishSimpleQuotedLine(text, eol);
          if (record !== undefined) return record;
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
          const end = Math.min(comma, this.eolAt());
          if (this.quoteAt() < end) this.literalQuote = true;
          if (end >= len) {
            this.appendSegment(text, this.segmentStart, len);
            this.pos = len;
            return this.suspend();
          }
          this.appendSegment(text, this.segmentStart, end);
          this.pushField();
          if (end === comma) {
            this.pos = end + 1;
            this.state = FieldState.START;
            break;
          }
          this.endLine(text, end);
          const record = this.finish(text, end);
          if (record !== undefined) return record;
          break; // blank line
        }
        case FieldState.QUOTED: {
          const quote = this.quoteAt();
          // Count the physical lines the quoted data spans, so later line numbers stay right.
          for (let eol = this.eolAt(); eol < quote; eol = this.eolAt()) {
            if (text.charCodeAt(eol) === CR) {
              this.line += 1;
              this.lfAfterCr = eol + 1;
            } else if (eol !== this.lfAfterCr) {
              this.line += 1;
            }
            this.pos = eol + 1;
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
            this.literalQuote = true;
            this.pos += 1;
            this.segmentStart = this.pos;
            this.state = FieldState.QUOTED;
          } else if (c === COMMA) {
            this.pushField();
            this.pos += 1;
            this.state = FieldState.START;
          } else if (c === LF || c === CR) {
            this.pushField();
            const end = this.pos;
            this.endLine(text, end);
            const record = this.finish(text, end);
            if (record !== undefined) return record;
          } else {
            this.segmentStart = this.pos;
            this.state = FieldState.AFTER_QUOTE;
          }
          break;
        }
        case FieldState.AFTER_QUOTE: {
          const comma = this.commaAt();
          const end = Math.min(comma, this.eolAt());
          if (this.problem === undefined && !isSpaceRun(text, this.segmentStart, end)) {
            this.problem = `unexpected text after the closing quote of field ${this.fields.length + 1}`;
          }
          if (end >= len) {
            this.pos = len;
            return this.suspend();
          }
          this.pushField(); // the quoted content; the whitespace after it is dropped
          if (end === comma) {
            this.pos = end + 1;
            this.state = FieldState.START;
            break;
          }
          this.endLine(text, end);
          const record = this.finish(text, end);
          if (record !== undefined) return record;
          break;
        }
      }
    }
  }

  /** Consumes the record terminator at `eol` (LF, CR or CRLF) and counts its physical line. */
  private endLine(text: string, eol: number): void {
    this.line += 1;
    if (text.charCodeAt(eol) === CR) {
      if (text.charCodeAt(eol + 1) === LF) {
        this.pos = eol + 2;
        return;
      }
      this.lfAfterCr = eol + 1; // the LF may start the next chunk
    }
    this.pos = eol + 1;
  }

  /** The common case: a quote-free line wholly inside the current chunk. */
  private finishPlainLine(text: string, eol: number): CsvRecord | undefined {
    const start = this.pos;
    const end = eol;
    this.endLine(text, eol);
    const content = text.slice(start, end);
    this.inRecord = false;
    if (this.exceeds(text, start, end, 0)) {
      const { raw, truncated } = this.excerpt(content.slice(0, this.rawKeep), content.length);
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
    if (fields.length === 1 && this.isBlank(content)) {
      this.blank += 1;
      return undefined;
    }
    // One scan of the chunk instead of one per field (the serializer's hot path) or per line (a
    // regex call per line was 16 % of the worker's CPU profile).
    return this.lineRecord(content, fields, this.escapeAt(start) >= end);
  }

  /**
   * A line wholly inside the current chunk whose quoted fields are simple: `"..."` with no quote or
   * line break inside, right between commas, and no quote in its unquoted fields. Returns its record,
   * or undefined (touching nothing) for any other line, which the state machine then reads. The mixed
   * rows of the bench (a quoted note in every row) spent a quarter of the worker's CPU in the state
   * machine's per-field steps.
   */
  private finishSimpleQuotedLine(text: string, eol: number): CsvRecord | undefined {
    const start = this.pos;
    if (this.exceeds(text, start, eol, 0)) return undefined;
    const fields: string[] = [];
    let quote = this.quoteAt(); // the next quote at or after `pos`, at most eol's line away
    let pos = start;
    for (;;) {
      if (pos === quote) {
        const close = text.indexOf('"', pos + 1);
        if (close === -1 || close > eol) return undefined; // a line break inside, or never closed
        const after = close + 1;
        if (after !== eol && text.charCodeAt(after) !== COMMA) return undefined; // `""`, or text after the quote
        fields.push(text.slice(pos + 1, close));
        quote = indexOrLength(text, '"', after);
        if (after === eol) break;
        pos = after + 1;
      } else {
        const comma = Math.min(indexOrLength(text, ',', pos), eol);
        if (quote < comma) return undefined; // a quote inside an unquoted field is a literal one
        fields.push(text.slice(pos, comma));
        if (comma === eol) break;
        pos = comma + 1;
      }
    }
    this.endLine(text, eol);
    this.inRecord = false;
    return this.lineRecord(text.slice(start, eol), fields, this.escapeBesidesQuoteAt(start) >= eol);
  }

  /** The record of a line a fast path read whole: its content is its `raw`, cut to maxRawChars. */
  private lineRecord(content: string, fields: string[], escapeFree: boolean): CsvRecord {
    if (content.length <= this.limits.maxRawChars) {
      return { line: this.recordLine, fields, problem: undefined, raw: content, rawTruncated: false, escapeFree };
    }
    const { raw, truncated } = this.excerpt(content.slice(0, this.rawKeep), content.length);
    return { line: this.recordLine, fields, problem: undefined, raw, rawTruncated: truncated, escapeFree };
  }

  /**
   * Completes the record in progress; `end` is the index of its terminator (or text.length at the end
   * of input), which the caller has consumed. Returns undefined for a blank record, which is counted.
   */
  private finish(text: string, end: number): CsvRecord | undefined {
    const inChunk = end - this.recordStart;
    const contentChars = this.carriedChars + inChunk;
    const oversized = this.discarding || this.exceeds(text, this.recordStart, end, this.carriedBytes);
    const fields = this.fields;
    const problem = oversized ? this.oversize : this.problem;
    const blank = problem === undefined && fields.length === 1 && !this.sawQuote && this.isBlank(fields[0] ?? '');

    let record: CsvRecord | undefined;
    if (blank) {
      this.blank += 1;
    } else {
      const headEnd = Math.min(end, this.recordStart + Math.max(0, this.rawKeep - this.carriedRaw.length));
      const head = this.carriedRaw + text.slice(this.recordStart, headEnd);
      const { raw, truncated } = this.excerpt(head, contentChars);
      const kept = oversized ? [] : fields;
      // One pass over the record instead of one per field in the serializer: only for a record wholly
      // in this text (none of it carried over) whose fields hold no literal quote.
      const escapeFree =
        problem === undefined &&
        this.carriedChars === 0 &&
        !this.literalQuote &&
        jsonSafeRunEnd(JSON_SAFE_RUN_IN_QUOTED_RECORD, text, this.recordStart) >= end;
      record = { line: this.recordLine, fields: kept, problem, raw, rawTruncated: truncated, escapeFree };
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
        this.pushField(); // `a,b,` then EOF: the last field is empty
        break;
      case FieldState.QUOTED:
        this.problem = UNTERMINATED_QUOTE_REASON;
        this.pushField();
        break;
      default:
        this.pushField();
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
      this.carriedBytes += this.bytes ? piece.length : Buffer.byteLength(piece, 'utf8');
      const room = this.rawKeep - this.carriedRaw.length;
      if (room > 0) this.carriedRaw += piece.length <= room ? piece : piece.slice(0, room);
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

  /** Whether text[start, end) and `carriedBytes` before it exceed maxRecordBytes (a byte string's length is its size). */
  private exceeds(text: string, start: number, end: number, carriedBytes: number): boolean {
    const max = this.limits.maxRecordBytes;
    return this.bytes ? carriedBytes + end - start > max : exceedsUtf8Bytes(text, start, end, carriedBytes, max);
  }

  /**
   * `raw` from the record's first characters (`head`, at least rawKeep of them or the whole record)
   * and its length `total`. A byte string is cut by the characters of its text, not by its bytes.
   */
  private excerpt(head: string, total: number): { raw: string; truncated: boolean } {
    const maxRaw = this.limits.maxRawChars;
    // A byte string of at most maxRaw bytes encodes at most maxRaw UTF-16 units: nothing to cut.
    if (!this.bytes || total <= maxRaw) return excerpt(head, total, maxRaw);
    const text = fromByteString(head);
    // A head shorter than the record may end in a cut character; the cut lies past maxRaw units.
    const { raw, truncated } = excerpt(text, head.length < total ? Number.POSITIVE_INFINITY : text.length, maxRaw);
    return { raw: toByteString(raw), truncated };
  }

  /** A blank record: nothing but whitespace (String#trim's definition, the one values are trimmed with). */
  private isBlank(value: string): boolean {
    return this.bytes ? trimmedByteString(value) === '' : isBlank(value);
  }

  private appendSegment(text: string, start: number, end: number): void {
    if (end > start && !this.discarding) this.fieldPrefix += text.slice(start, end);
  }

  /** Ends the current field (a terminator is never part of it: CR and LF both end an unquoted field). */
  private pushField(): void {
    const value = this.fieldPrefix;
    this.fieldPrefix = '';
    if (this.discarding) return;
    this.fields.push(value);
  }

  private resetRecord(): void {
    this.inRecord = false;
    this.fields = [];
    this.state = FieldState.START;
    this.fieldPrefix = '';
    this.sawQuote = false;
    this.literalQuote = false;
    this.problem = undefined;
    this.discarding = false;
    this.carriedChars = 0;
    this.carriedBytes = 0;
    this.carriedRaw = '';
  }

  /** The next record terminator (LF or CR) at or after `pos`. */
  private eolAt(): number {
    if (this.nextLf < this.pos) this.nextLf = indexOrLength(this.text, '\n', this.pos);
    if (this.nextCr < this.pos) this.nextCr = indexOrLength(this.text, '\r', this.pos);
    return Math.min(this.nextLf, this.nextCr);
  }

  private commaAt(): number {
    if (this.nextComma < this.pos) this.nextComma = indexOrLength(this.text, ',', this.pos);
    return this.nextComma;
  }

  /** The next character JSON must escape at or after `from` (text.length when none). */
  private escapeAt(from: number): number {
    if (this.nextEscape < from) this.nextEscape = jsonSafeRunEnd(JSON_SAFE_RUN, this.text, from);
    return this.nextEscape;
  }

  /** The same, quotes left out (see JSON_SAFE_RUN_QUOTES_ALLOWED). */
  private escapeBesidesQuoteAt(from: number): number {
    if (this.nextEscapeBesidesQuote < from) {
      this.nextEscapeBesidesQuote = jsonSafeRunEnd(JSON_SAFE_RUN_QUOTES_ALLOWED, this.text, from);
    }
    return this.nextEscapeBesidesQuote;
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

/** True when text[start, end) holds only spaces and tabs (the padding tolerated after a closing quote). */
function isSpaceRun(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09) return false;
  }
  return true;
}

/** A blank record: nothing but whitespace (String#trim's definition, the one values are trimmed with). */
function isBlank(value: string): boolean {
  return value.length === 0 || value.trim().length === 0;
}
