import { createHash } from 'node:crypto';
import { WorkerConfigurationError } from '../errors.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';

/** S3's limit on the length of an object key, in UTF-8 bytes. */
export const MAX_S3_KEY_BYTES = 1024;

/** The folder of hashed keys, under the input's partition path (`.../dt=D/_long/<sha256>`). */
export const HASHED_KEY_FOLDER = '_long/';

/** A partition segment of a key: `name=value` (Hive style, e.g. `dt=2026-11-30`), no `/`. */
const PARTITION_SEGMENT = /^[^/=]+=[^/]*$/;

/** Options for {@link deterministicKey}. */
export interface DeterministicKeyOptions {
  /** Prefix of the output key, e.g. `normalized/`. */
  readonly prefix: string;
  /** The logical input. */
  readonly source: { readonly bucket: string; readonly key: string };
  /**
   * Removed from the start of the source key when present, e.g. `incoming/`.
   * @default ''
   */
  readonly stripPrefix?: string;
  /**
   * Appended to the key, e.g. `.ndjson`. It is appended, not substituted for the extension, so
   * `a.csv` and `a.ndjson` never collide.
   * @default ''
   */
  readonly suffix?: string;
}

/** The names of {@link DeterministicKeyOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const DETERMINISTIC_KEY_OPTION_NAMES = {
  prefix: true,
  source: true,
  stripPrefix: true,
  suffix: true,
} as const satisfies OptionNames<DeterministicKeyOptions>;

/**
 * The output key of a unit of work: a pure function of the logical input (bucket + key), never of
 * time or randomness, so every run of the same input addresses the same object.
 *
 * Layout: `{prefix}{source bucket}/{source key without stripPrefix}{suffix}`. The bucket is part of
 * the key so two input buckets can share one output bucket. When that would exceed S3's 1024-byte
 * key limit, the rest of the relative key is replaced by the SHA-256 of the source key under
 * `_long/`, after the input's leading partition segments (`dt=D/`, any `name=value/`), so the output
 * stays in its day: status, backfills and summaries list `{prefix}{bucket}/dt=D/` and find it. Only
 * when even the partition path does not fit does the hash go directly under the bucket. The
 * output's metadata names the source (see outputMetadata.ts), so nothing is ambiguous.
 *
 * @example
 * deterministicKey({ prefix: 'normalized/', source: { bucket: 'in', key: 'incoming/a b.csv' },
 *   stripPrefix: 'incoming/', suffix: '.ndjson' }); // 'normalized/in/a b.csv.ndjson'
 * deterministicKey({ prefix: 'normalized/', source: { bucket: 'in', key: `incoming/dt=2026-11-30/${'x'.repeat(1100)}` },
 *   stripPrefix: 'incoming/', suffix: '.ndjson' }); // 'normalized/in/dt=2026-11-30/_long/<sha256>.ndjson'
 */
export function deterministicKey(options: DeterministicKeyOptions): string {
  checkOptions('deterministicKey', options, DETERMINISTIC_KEY_OPTION_NAMES, (m) => new WorkerConfigurationError(m));
  return uncheckedDeterministicKey(options);
}

/**
 * {@link deterministicKey} without the check of its option names: for rerun's own callers, which
 * build the options themselves once per key (a key rule, a reprocess plan over millions of keys),
 * where the check would cost a third of the call.
 *
 * @example
 * uncheckedDeterministicKey({ prefix: 'upper/', source: { bucket: 'in', key: 'a.csv' } }); // 'upper/in/a.csv'
 */
export function uncheckedDeterministicKey(options: DeterministicKeyOptions): string {
  const { prefix, source, stripPrefix = '', suffix = '' } = options;
  const relative =
    stripPrefix !== '' && source.key.startsWith(stripPrefix) ? source.key.slice(stripPrefix.length) : source.key;
  const key = `${prefix}${source.bucket}/${relative}${suffix}`;
  if (fits(key)) return key;
  const digest = createHash('sha256').update(source.key, 'utf8').digest('hex');
  const hashed = `${prefix}${source.bucket}/${partitionPath(relative)}${HASHED_KEY_FOLDER}${digest}${suffix}`;
  return fits(hashed) ? hashed : `${prefix}${source.bucket}/${HASHED_KEY_FOLDER}${digest}${suffix}`;
}

/**
 * Where releases before partition-preserving keys put the hashed key of an overlong input
 * (`{prefix}{bucket}/_long/<sha256>{suffix}`), when that differs from today's key; else undefined.
 * A worker lists it in `legacyOutputKeys`, so the object there is removed once the output is
 * published in its partition, and no day counts it twice.
 *
 * @example
 * legacyHashedKey({ prefix: 'normalized/', source: { bucket: 'in', key: `incoming/dt=2026-11-30/${'x'.repeat(1100)}` },
 *   stripPrefix: 'incoming/', suffix: '.ndjson' }); // 'normalized/in/_long/<sha256>.ndjson'
 */
export function legacyHashedKey(options: DeterministicKeyOptions): string | undefined {
  const { prefix, source, suffix = '' } = options;
  const current = uncheckedDeterministicKey(options);
  if (!current.includes(`/${HASHED_KEY_FOLDER}`)) return undefined;
  const digest = createHash('sha256').update(source.key, 'utf8').digest('hex');
  const legacy = `${prefix}${source.bucket}/${HASHED_KEY_FOLDER}${digest}${suffix}`;
  return legacy === current ? undefined : legacy;
}

function fits(key: string): boolean {
  return Buffer.byteLength(key, 'utf8') <= MAX_S3_KEY_BYTES;
}

/** The leading partition segments of a relative key, each with its `/` (`dt=2026-11-30/`), or ''. */
function partitionPath(relative: string): string {
  let end = 0;
  for (;;) {
    const slash = relative.indexOf('/', end);
    if (slash < 0 || !PARTITION_SEGMENT.test(relative.slice(end, slash))) return relative.slice(0, end);
    end = slash + 1;
  }
}
