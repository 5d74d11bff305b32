import type { LineBytes } from './lineBytes.js';
import type { RecordLimits } from './recordLimits.js';

/**
 * Where a format reader sends each record it has decided on. normalizeRecords implements it: it counts
 * every record once (recordAccounting.ts) and writes to the sinks. A write returns a promise only when
 * the sink did; the reader awaits it before the next record (the backpressure contract of LineSink).
 */
export interface RecordEmitter {
  /** One normalized record: a complete NDJSON line without its `\n`. */
  output(json: string): Promise<void> | undefined;
  /** One rejected record: its 1-based physical line, the reason, and an excerpt of its text. */
  quarantine(line: number, reason: string, raw: string, truncated: boolean): Promise<void> | undefined;
  /**
   * Records that are neither output nor quarantined (a CSV header, blank lines), and records the reader
   * wrote to `lineBytes` itself (`output`).
   */
  count(disposition: 'header' | 'blank' | 'output', n?: number): void;
  /**
   * With byte strings, when the output sink is a {@link LineBytes}: a reader may write output lines'
   * bytes into it in place (the CSV reader's rows, csvRowBytes.ts), counting them with
   * `count('output', n)`, instead of handing each to `output`. Undefined otherwise.
   */
  readonly lineBytes?: LineBytes | undefined;
}

/** What a reader says at the end of a file, besides what it emitted. */
export interface FormatEnd {
  /** Set when a header made the whole file unusable (every data row was quarantined with this reason). */
  readonly unusableHeader?: string | undefined;
}

/** Reads one file of a format: text pushed in (already decoded), records emitted as they complete. */
export interface FormatReader {
  /** Takes the next piece of text and emits every record it completes (awaiting each write). */
  push(text: string): Promise<void>;
  /** The input ended: emits the last record, and says how the file ended. */
  end(): Promise<FormatEnd>;
  /**
   * Reading stops for good (not text, a corrupt gzip): the 1-based line where the unread rest starts,
   * and how the file ended so far.
   */
  abandon(): FormatEnd & { readonly line: number };
}

/**
 * One input format: its name, the file extensions that select it, and a reader per file. A new format
 * is one file that exports such a definition, and one registration (`defaultFormats` in
 * inputFormat.ts, or `registry.with(format)` for a registry of your own).
 *
 * @example
 * export const tsvFormat: InputFormatDefinition = {
 *   name: 'tsv',
 *   extensions: ['.tsv'],
 *   open: (limits, emit) => new TsvReader(limits, emit),
 * };
 */
export interface InputFormatDefinition {
  /** The format's name (`csv`, `ndjson`): the summary's `format`. */
  readonly name: string;
  /** Lower-case extensions with their dot; a `.gz` after one selects the same format. */
  readonly extensions: readonly string[];
  /** A reader for one file, emitting into `emit`, bounded by `limits`. */
  open(limits: RecordLimits, emit: RecordEmitter): FormatReader;
  /**
   * A reader of byte strings (src/normalize/byteStrings.ts): pushed the input's UTF-8 bytes one
   * character each, it emits lines and quarantine excerpts in the same form, the same records as
   * `open`'s reader emits for the decoded text. normalizeRecords' `byteStrings` option uses it.
   * @default none: the format is read as text only
   */
  openBytes?(limits: RecordLimits, emit: RecordEmitter): FormatReader;
}

/** The compression suffix accepted after a supported extension. */
export const GZIP_EXTENSION = '.gz';

/**
 * The input formats a normalizer knows, by name and by extension. Immutable: `with` returns a new
 * registry, so the default one cannot be changed behind a running worker's back.
 *
 * @example
 * const formats = defaultFormats.with(tsvFormat);
 * formats.formatOfKey('incoming/a.tsv.gz'); // 'tsv'
 */
export class FormatRegistry {
  private readonly byName = new Map<string, InputFormatDefinition>();
  private readonly byExtension = new Map<string, InputFormatDefinition>();

  constructor(formats: readonly InputFormatDefinition[]) {
    for (const format of formats) {
      if (this.byName.has(format.name)) throw new TypeError(`Input format "${format.name}" is registered twice`);
      this.byName.set(format.name, format);
      for (const extension of format.extensions) {
        const taken = this.byExtension.get(extension);
        if (taken) throw new TypeError(`Extension ${extension} is claimed by "${taken.name}" and "${format.name}"`);
        this.byExtension.set(extension, format);
      }
    }
  }

  /** A registry with `format` added. */
  with(format: InputFormatDefinition): FormatRegistry {
    return new FormatRegistry([...this.byName.values(), format]);
  }

  /** The format named `name`, or undefined. */
  get(name: string): InputFormatDefinition | undefined {
    return this.byName.get(name);
  }

  /** Every registered name, in registration order. */
  names(): string[] {
    return [...this.byName.keys()];
  }

  /** Every extension and the format name it selects. */
  extensions(): Record<string, string> {
    return Object.fromEntries([...this.byExtension].map(([extension, format]) => [extension, format.name]));
  }

  /**
   * The format of an object key, by its extension (case-insensitive), ignoring one trailing `.gz`;
   * undefined for anything else (a folder marker, a bare dotfile such as `.csv`, `.txt`). Pass the
   * DECODED key (S3 events URL-encode keys; docs/AWS-BEHAVIOUR.md, "Event keys and sequencers").
   */
  formatOfKey(key: string): string | undefined {
    let name = key.slice(key.lastIndexOf('/') + 1);
    if (name.toLowerCase().endsWith(GZIP_EXTENSION)) name = name.slice(0, -GZIP_EXTENSION.length);
    const dot = name.lastIndexOf('.');
    if (dot <= 0) return undefined; // no extension, or a bare dotfile such as `.csv`
    return this.byExtension.get(name.slice(dot).toLowerCase())?.name;
  }
}

/** The reason for a record whose parsing, validation or serialization threw: the class name only (stable across runtimes). */
export function failedRecordReason(error: unknown): string {
  const name = error instanceof Error ? error.name : typeof error;
  return `record could not be normalized (${name})`;
}
