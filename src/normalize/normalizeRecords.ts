import { WorkerConfigurationError } from '../errors.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';
import { toByteString } from './byteStrings.js';
import { type DecodeLimits, type DecodeReport, decodeInput } from './decodeInput.js';
import type { FormatRegistry, RecordEmitter } from './formatRegistry.js';
import { defaultFormats, type InputFormat } from './inputFormat.js';
import { LineBytes } from './lineBytes.js';
import { formatQuarantineLine } from './quarantine.js';
import { RecordAccounting, type RecordCounts, RecordDisposition } from './recordAccounting.js';
import { resolveRecordLimits } from './recordLimits.js';

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
  /**
   * The formats `format` is looked up in (src/normalize/formatRegistry.ts).
   * @default defaultFormats (CSV and NDJSON)
   */
  formats?: FormatRegistry;
  /**
   * Hand the sinks byte strings: each line's UTF-8 bytes, one character each, so that
   * `Buffer.from(line, 'latin1')` is the line's bytes (`Buffer#write(line, 'latin1')` copies them
   * into a buffer, where UTF-8 would encode them). The input is read the same way, never decoded:
   * the records and the bytes they make are the same as without it, but for string input with a
   * lone surrogate, which becomes U+FFFD. Only for a format whose definition has `openBytes` (CSV);
   * another throws. With an output sink that is a {@link LineBytes}, the CSV reader writes most data
   * rows' bytes into it directly (csvRowBytes.ts), with no string per line: the same bytes, faster.
   * @default false
   */
  byteStrings?: boolean;
}

/** The names of {@link NormalizeOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const NORMALIZE_OPTION_NAMES = {
  byteStrings: true,
  decode: true,
  formats: true,
  maxNestingDepth: true,
  maxRawChars: true,
  maxRecordBytes: true,
} as const satisfies OptionNames<NormalizeOptions>;

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
  format: InputFormat | (string & {}),
  sinks: { output: LineSink; quarantine: LineSink },
  options: NormalizeOptions = {},
): Promise<NormalizeResult> {
  checkOptions('normalizeRecords', options, NORMALIZE_OPTION_NAMES, (m) => new WorkerConfigurationError(m));
  const formats = options.formats ?? defaultFormats;
  const definition = formats.get(format);
  if (!definition) {
    throw new TypeError(
      `Unknown input format ${JSON.stringify(format)}: expected one of ${formats.names().join(', ')}`,
    );
  }
  const byteStrings = options.byteStrings ?? false;
  if (byteStrings && !definition.openBytes) {
    throw new WorkerConfigurationError(
      `normalizeRecords: format ${definition.name} cannot read byte strings (byteStrings)`,
    );
  }
  const emitter = new SinkEmitter(sinks, byteStrings);
  const limits = resolveRecordLimits(options);
  const reader =
    byteStrings && definition.openBytes ? definition.openBytes(limits, emitter) : definition.open(limits, emitter);

  const report: DecodeReport = { encoding: '' };
  for await (const text of decodeInput(input, report, options.decode, byteStrings)) await reader.push(text);
  let ending: { unusableHeader?: string | undefined };
  let rejected: string | undefined;
  if (report.rejected !== undefined) {
    // The rest of the file, from the line where the reader stopped, as one quarantine entry.
    const { line, ...rest } = reader.abandon();
    rejected = report.rejected;
    await emitter.quarantine(line, rejected, '', false);
    ending = rest;
  } else {
    ending = await reader.end();
  }
  return {
    ...emitter.accounting.counts,
    ...(rejected !== undefined ? { rejected } : {}),
    ...(ending.unusableHeader !== undefined ? { unusableHeader: ending.unusableHeader } : {}),
    encoding: report.encoding,
  };
}

/**
 * Counts and writes the records a format reader emits; awaits a sink only when it returned a promise
 * (a sync sink costs no tick).
 */
class SinkEmitter implements RecordEmitter {
  readonly accounting = new RecordAccounting();
  readonly lineBytes: LineBytes | undefined;

  /** `byteStrings`: the reader's lines and excerpts are byte strings, and the reasons, text, become ones. */
  constructor(
    private readonly sinks: { output: LineSink; quarantine: LineSink },
    private readonly byteStrings: boolean,
  ) {
    this.lineBytes = byteStrings && sinks.output instanceof LineBytes ? sinks.output : undefined;
  }

  output(line: string): Promise<void> | undefined {
    this.accounting.count(RecordDisposition.OUTPUT);
    return this.sinks.output.write(line) ?? undefined;
  }

  quarantine(line: number, reason: string, raw: string, truncated: boolean): Promise<void> | undefined {
    this.accounting.count(RecordDisposition.QUARANTINED);
    const entry = { line, reason: this.byteStrings ? toByteString(reason) : reason, raw, truncated };
    return this.sinks.quarantine.write(formatQuarantineLine(entry)) ?? undefined;
  }

  count(disposition: 'header' | 'blank' | 'output', n = 1): void {
    this.accounting.count(COUNTED_AS[disposition], n);
  }
}

const COUNTED_AS = {
  header: RecordDisposition.HEADER,
  blank: RecordDisposition.BLANK,
  output: RecordDisposition.OUTPUT,
} as const;
