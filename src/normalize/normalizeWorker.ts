import { WorkerConfigurationError } from '../errors.js';
import { legacyHashedKey, uncheckedDeterministicKey } from '../keys/deterministicKey.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';
import { defineWorker, type OutputStream, type WorkerDefinition } from '../worker/defineWorker.js';
import type { FormatRegistry } from './formatRegistry.js';
import { defaultFormats } from './inputFormat.js';
import { joinLines, LineBytes } from './lineBytes.js';
import { type LineSink, normalizeRecords } from './normalizeRecords.js';

/**
 * Version of the normalizer's code and output format. Bump it when the output bytes would change:
 * every output written by another version is then rebuilt by the next run or backfill.
 */
export const NORMALIZE_CODE_VERSION = 'normalize@2';

/**
 * The summary stored with each normalized output (S3 metadata `rerun-x-*`) and printed in the
 * outcome line: where every physical record went (recordAccounting.ts), the format, how the bytes
 * were decoded, and, when reading stopped early, why.
 */
export type NormalizeSummary = {
  records: number;
  quarantined: number;
  header: number;
  blank: number;
  format: string;
  encoding: string;
  rejected?: string;
};

/** The prefixes the normalizer reads from and writes to. */
export interface NormalizePrefixes {
  readonly inputPrefix: string;
  readonly outputPrefix: string;
  readonly quarantinePrefix: string;
}

/** The reference application's prefixes, the normalizer's defaults. */
export const NORMALIZE_PREFIXES: NormalizePrefixes = {
  inputPrefix: 'incoming/',
  outputPrefix: 'normalized/',
  quarantinePrefix: 'quarantine/',
};

/** Options for {@link createNormalizeWorker}. */
export interface NormalizeWorkerOptions {
  readonly outputBucket: string;
  /**
   * Where inputs are read and outputs and quarantined rows written: inputs under `inputPrefix`,
   * outputs at `{outputPrefix}{bucket}/{path}.ndjson`, bad rows at `{quarantinePrefix}{bucket}/{path}.ndjson`.
   *
   * @default NORMALIZE_PREFIXES (`incoming/`, `normalized/`, `quarantine/`)
   */
  readonly prefixes?: NormalizePrefixes;
  /**
   * The buckets it reads (defineWorker's `inputBuckets`): an event or a Batch Operations task
   * naming another bucket, the output bucket included, is skipped with a reason naming it.
   * @default not declared: any bucket but its own outputs
   */
  readonly inputBuckets?: readonly string[];
  /** Multipart part size. @default 5 MiB (OutputWriter's DEFAULT_PART_BYTES) */
  readonly partBytes?: number;
  /**
   * The input formats it reads, by extension (src/normalize/formatRegistry.ts): e.g.
   * `defaultFormats.with(tsvFormat)`. Other files are skipped with a reason.
   * @default defaultFormats (CSV and NDJSON)
   */
  readonly formats?: FormatRegistry;
}

/** The names of {@link NormalizeWorkerOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const NORMALIZE_WORKER_OPTION_NAMES = {
  formats: true,
  inputBuckets: true,
  outputBucket: true,
  partBytes: true,
  prefixes: true,
} as const satisfies OptionNames<NormalizeWorkerOptions>;

/**
 * The reference worker: normalizes CSV and NDJSON uploads under `incoming/` into NDJSON at
 * `normalized/{bucket}/{path}.ndjson`, and quarantines bad rows, with line numbers and reasons, at
 * `quarantine/{bucket}/{path}.ndjson`. Other files are skipped with a reason.
 *
 * @example
 * const worker = createNormalizeWorker({ outputBucket: 'rerun-output' });
 */
export function createNormalizeWorker(options: NormalizeWorkerOptions): WorkerDefinition<NormalizeSummary> {
  checkOptions('createNormalizeWorker', options, NORMALIZE_WORKER_OPTION_NAMES, (m) => new WorkerConfigurationError(m));
  const formats = options.formats ?? defaultFormats;
  return defineWorker<NormalizeSummary>({
    name: 'normalize',
    codeVersion: NORMALIZE_CODE_VERSION,
    outputBucket: options.outputBucket,
    ...(options.inputBuckets ? { inputBuckets: options.inputBuckets } : {}),
    ...normalizeKeyRules(options.prefixes, formats),
    ...(options.partBytes ? { partBytes: options.partBytes } : {}),
    async transform({ source, body, contentLength, countDecoded }, { output, side }) {
      const format = formats.formatOfKey(source.key);
      if (!format) throw new Error(`unsupported file type: ${source.key}`); // skipReason filtered it already
      // A format that reads byte strings (CSV) makes lines that are their output's bytes already.
      const byteStrings = formats.get(format)?.openBytes !== undefined;
      const quarantineStream = { write: (chunk: string | Uint8Array) => side('quarantine').write(chunk) };
      const out = byteStrings ? new LineBytes(output) : new LineBatcher(output);
      const quarantine = byteStrings ? new LineBytes(quarantineStream) : new LineBatcher(quarantineStream);
      const result = await normalizeRecords(
        body,
        format,
        { output: out, quarantine },
        // Decompressed bytes are judged by the worker's limit too: a small .gz may hold far more.
        { decode: { storedBytes: contentLength, onInflated: countDecoded }, formats, byteStrings },
      );
      await out.flush();
      await quarantine.flush();
      const { records, quarantined, header, blank, encoding, rejected } = result;
      return { records, quarantined, header, blank, format, encoding, ...(rejected ? { rejected } : {}) };
    },
  });
}

/** Where the normalize worker writes and what it skips: the parts of its definition that name keys. */
export type NormalizeKeyRules = Pick<WorkerDefinition, 'outputKey' | 'sideOutputs' | 'legacyOutputKeys' | 'skipReason'>;

/**
 * The normalize worker's output and quarantine keys and its skip rule, without its transform: what
 * the summary stage and the CLI judge inputs by (app/partition/referenceInputRules.ts). Apart from
 * createNormalizeWorker, so that a bundle which only names keys leaves the worker out (its format
 * registry, which decides what is skipped, comes with the formats' readers: about 19 KB minified).
 *
 * @example
 * normalizeKeyRules().outputKey({ bucket: 'rerun-input', key: 'incoming/dt=2026-12-01/a.csv' });
 * // 'normalized/rerun-input/dt=2026-12-01/a.csv.ndjson'
 */
export function normalizeKeyRules(
  prefixes: NormalizePrefixes = NORMALIZE_PREFIXES,
  formats: FormatRegistry = defaultFormats,
): NormalizeKeyRules {
  const t = prefixes;
  const keyOptions = (prefix: string, source: { bucket: string; key: string }) => ({
    prefix,
    source,
    stripPrefix: t.inputPrefix,
    suffix: '.ndjson',
  });
  const keyIn = (prefix: string) => (source: { bucket: string; key: string }) =>
    uncheckedDeterministicKey(keyOptions(prefix, source));
  return {
    outputKey: keyIn(t.outputPrefix),
    sideOutputs: { quarantine: keyIn(t.quarantinePrefix) },
    // Overlong keys were hashed outside their day before partition-preserving keys: move them in.
    legacyOutputKeys: (source) =>
      [t.outputPrefix, t.quarantinePrefix].flatMap((prefix) => legacyHashedKey(keyOptions(prefix, source)) ?? []),
    skipReason(object) {
      if (!object.key.startsWith(t.inputPrefix)) return `key is outside the input prefix ${t.inputPrefix}`;
      if (!formats.formatOfKey(object.key)) {
        return `unsupported file type (expected ${expectedExtensions(formats)}, optionally gzipped as .gz)`;
      }
      return undefined;
    },
  };
}

/**
 * Joins text lines into ~16 KiB writes: one S3 buffer append per line would dominate the CPU profile
 * of a large file. Not more: the lines waiting in a batch survive the young generation's
 * collections, and at Lambda's 128 MB heap limits 64 KiB batches made the mixed CSV about 10 %
 * slower (256 KiB about 40 %). Only a flushing write returns a promise, so backpressure still holds.
 * Byte strings (src/normalize/byteStrings.ts) go to a LineBytes instead (lineBytes.ts).
 */
class LineBatcher implements LineSink {
  private lines: string[] = [];
  private size = 0;
  constructor(
    private readonly target: OutputStream,
    private readonly flushChars = 16 * 1024,
  ) {}

  write(line: string): Promise<void> | undefined {
    this.lines.push(line);
    this.size += line.length + 1;
    return this.size >= this.flushChars ? this.flush() : undefined;
  }

  async flush(): Promise<void> {
    if (this.lines.length === 0) return;
    const text = joinLines(this.lines);
    this.lines = [];
    this.size = 0;
    return this.target.write(text);
  }
}

/** `.csv, .ndjson or .jsonl`: the extensions of `formats`, for a skip reason. */
function expectedExtensions(formats: FormatRegistry): string {
  const all = Object.keys(formats.extensions());
  return all.length < 2 ? (all[0] ?? 'none') : `${all.slice(0, -1).join(', ')} or ${all.at(-1)}`;
}
