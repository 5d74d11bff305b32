import type { Day } from '../../src/keys/partition.js';
import { buildWindowMetadata, WindowMetadataKey } from '../../src/window/windowMetadata.js';

/**
 * The S3 user metadata of a published summary: enough for a HEAD to tell whether it is complete
 * (integrity, verified against S3's stored SHA-256) and current (lineage hash and code version),
 * without reading it. The same facts are inside the JSON (its manifest); metadata makes them cheap.
 */
export const SummaryMetadataKey = {
  /** SHA-256 (hex) of the partition, code version and lineage the summary was computed from. */
  LINEAGE_HASH: WindowMetadataKey.LINEAGE_HASH,
  /** `dt=YYYY-MM-DD`. */
  PARTITION: WindowMetadataKey.PARTITION,
  /** Same key and meaning as the outputs' (src/done/outputMetadata.ts). */
  CODE_VERSION: WindowMetadataKey.CODE_VERSION,
  /** `sha256:<base64 digest>:<byte length>`, as for single-part outputs. */
  INTEGRITY: WindowMetadataKey.INTEGRITY,
  /**
   * The digest of the day's inputs and their classes the summary records (app/partition/summaryCoverage.ts);
   * absent on a summary built without the inputs. The window task's record digest.
   */
  COVERAGE_DIGEST: WindowMetadataKey.RECORD_DIGEST,
} as const;

/**
 * Builds the metadata of a summary's bytes.
 *
 * @example
 * buildSummaryMetadata({ day: '2026-01-05', lineageHash, codeVersion: 'summarize@1', sha256Base64, bytes: 812 });
 */
export function buildSummaryMetadata(input: {
  day: Day;
  lineageHash: string;
  codeVersion: string;
  sha256Base64: string;
  bytes: number;
  coverageDigest?: string;
}): Record<string, string> {
  const { day, coverageDigest, ...rest } = input;
  return buildWindowMetadata({
    ...rest,
    partition: `dt=${day}`,
    ...(coverageDigest !== undefined ? { recordDigest: coverageDigest } : {}),
  });
}
