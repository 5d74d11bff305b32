import type { OutputHead } from '../../src/done/judgeOutput.js';
import { type Day, partitionName } from '../../src/keys/partition.js';
import { judgeWindowHead, type WindowOutputJudgement, WindowOutputState } from '../../src/window/judgeWindowHead.js';

/** The verdict of the summary worker's done-check on a published summary: a window task's. */
export const SummaryState = WindowOutputState;
export type SummaryState = WindowOutputState;

export type SummaryJudgement = WindowOutputJudgement;

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
  // The window task's done-check (src/window/judgeWindowHead.ts), in the summary's words.
  return judgeWindowHead(head, {
    partition: partitionName(expected.day),
    lineageHash: expected.lineageHash,
    codeVersion: expected.codeVersion,
    ...(expected.coverageDigest !== undefined ? { recordDigest: expected.coverageDigest } : {}),
    words: { output: 'summary', window: 'day' },
  });
}
