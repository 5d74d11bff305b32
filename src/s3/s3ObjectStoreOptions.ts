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
