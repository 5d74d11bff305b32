import type { OptionNames } from '../options/checkOptions.js';
import type { ConflictRetryPolicy } from './conflictRetry.js';

/** S3's smallest multipart part (every part but the last): CompleteMultipartUpload refuses smaller ones. */
export const S3_MIN_PART_BYTES = 5 * 1024 * 1024;

/** Options of {@link S3ObjectStore}. */
export interface S3ObjectStoreOptions {
  /**
   * The retry of a PutObject that met 409 ConditionalRequestConflict.
   * @default 3 retries, full jitter over 50 ms doubling up to 1 s (src/s3/conflictRetry.ts)
   */
  readonly conflictRetry?: ConflictRetryPolicy;
  /**
   * The smallest part the store accepts in a multipart upload, for every part but the last. Output
   * writers never make a part smaller. Change it only for a store with another limit (the
   * simulation tier's in-memory S3 takes small parts, so that multipart outputs cost microseconds).
   * @default 5 MiB (S3's limit, `S3_MIN_PART_BYTES`)
   */
  readonly minPartBytes?: number;
}

/** The names of {@link S3ObjectStoreOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const S3_OBJECT_STORE_OPTION_NAMES = {
  conflictRetry: true,
  minPartBytes: true,
} as const satisfies OptionNames<S3ObjectStoreOptions>;

/**
 * The names of S3ObjectStore.get's options (its call checks the list against the type). A misspelt
 * `ifNoneMatch` would read the whole body where a 304 was meant; the check costs a look at one key.
 */
export const S3_GET_OPTION_NAMES = { ifNoneMatch: true } as const;

/** The condition of a conditional write: create-only, or compare-and-swap on the current ETag. */
export type WriteCondition = { readonly ifNoneMatch: '*' } | { readonly ifMatch: string };

/** Options of S3ObjectStore.put: a single conditional PutObject. */
export interface S3PutOptions {
  /** Create-only, or compare-and-swap on the current ETag. */
  readonly condition: WriteCondition;
  /** The object's user metadata (keys without `x-amz-meta-`). */
  readonly metadata: Record<string, string>;
  /** The body's SHA-256, base64: S3 verifies it and stores it. */
  readonly sha256Base64: string;
  /** The object's Content-Type. @default none (S3's binary/octet-stream) */
  readonly contentType?: string;
}

/** The names of {@link S3PutOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const S3_PUT_OPTION_NAMES = {
  condition: true,
  contentType: true,
  metadata: true,
  sha256Base64: true,
} as const satisfies OptionNames<S3PutOptions>;
