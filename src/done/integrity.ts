/**
 * Integrity of the content, known once the whole object has been produced.
 *
 * - `sha256`: one PutObject; S3 stores the SHA-256 of the bytes sent with it.
 * - `sha256-parts`: a multipart upload, sealed (src/publish/OutputWriter.ts): the SHA-256 of the
 *   whole content and S3's composite SHA-256 (the digest of the parts' digests, with their count).
 *   The seal is a CopyObject of the object onto itself, and what S3 stores for the copy is either
 *   checksum: the source's value when the copy names no algorithm ("the checksum value will be
 *   copied to the new object by default", CopyObject API reference, x-amz-checksum-algorithm), or a
 *   new full-object one when it does. Either one identifies the content exactly.
 */
export type Integrity =
  | { readonly kind: 'sha256'; readonly sha256Base64: string; readonly bytes: number }
  /** A multipart upload before its seal ({@link UNSEALED_INTEGRITY}). */
  | { readonly kind: 'unsealed' }
  | {
      readonly kind: 'sha256-parts';
      readonly sha256Base64: string;
      readonly compositeBase64: string;
      readonly parts: number;
      readonly bytes: number;
    };

/**
 * What a multipart upload's metadata says before its seal: CreateMultipartUpload fixes the metadata
 * before the content, the counts or the side outputs exist. An object that still says it is not
 * done: its writer is between CompleteMultipartUpload and the seal, or died there (or an earlier
 * release of rerun, which did not seal, wrote it).
 */
export const UNSEALED_INTEGRITY = 'sha256-composite';

const SINGLE = /^sha256:([A-Za-z0-9+/=]+):(\d+)$/;
const PARTS = /^sha256-parts:([A-Za-z0-9+/=]+):([A-Za-z0-9+/=]+)-(\d+):(\d+)$/;

/**
 * The integrity metadata value of an object: `sha256:<base64 digest>:<byte length>` for one
 * PutObject, `sha256-parts:<base64 digest>:<base64 composite>-<parts>:<byte length>` for a sealed
 * multipart upload, {@link UNSEALED_INTEGRITY} for one not sealed yet.
 *
 * @example
 * formatIntegrity({ kind: 'sha256', sha256Base64: 'n4bQ...=', bytes: 12 }); // 'sha256:n4bQ...=:12'
 */
export function formatIntegrity(integrity: Integrity): string {
  switch (integrity.kind) {
    case 'sha256':
      return `sha256:${integrity.sha256Base64}:${integrity.bytes}`;
    case 'sha256-parts':
      return `sha256-parts:${integrity.sha256Base64}:${integrity.compositeBase64}-${integrity.parts}:${integrity.bytes}`;
    case 'unsealed':
      return UNSEALED_INTEGRITY;
  }
}

/**
 * Why a stored object does not match its integrity metadata, or undefined when it does: the one
 * check every done-check (outputs and summaries) makes on a HEAD with `ChecksumMode: 'ENABLED'`.
 * The object must have the length written, and S3's stored SHA-256 must be one the writer computed
 * of these bytes, so a truncated, overwritten or replaced object fails, and so does a multipart
 * upload that was never sealed. Pure: no SDK.
 *
 * @example
 * integrityProblem(head.metadata['rerun-integrity'], head); // undefined when length and stored SHA-256 match
 */
export function integrityProblem(
  integrity: string,
  // The fields of judgeOutput.ts's OutputHead it reads (that module imports this one).
  head: { readonly contentLength: number; readonly checksumSHA256?: string },
): string | undefined {
  if (integrity === UNSEALED_INTEGRITY) {
    return (
      'multipart output was never sealed with its digest, counts and side outputs ' +
      '(its writer is sealing it or died after completing it, or an earlier rerun release wrote it)'
    );
  }
  const single = SINGLE.exec(integrity);
  const parts = single ? undefined : PARTS.exec(integrity);
  if (!single && !parts) return `unreadable integrity metadata ${JSON.stringify(integrity)}`;
  const bytes = Number(single ? single[2] : parts?.[4]);
  if (bytes !== head.contentLength) {
    return `content length ${head.contentLength} differs from the ${bytes} bytes written (partial or overwritten)`;
  }
  if (!head.checksumSHA256) return 'object has no stored SHA-256 checksum (overwritten without one)';
  const accepted = single ? [single[1]] : [parts?.[1], parts?.[2]];
  // A composite checksum comes back with its part count (`-N`) or without it (as moto returns it).
  const stored = head.checksumSHA256.replace(/-\d+$/, '');
  if (!accepted.includes(stored)) return 'stored SHA-256 differs from the digest written (content was replaced)';
  return undefined;
}

/**
 * The SHA-256 of the whole content that an integrity value records (base64), or undefined when it
 * records none (an unsealed multipart upload, or an unreadable value). For an output that passed
 * {@link integrityProblem} it is the digest of exactly the bytes stored.
 *
 * @example
 * recordedSha256('sha256:n4bQ...=:12'); // 'n4bQ...='
 */
export function recordedSha256(integrity: string | undefined): string | undefined {
  if (integrity === undefined) return undefined;
  return (SINGLE.exec(integrity) ?? PARTS.exec(integrity))?.[1];
}
