import { formatIntegrity } from '../../src/done/integrity.js';
import { MetadataKey } from '../../src/done/outputMetadata.js';
import type { Day } from '../../src/keys/partition.js';

/**
 * The S3 user metadata of a published summary: enough for a HEAD to tell whether it is complete
 * (integrity, verified against S3's stored SHA-256) and current (lineage hash and code version),
 * without reading it. The same facts are inside the JSON (its manifest); metadata makes them cheap.
 */
export const SummaryMetadataKey = {
  /** SHA-256 (hex) of the partition, code version and lineage the summary was computed from. */
  LINEAGE_HASH: 'rerun-lineage-hash',
  /** `dt=YYYY-MM-DD`. */
  PARTITION: 'rerun-partition',
  /** Same key and meaning as the outputs' (src/done/outputMetadata.ts). */
  CODE_VERSION: MetadataKey.CODE_VERSION,
  /** `sha256:<base64 digest>:<byte length>`, as for single-part outputs. */
  INTEGRITY: MetadataKey.INTEGRITY,
  /**
   * The digest of the day's inputs and their classes the summary records (app/partition/summaryCoverage.ts);
   * absent on a summary built without the inputs.
   */
  COVERAGE_DIGEST: 'rerun-coverage-digest',
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
  return {
    [SummaryMetadataKey.LINEAGE_HASH]: input.lineageHash,
    [SummaryMetadataKey.PARTITION]: `dt=${input.day}`,
    [SummaryMetadataKey.CODE_VERSION]: input.codeVersion,
    [SummaryMetadataKey.INTEGRITY]: formatIntegrity({
      kind: 'sha256',
      sha256Base64: input.sha256Base64,
      bytes: input.bytes,
    }),
    ...(input.coverageDigest !== undefined ? { [SummaryMetadataKey.COVERAGE_DIGEST]: input.coverageDigest } : {}),
  };
}
