import { type CsvHeader, compileCsvHeader } from './csvHeader.js';
import { type CsvRecord, CsvRecordReader } from './csvParser.js';
import { InputFormat } from './inputFormat.js';
import { LineReader, type TextLine } from './lineReader.js';
import { formatQuarantineLine } from './quarantine.js';
import { excerpt, oversizeReason, type RecordLimits, resolveRecordLimits } from './recordLimits.js';

export { normalizeHeaderName } from './csvHeader.js';
export { formatOfKey, InputFormat, SupportedExtensions } from './inputFormat.js';
export type { QuarantineEntry } from './quarantine.js';
export { DEFAULT_MAX_RAW_CHARS, DEFAULT_MAX_RECORD_BYTES } from './recordLimits.js';

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

/** What one normalizeRecords run produced. */
export interface NormalizeResult {
  /** Lines written to the output sink. */
  records: number;
  /** Lines written to the quarantine sink. */
  quarantined: number;
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
}

/**
 * Normalizes a CSV or NDJSON stream into NDJSON records, streaming: memory stays bounded by one input
 * chunk plus one record, whatever the file size, and every sink write is awaited before the next.
 * Pure: no AWS SDK, no clock, no randomness. The same input bytes give the same output and quarantine
 * bytes, however the input is split into chunks.
 *
 * Decoding: bytes are decoded as UTF-8 by a streaming `TextDecoder` with `fatal: false`, so invalid
 * sequences become U+FFFD instead of failing the file (a sequence split across chunks is decoded
 * whole). A leading UTF-8 BOM is removed. String chunks are used as they are.
 *
 * CSV (RFC 4180; dialect details on {@link CsvRecordReader}): quoted fields may hold commas, `""` and
 * newlines; LF or CRLF; blank lines are ignored. The first non-blank record is the header, normalized
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
 * Empty input yields `{ records: 0, quarantined: 0 }` and no writes.
 *
 * @example
 * const output: string[] = [];
 * const quarantine: string[] = [];
 * const result = await normalizeRecords(['id,name\n1, Ada \n2\n'], InputFormat.CSV, {
 *   output: { write: (line) => void output.push(line) },
 *   quarantine: { write: (line) => void quarantine.push(line) },
 * });
 * // result: { records: 1, quarantined: 1 }
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

  // ignoreBOM keeps the decoder from eating the BOM so that byte and string chunks share one rule below.
  const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
  let atStart = true;
  let decoderHasState = false;
  for await (const chunk of input) {
    let text: string;
    if (typeof chunk === 'string') {
      text = decoderHasState ? decoder.decode() + chunk : chunk; // flush a dangling partial sequence first
      decoderHasState = false;
    } else {
      text = decoder.decode(chunk, { stream: true });
      decoderHasState = true;
    }
    if (atStart) {
      if (text === '') continue; // the BOM's 3 bytes may arrive in pieces
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      atStart = false;
    }
    if (text !== '') await normalizer.push(text);
  }
  if (decoderHasState) {
    let tail = decoder.decode(); // an incomplete sequence at EOF becomes U+FFFD
    if (atStart && tail.charCodeAt(0) === 0xfeff) tail = tail.slice(1);
    if (tail !== '') await normalizer.push(tail);
  }
  return normalizer.end();
}

interface Normalizer {
  push(text: string): Promise<void>;
  end(): Promise<NormalizeResult>;
}

/** Counts and writes lines; awaits a sink only when it returned a promise (a sync sink costs no tick). */
abstract class Emitter {
  protected records = 0;
  protected quarantined = 0;

  constructor(
    protected readonly limits: RecordLimits,
    private readonly sinks: { output: LineSink; quarantine: LineSink },
  ) {}

  protected output(line: string): Promise<void> | undefined {
    this.records += 1;
    return this.sinks.output.write(line) ?? undefined;
  }

  protected quarantine(line: number, reason: string, raw: string, truncated: boolean): Promise<void> | undefined {
    this.quarantined += 1;
    return this.sinks.quarantine.write(formatQuarantineLine({ line, reason, raw, truncated })) ?? undefined;
  }
}

class CsvNormalizer extends Emitter implements Normalizer {
  private readonly reader: CsvRecordReader;
  private header: CsvHeader | undefined;
  private unusableHeader: string | undefined;

  constructor(limits: RecordLimits, sinks: { output: LineSink; quarantine: LineSink }) {
    super(limits, sinks);
    this.reader = new CsvRecordReader(limits);
  }

  async push(text: string): Promise<void> {
    this.reader.push(text);
    await this.drain();
  }

  async end(): Promise<NormalizeResult> {
    this.reader.end();
    await this.drain();
    const result: NormalizeResult = { records: this.records, quarantined: this.quarantined };
    if (this.unusableHeader !== undefined) result.unusableHeader = this.unusableHeader;
    return result;
  }

  private async drain(): Promise<void> {
    for (let record = this.reader.nextRecord(); record !== undefined; record = this.reader.nextRecord()) {
      const pending = this.handle(record);
      if (pending !== undefined) await pending;
    }
  }

  private handle(record: CsvRecord): Promise<void> | undefined {
    const header = this.header;
    if (header !== undefined) {
      if (record.problem !== undefined) return this.reject(record, record.problem);
      if (record.fields.length !== header.keys.length) {
        return this.reject(record, `expected ${header.keys.length} fields, got ${record.fields.length}`);
      }
      return this.output(header.toJson(record.fields, record.escapeFree));
    }
    if (this.unusableHeader !== undefined) return this.reject(record, this.unusableHeader);
    // First non-blank record: the header.
    if (record.problem !== undefined) {
      this.unusableHeader = `unusable header: ${record.problem}`;
      return this.reject(record, this.unusableHeader);
    }
    const compiled = compileCsvHeader(record.fields);
    if (compiled.ok) this.header = compiled;
    else this.unusableHeader = `unusable header: ${compiled.reason}`;
    return undefined;
  }

  private reject(record: CsvRecord, reason: string): Promise<void> | undefined {
    return this.quarantine(record.line, reason, record.raw, record.rawTruncated);
  }
}

class NdjsonNormalizer extends Emitter implements Normalizer {
  private readonly reader: LineReader;
  private readonly oversize: string;

  constructor(limits: RecordLimits, sinks: { output: LineSink; quarantine: LineSink }) {
    super(limits, sinks);
    this.reader = new LineReader(limits);
    this.oversize = oversizeReason(limits.maxRecordBytes);
  }

  async push(text: string): Promise<void> {
    this.reader.push(text);
    await this.drain();
  }

  async end(): Promise<NormalizeResult> {
    this.reader.end();
    await this.drain();
    return { records: this.records, quarantined: this.quarantined };
  }

  private async drain(): Promise<void> {
    for (let line = this.reader.nextLine(); line !== undefined; line = this.reader.nextLine()) {
      const pending = this.handle(line);
      if (pending !== undefined) await pending;
    }
  }

  private handle(line: TextLine): Promise<void> | undefined {
    if (line.oversized) return this.reject(line, this.oversize);
    const text = line.text;
    // Cheap pre-check: almost every line starts with `{`; only others may be blank.
    if (text.charCodeAt(0) !== 0x7b && text.trim() === '') return undefined;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return this.reject(line, 'invalid JSON');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return this.reject(line, `expected a JSON object, got ${kindOf(value)}`);
    }
    return this.output(JSON.stringify(value));
  }

  private reject(line: TextLine, reason: string): Promise<void> | undefined {
    const { raw, truncated } = excerpt(line.text, line.chars, this.limits.maxRawChars);
    return this.quarantine(line.line, reason, raw, truncated);
  }
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
