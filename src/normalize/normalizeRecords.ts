import { type CsvHeader, compileCsvHeader } from './csvHeader.js';
import { type CsvRecord, CsvRecordReader } from './csvParser.js';
import { type DecodeLimits, type DecodeReport, decodeInput } from './decodeInput.js';
import { InputFormat } from './inputFormat.js';
import { classifyJsonLine, JsonLineForm } from './jsonLineForm.js';
import { LineReader, type TextLine } from './lineReader.js';
import { formatQuarantineLine } from './quarantine.js';
import { RecordAccounting, type RecordCounts, RecordDisposition } from './recordAccounting.js';
import {
  exceedsNestingDepth,
  excerpt,
  oversizeReason,
  type RecordLimits,
  resolveRecordLimits,
} from './recordLimits.js';

export { normalizeHeaderName } from './csvHeader.js';
export { formatOfKey, InputFormat, SupportedExtensions } from './inputFormat.js';
export type { QuarantineEntry } from './quarantine.js';
export type { RecordCounts } from './recordAccounting.js';
export { DEFAULT_MAX_NESTING_DEPTH, DEFAULT_MAX_RAW_CHARS, DEFAULT_MAX_RECORD_BYTES } from './recordLimits.js';

/**
 * Receives output lines one at a time. Each `line` is one complete NDJSON line WITHOUT its trailing
 * `"\n"`: the sink adds the terminator (write `line + '\n'`), so an output file is every line followed
 * by `\n`. When `write` returns a promise, normalizeRecords awaits it before producing the next line:
 * that is the backpressure contract (at most one write is ever pending).
 *
 * @example
 * const lines: string[] = [];
 * const sink: LineSink = { write: (line) => { lines.push(line); } };
 */
export interface LineSink {
  write(line: string): Promise<void> | void;
}

/**
 * What one normalizeRecords run produced. Every physical record of the input is counted in exactly
 * one of `records`, `quarantined`, `header` and `blank` (recordAccounting.ts).
 */
export interface NormalizeResult extends RecordCounts {
  /** Lines written to the output sink. */
  records: number;
  /** Lines written to the quarantine sink (a rejected rest of the file is one of them). */
  quarantined: number;
  /** The CSV header record (0 or 1; always 0 for NDJSON). */
  header: number;
  /** Records of nothing but whitespace. */
  blank: number;
  /** How the bytes were decoded: `utf-8`, `utf-16le`, `utf-16be`, `gzip+utf-8`..., `binary`, or `text` for string input. */
  encoding: string;
  /**
   * Set when reading stopped for good before the end of the input (not text, a corrupt, truncated or
   * oversized gzip stream): the rest of the file is one quarantine line with this reason, at the line
   * where the unfinished record starts. Records before it stand.
   */
  rejected?: string;
  /**
   * Set when a CSV header made the whole file unusable (an empty or duplicate column name, or a header
   * record that could not be parsed); every data row was then quarantined with this reason. Lets the
   * caller tell "the file is broken" from "some rows are bad", even for a header-only file.
   */
  unusableHeader?: string;
}

/** Options of {@link normalizeRecords}. */
export interface NormalizeOptions {
  /**
   * Largest record, in UTF-8 bytes of its decoded text without the line terminator. A longer record is
   * quarantined with `record exceeds 1 MiB` and is never buffered beyond the limit.
   * @default 1048576 (1 MiB)
   */
  maxRecordBytes?: number;
  /**
   * Longest `raw` excerpt in a quarantine line, in characters (UTF-16 code units, never splitting a
   * surrogate pair); longer records are cut and flagged `truncated: true`.
   * @default 1024
   */
  maxRawChars?: number;
  /**
   * Deepest nesting of arrays and objects in an NDJSON record; deeper records are quarantined.
   * @default 1000
   */
  maxNestingDepth?: number;
  /** Bounds of gzip decompression (the gzip bomb guard); pass `storedBytes` for the ratio bound. */
  decode?: DecodeLimits;
}

/**
 * Normalizes a CSV or NDJSON stream into NDJSON records, streaming: memory stays bounded by one input
 * chunk plus one record, whatever the file size, and every sink write is awaited before the next.
 * Pure: no AWS SDK, no clock, no randomness. The same input bytes give the same output and quarantine
 * bytes, however the input is split into chunks.
 *
 * Decoding (decodeInput.ts): the first bytes decide, not the key. gzip (`1f 8b`) is decompressed
 * while streaming, within the bomb guard's bound; UTF-16 LE/BE with a BOM is decoded; UTF-8 otherwise,
 * invalid sequences becoming U+FFFD (visible, never a crash; a sequence split across chunks is
 * decoded whole); a leading BOM is removed. Binary content (zip, Parquet, OLE2, other compressors,
 * images, a NUL byte in the first 8 KiB), a corrupt or truncated gzip stream and a gzip bomb end the
 * reading: the records before stand, the rest of the file is one quarantine line with the named
 * reason, and `rejected` says so. String chunks are used as they are.
 *
 * Accounting (recordAccounting.ts): every physical record is counted once, in `records`,
 * `quarantined`, `header` or `blank`. Line terminators are LF, CRLF and a lone CR, in any mixture.
 *
 * Per record: an error that parsing, validating or serializing one record throws quarantines that
 * record (`record could not be normalized (RangeError)`), and NDJSON records nested deeper than
 * `maxNestingDepth` are quarantined before they could overflow the stack. Errors of the sinks are
 * the file's, and propagate.
 *
 * CSV (RFC 4180; dialect details on {@link CsvRecordReader}): quoted fields may hold commas, `""` and
 * newlines; blank lines are counted, not output. The first non-blank record is the header, normalized
 * by {@link normalizeHeaderName}. Each data record becomes one JSON object with keys in header order,
 * values trimmed and empty values `null`. Quarantined instead: a record whose field count differs from
 * the header's (`expected 3 fields, got 2`), an unterminated quoted field at end of input, text after
 * a closing quote, an oversized record. An empty, letterless or duplicate header name makes the file
 * unusable: the run does NOT throw; every data row is quarantined with `unusable header: <why>` and the
 * result's `unusableHeader` says why (a header record that itself fails to parse is quarantined too).
 *
 * NDJSON (`.ndjson`, `.jsonl`): each non-blank line must be a JSON object; it is re-serialized with
 * `JSON.stringify`. Invalid JSON is quarantined as `invalid JSON` (the engine's parser message is left
 * out on purpose: it changes between Node versions, which would make a rerun on a newer Lambda runtime
 * produce different bytes); a non-object as `expected a JSON object, got array` (number, string...).
 * JavaScript semantics apply: keys keep their order except integer-like keys (`"1"`), which come first;
 * a duplicate key keeps its last value; numbers beyond double precision are rounded (`1e400` -> `null`).
 *
 * Quarantine lines are {@link QuarantineEntry} JSON: `{"line":<1-based physical line where the record
 * starts>,"reason":...,"raw":<original text, at most maxRawChars>,"truncated":<bool>}`.
 *
 * Empty input yields `{ records: 0, quarantined: 0, header: 0, blank: 0, encoding: 'utf-8' }` and no writes.
 *
 * @example
 * const output: string[] = [];
 * const quarantine: string[] = [];
 * const result = await normalizeRecords(['id,name\n1, Ada \n2\n'], InputFormat.CSV, {
 *   output: { write: (line) => void output.push(line) },
 *   quarantine: { write: (line) => void quarantine.push(line) },
 * });
 * // result: { records: 1, quarantined: 1, header: 1, blank: 0, encoding: 'text' }
 * // output: ['{"id":"1","name":"Ada"}']
 * // quarantine: ['{"line":3,"reason":"expected 2 fields, got 1","raw":"2","truncated":false}']
 */
export async function normalizeRecords(
  input: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>,
  format: InputFormat,
  sinks: { output: LineSink; quarantine: LineSink },
  options: NormalizeOptions = {},
): Promise<NormalizeResult> {
  const limits = resolveRecordLimits(options);
  let normalizer: Normalizer;
  if (format === InputFormat.CSV) normalizer = new CsvNormalizer(limits, sinks);
  else if (format === InputFormat.NDJSON) normalizer = new NdjsonNormalizer(limits, sinks);
  else throw new TypeError(`Unknown input format ${JSON.stringify(format)}: expected 'csv' or 'ndjson'`);

  const report: DecodeReport = { encoding: '' };
  for await (const text of decodeInput(input, report, options.decode)) await normalizer.push(text);
  const result = report.rejected !== undefined ? await normalizer.reject(report.rejected) : await normalizer.end();
  return { ...result, encoding: report.encoding };
}

type FormatResult = Omit<NormalizeResult, 'encoding'>;

interface Normalizer {
  push(text: string): Promise<void>;
  end(): Promise<FormatResult>;
  /** The rest of the input cannot be read: quarantine it as one entry with `reason`. */
  reject(reason: string): Promise<FormatResult>;
}

/**
 * The reason for a record whose parsing, validation or serialization threw: the error's class name
 * only, which is stable across runtimes (messages are not), so reruns write the same bytes.
 */
function failedRecordReason(error: unknown): string {
  const name = error instanceof Error ? error.name : typeof error;
  return `record could not be normalized (${name})`;
}

/** What both formats read with: text pushed in, records drained out, abandoned on a rejected input. */
interface RecordSource {
  push(text: string): void;
  end(): void;
  /** Stops reading; returns the line the unread rest starts on. */
  abandon(): number;
}

/**
 * Counts and writes lines; awaits a sink only when it returned a promise (a sync sink costs no tick).
 * Pushes text into the format's reader and drains its records after each push and at the end.
 */
abstract class Emitter implements Normalizer {
  protected abstract readonly reader: RecordSource;
  protected readonly accounting = new RecordAccounting();
  private rejected: string | undefined;

  constructor(
    protected readonly limits: RecordLimits,
    private readonly sinks: { output: LineSink; quarantine: LineSink },
  ) {}

  protected output(line: string): Promise<void> | undefined {
    this.accounting.count(RecordDisposition.OUTPUT);
    return this.sinks.output.write(line) ?? undefined;
  }

  protected quarantine(line: number, reason: string, raw: string, truncated: boolean): Promise<void> | undefined {
    this.accounting.count(RecordDisposition.QUARANTINED);
    return this.sinks.quarantine.write(formatQuarantineLine({ line, reason, raw, truncated })) ?? undefined;
  }

  /** The rest of the file, from the line where the reader stopped, as one quarantine entry. */
  protected async quarantineRest(line: number, reason: string): Promise<void> {
    this.rejected = reason;
    await this.quarantine(line, reason, '', false);
  }

  async push(text: string): Promise<void> {
    this.reader.push(text);
    await this.drain();
  }

  async end(): Promise<FormatResult> {
    this.reader.end();
    await this.drain();
    return this.result();
  }

  async reject(reason: string): Promise<FormatResult> {
    await this.quarantineRest(this.reader.abandon(), reason);
    return this.result();
  }

  /** Handles every record the reader has ready. */
  protected abstract drain(): Promise<void>;

  protected result(): FormatResult {
    const result: FormatResult = this.accounting.counts;
    if (this.rejected !== undefined) result.rejected = this.rejected;
    return result;
  }
}

class CsvNormalizer extends Emitter {
  protected readonly reader: CsvRecordReader;
  private header: CsvHeader | undefined;
  private unusableHeader: string | undefined;

  constructor(limits: RecordLimits, sinks: { output: LineSink; quarantine: LineSink }) {
    super(limits, sinks);
    this.reader = new CsvRecordReader(limits);
  }

  protected override result(): FormatResult {
    this.accounting.count(RecordDisposition.BLANK, this.reader.blankRecords);
    const result = super.result();
    if (this.unusableHeader !== undefined) result.unusableHeader = this.unusableHeader;
    return result;
  }

  protected async drain(): Promise<void> {
    for (let record = this.reader.nextRecord(); record !== undefined; record = this.reader.nextRecord()) {
      const pending = this.handle(record);
      if (pending !== undefined) await pending;
    }
  }

  private handle(record: CsvRecord): Promise<void> | undefined {
    const header = this.header;
    if (header !== undefined) {
      if (record.problem !== undefined) return this.rejectRecord(record, record.problem);
      if (record.fields.length !== header.keys.length) {
        return this.rejectRecord(record, `expected ${header.keys.length} fields, got ${record.fields.length}`);
      }
      // One record's failure stays that record's: only the computation is guarded, never the sink's write
      // (an S3 error there is the file's, and worth a retry).
      let json: string;
      try {
        json = header.toJson(record.fields, record.escapeFree);
      } catch (error) {
        return this.rejectRecord(record, failedRecordReason(error));
      }
      return this.output(json);
    }
    if (this.unusableHeader !== undefined) return this.rejectRecord(record, this.unusableHeader);
    // First non-blank record: the header.
    if (record.problem !== undefined) {
      this.unusableHeader = `unusable header: ${record.problem}`;
      return this.rejectRecord(record, this.unusableHeader);
    }
    this.accounting.count(RecordDisposition.HEADER);
    const compiled = compileCsvHeader(record.fields);
    if (compiled.ok) this.header = compiled;
    else this.unusableHeader = `unusable header: ${compiled.reason}`;
    return undefined;
  }

  private rejectRecord(record: CsvRecord, reason: string): Promise<void> | undefined {
    return this.quarantine(record.line, reason, record.raw, record.rawTruncated);
  }
}

class NdjsonNormalizer extends Emitter {
  protected readonly reader: LineReader;
  private readonly oversize: string;

  constructor(limits: RecordLimits, sinks: { output: LineSink; quarantine: LineSink }) {
    super(limits, sinks);
    this.reader = new LineReader(limits);
    this.oversize = oversizeReason(limits.maxRecordBytes);
  }

  protected async drain(): Promise<void> {
    for (let line = this.reader.nextLine(); line !== undefined; line = this.reader.nextLine()) {
      const pending = this.handle(line);
      if (pending !== undefined) await pending;
    }
  }

  private handle(line: TextLine): Promise<void> | undefined {
    if (line.oversized) return this.rejectLine(line, this.oversize);
    const text = line.text;
    // Cheap pre-check: almost every line starts with `{`; only others may be blank.
    if (text.charCodeAt(0) !== 0x7b && text.trim() === '') {
      this.accounting.count(RecordDisposition.BLANK);
      return undefined;
    }
    const maxDepth = this.limits.maxNestingDepth;
    // Most lines are already what parse-and-stringify would write: output them as they are. A line
    // cut short is invalid JSON whatever follows, and needs no exception to say so.
    const form = classifyJsonLine(text, maxDepth);
    if (form === JsonLineForm.CANONICAL) return this.output(text);
    if (form === JsonLineForm.CUT_SHORT) return this.rejectLine(line, INVALID_JSON_REASON);
    if (exceedsNestingDepth(text, maxDepth)) return this.rejectLine(line, `nested deeper than ${maxDepth} levels`);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return this.rejectLine(line, INVALID_JSON_REASON);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return this.rejectLine(line, `expected a JSON object, got ${kindOf(value)}`);
    }
    // Guards the serialization only (see CsvNormalizer.handle): one record's failure stays that record's.
    let json: string;
    try {
      json = JSON.stringify(value);
    } catch (error) {
      return this.rejectLine(line, failedRecordReason(error));
    }
    return this.output(json);
  }

  private rejectLine(line: TextLine, reason: string): Promise<void> | undefined {
    const { raw, truncated } = excerpt(line.text, line.chars, this.limits.maxRawChars);
    return this.quarantine(line.line, reason, raw, truncated);
  }
}

/** Why a line that is not JSON is quarantined (the engine's message is left out: see normalizeRecords). */
const INVALID_JSON_REASON = 'invalid JSON';

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
