import { formatIntegrity } from '../done/integrity.js';
import { MetadataKey } from '../done/outputMetadata.js';

/**
 * The S3 user metadata of a window's published output: enough for a HEAD to tell whether it is
 * complete (integrity, checked against S3's stored SHA-256) and current (lineage hash and code
 * version), without reading it.
 */
export const WindowMetadataKey = {
  /** SHA-256 (hex) of the window, code version and lineage the output was built from. */
  LINEAGE_HASH: 'rerun-lineage-hash',
  /** The window's label (`dt=2026-12-05` for the reference summary, the window's name otherwise). */
  PARTITION: 'rerun-partition',
  /** Same key and meaning as the outputs' (src/done/outputMetadata.ts). */
  CODE_VERSION: MetadataKey.CODE_VERSION,
  /** `sha256:<base64 digest>:<byte length>`, as for single-part outputs. */
  INTEGRITY: MetadataKey.INTEGRITY,
  /** The digest of the record of its inputs the output keeps (the summary's input coverage), when it keeps one. */
  RECORD_DIGEST: 'rerun-coverage-digest',
} as const;

/**
 * Builds the metadata of a window output's bytes.
 *
 * @example
 * buildWindowMetadata({ partition: '2026-12-05', lineageHash, codeVersion: 'daily@1', sha256Base64, bytes: 812 });
 */
export function buildWindowMetadata(input: {
  readonly partition: string;
  readonly lineageHash: string;
  readonly codeVersion: string;
  readonly sha256Base64: string;
  readonly bytes: number;
  readonly recordDigest?: string;
}): Record<string, string> {
  return {
    [WindowMetadataKey.LINEAGE_HASH]: input.lineageHash,
    [WindowMetadataKey.PARTITION]: input.partition,
    [WindowMetadataKey.CODE_VERSION]: input.codeVersion,
    [WindowMetadataKey.INTEGRITY]: formatIntegrity({
      kind: 'sha256',
      sha256Base64: input.sha256Base64,
      bytes: input.bytes,
    }),
    ...(input.recordDigest !== undefined ? { [WindowMetadataKey.RECORD_DIGEST]: input.recordDigest } : {}),
  };
}
