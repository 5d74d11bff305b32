import { integrityProblem } from '../../src/done/integrity.js';
import type { OutputHead } from '../../src/done/judgeOutput.js';
import { type Day, partitionName } from '../../src/keys/partition.js';
import { SummaryMetadataKey } from './summaryMetadata.js';

/** The verdict of the summary worker's done-check on a published summary. */
export const SummaryState = {
  /** Nothing published yet. */
  MISSING: 'missing',
  /** Complete, and built from exactly this lineage by this code: nothing to do. */
  CURRENT: 'current',
  /** Complete, but built from other inputs or by other code: replace it. */
  OUTDATED: 'outdated',
  /** Not a complete rerun summary of this partition (no or wrong metadata, content differs): replace it. */
  INVALID: 'invalid',
} as const;
export type SummaryState = (typeof SummaryState)[keyof typeof SummaryState];

export type SummaryJudgement =
  | { readonly state: typeof SummaryState.MISSING }
  | {
      readonly state: Exclude<SummaryState, 'missing'>;
      readonly etag: string;
      readonly reason: string;
      /** The lineage hash in its metadata, when it has one. */
      readonly lineageHash?: string;
      readonly codeVersion?: string;
    };

/**
 * Judges a published summary from its HEAD (with `ChecksumMode: 'ENABLED'`): its integrity metadata
 * must match what S3 stored (length and SHA-256, so a truncated or overwritten object fails), its
 * partition must be this one, and it is current when its lineage hash and code version equal the
 * expected ones, and, when a coverage digest is expected, it records that coverage of the day's
 * inputs. Pure: no SDK.
 *
 * @example
 * const verdict = judgeSummaryHead(await store.head(bucket, key), { day, lineageHash, codeVersion });
 * if (verdict.state === SummaryState.CURRENT) return 'skip';
 */
export function judgeSummaryHead(
  head: OutputHead | undefined,
  expected: { day: Day; lineageHash: string; codeVersion: string; coverageDigest?: string },
): SummaryJudgement {
  if (!head) return { state: SummaryState.MISSING };
  const m = head.metadata;
  const lineageHash = m[SummaryMetadataKey.LINEAGE_HASH];
  const codeVersion = m[SummaryMetadataKey.CODE_VERSION];
  const invalid = (reason: string): SummaryJudgement => ({ state: SummaryState.INVALID, etag: head.etag, reason });
  if (!lineageHash || !codeVersion || !m[SummaryMetadataKey.INTEGRITY]) {
    return invalid('object has no rerun summary metadata (written by something else)');
  }
  if (m[SummaryMetadataKey.PARTITION] !== partitionName(expected.day)) {
    return invalid(`object names partition ${String(m[SummaryMetadataKey.PARTITION])}`);
  }
  const integrity = integrityProblem(m[SummaryMetadataKey.INTEGRITY] as string, head);
  if (integrity) return invalid(integrity);
  const known = { etag: head.etag, lineageHash, codeVersion };
  if (codeVersion !== expected.codeVersion) {
    return {
      state: SummaryState.OUTDATED,
      ...known,
      reason: `built by code version ${codeVersion}, current is ${expected.codeVersion}`,
    };
  }
  if (lineageHash !== expected.lineageHash) {
    return {
      state: SummaryState.OUTDATED,
      ...known,
      reason: 'inputs changed since it was built (lineage hash differs)',
    };
  }
  if (expected.coverageDigest !== undefined && m[SummaryMetadataKey.COVERAGE_DIGEST] !== expected.coverageDigest) {
    return {
      state: SummaryState.OUTDATED,
      ...known,
      reason:
        m[SummaryMetadataKey.COVERAGE_DIGEST] === undefined
          ? 'it does not record which inputs of the day it covers'
          : "the day's inputs changed since it was built (an input was added, removed, failed or dead-lettered)",
    };
  }
  return { state: SummaryState.CURRENT, ...known, reason: 'built from the current inputs by the current code' };
}
