import type { OutputHead } from './judgeOutput.js';

/** Integrity of the content, known once the whole object has been produced. */
export type Integrity =
  | { readonly kind: 'sha256'; readonly sha256Base64: string; readonly bytes: number }
  | { readonly kind: 'sha256-composite' };

const COMPOSITE = 'sha256-composite';
const SINGLE = /^sha256:([A-Za-z0-9+/=]+):(\d+)$/;

/**
 * The integrity metadata value of an object: `sha256:<base64 digest>:<byte length>` for one
 * PutObject, `sha256-composite` for a multipart upload (S3 stores a checksum of the parts' checksums,
 * which no single digest known up front can equal).
 *
 * @example
 * formatIntegrity({ kind: 'sha256', sha256Base64: 'n4bQ...=', bytes: 12 }); // 'sha256:n4bQ...=:12'
 */
export function formatIntegrity(integrity: Integrity): string {
  return integrity.kind === 'sha256' ? `sha256:${integrity.sha256Base64}:${integrity.bytes}` : COMPOSITE;
}

/**
 * Why a stored object does not match its integrity metadata, or undefined when it does: the one
 * check every done-check (outputs and summaries) makes on a HEAD with `ChecksumMode: 'ENABLED'`.
 * A single-part object must have the length written and S3's stored SHA-256 must equal the digest
 * written, so a truncated, overwritten or replaced object fails; a multipart one (only where
 * `multipart` allows it) must have a stored SHA-256 at all. Pure: no SDK.
 *
 * @example
 * integrityProblem(head.metadata['rerun-integrity'], head); // undefined when length and stored SHA-256 match
 */
export function integrityProblem(
  integrity: string,
  head: Pick<OutputHead, 'contentLength' | 'checksumSHA256'>,
  options: { readonly multipart?: boolean } = {},
): string | undefined {
  if (integrity === COMPOSITE && options.multipart) {
    return head.checksumSHA256 ? undefined : 'multipart output has no stored SHA-256 checksum (not written by rerun)';
  }
  const match = SINGLE.exec(integrity);
  if (!match) return `unreadable integrity metadata ${JSON.stringify(integrity)}`;
  const [, digest, bytes] = match;
  if (Number(bytes) !== head.contentLength) {
    return `content length ${head.contentLength} differs from the ${bytes} bytes written (partial or overwritten)`;
  }
  if (!head.checksumSHA256) return 'object has no stored SHA-256 checksum (overwritten without one)';
  if (head.checksumSHA256 !== digest) return 'stored SHA-256 differs from the digest written (content was replaced)';
  return undefined;
}
