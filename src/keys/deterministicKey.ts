import { createHash } from 'node:crypto';

/** S3's limit on the length of an object key, in UTF-8 bytes. */
export const MAX_S3_KEY_BYTES = 1024;

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

/**
 * The output key of a unit of work: a pure function of the logical input (bucket + key), never of
 * time or randomness, so every run of the same input addresses the same object.
 *
 * Layout: `{prefix}{source bucket}/{source key without stripPrefix}{suffix}`. The bucket is part of
 * the key so two input buckets can share one output bucket. When that would exceed S3's 1024-byte
 * key limit, the relative key is replaced by its SHA-256 under `_long/`; the output's metadata
 * still names the full source (see outputMetadata.ts), so nothing is ambiguous.
 *
 * @example
 * deterministicKey({ prefix: 'normalized/', source: { bucket: 'in', key: 'incoming/a b.csv' },
 *   stripPrefix: 'incoming/', suffix: '.ndjson' }); // 'normalized/in/a b.csv.ndjson'
 */
export function deterministicKey(options: DeterministicKeyOptions): string {
  const { prefix, source, stripPrefix = '', suffix = '' } = options;
  const relative =
    stripPrefix !== '' && source.key.startsWith(stripPrefix) ? source.key.slice(stripPrefix.length) : source.key;
  const key = `${prefix}${source.bucket}/${relative}${suffix}`;
  if (Buffer.byteLength(key, 'utf8') <= MAX_S3_KEY_BYTES) return key;
  const digest = createHash('sha256').update(source.key, 'utf8').digest('hex');
  return `${prefix}${source.bucket}/_long/${digest}${suffix}`;
}
