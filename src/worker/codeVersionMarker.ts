import { createHash } from 'node:crypto';
import { PublishConflictError } from '../errors.js';
import type { OptionNames } from '../options/checkOptions.js';
import { type S3ObjectStore, WriteStatus } from '../s3/S3ObjectStore.js';

/** Where a worker's code-version markers go: the bucket and the prefix under it. */
export interface CodeVersionMarkerPlace {
  readonly bucket: string;
  readonly prefix: string;
}

/** The names of {@link CodeVersionMarkerPlace}, checked by checkOptions (tsc fails when this list and the type differ). */
export const CODE_VERSION_MARKER_PLACE_NAMES = {
  bucket: true,
  prefix: true,
} as const satisfies OptionNames<CodeVersionMarkerPlace>;

/**
 * Where a worker records that a code version has run: `{prefix}{worker}/{codeVersion}`, an empty
 * object created once (If-None-Match) by the first instance of that version, before its first
 * output. Its LastModified is therefore a bound that a listing can read: every output older than
 * it was built by another code version. That is how a `codeVersion` bump becomes visible to
 * `rerun reprocess` without a HEAD per output (see app/reprocess/codeVersionCutoff.ts).
 *
 * @example
 * codeVersionMarkerKey('code-versions/', 'normalize', 'normalize@2'); // 'code-versions/normalize/normalize%402'
 */
export function codeVersionMarkerKey(prefix: string, worker: string, codeVersion: string): string {
  return `${prefix}${encodeURIComponent(worker)}/${encodeURIComponent(codeVersion)}`;
}

/**
 * Creates the marker of a code version unless it exists (a 412 means another instance of the
 * same version was first: fine). The store retries a 409 (full jitter); one left over, and any other
 * failure, is thrown: the caller
 * must not build outputs before the marker exists, or planning would take them for old code.
 *
 * @example
 * await writeCodeVersionMarker(store, 'rerun-output', codeVersionMarkerKey('code-versions/', 'normalize', 'normalize@1'));
 */
export async function writeCodeVersionMarker(store: S3ObjectStore, bucket: string, key: string): Promise<void> {
  const empty = new Uint8Array();
  const sha256Base64 = createHash('sha256').update(empty).digest('base64');
  const result = await store.put(bucket, key, empty, { condition: { ifNoneMatch: '*' }, metadata: {}, sha256Base64 });
  if (result.status === WriteStatus.WRITTEN || result.status === WriteStatus.PRECONDITION_FAILED) return;
  if (result.status === WriteStatus.MISSING) {
    throw new PublishConflictError(
      `code version marker s3://${bucket}/${key} could not be created (404: does the bucket exist?); ` +
        'the batch is retried. Check OUTPUT_BUCKET and CODE_VERSION_PREFIX.',
    );
  }
  throw new PublishConflictError(`code version marker s3://${bucket}/${key} is being written concurrently; retrying.`);
}
