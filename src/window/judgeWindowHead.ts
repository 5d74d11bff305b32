import { integrityProblem } from '../done/integrity.js';
import type { OutputHead } from '../done/judgeOutput.js';
import { WindowMetadataKey } from './windowMetadata.js';

/** The verdict of a window task's done-check on its published output. */
export const WindowOutputState = {
  /** Nothing published yet. */
  MISSING: 'missing',
  /** Complete, and built from exactly this lineage by this code: nothing to do. */
  CURRENT: 'current',
  /** Complete, but built from other inputs or by other code: replace it. */
  OUTDATED: 'outdated',
  /** Not a complete rerun output of this window (no or wrong metadata, content differs): replace it. */
  INVALID: 'invalid',
} as const;
export type WindowOutputState = (typeof WindowOutputState)[keyof typeof WindowOutputState];

/** The done-check's verdict, with the ETag it judged (to replace it with If-Match). */
export type WindowOutputJudgement =
  | { readonly state: typeof WindowOutputState.MISSING }
  | {
      readonly state: Exclude<WindowOutputState, 'missing'>;
      readonly etag: string;
      readonly reason: string;
      /** The lineage hash in its metadata, when it has one. */
      readonly lineageHash?: string;
      readonly codeVersion?: string;
    };

/** What the output must be to be current. */
export interface WindowOutputExpectation {
  /** The window's label as its metadata records it. */
  readonly partition: string;
  readonly lineageHash: string;
  readonly codeVersion: string;
  /** The digest of the record of its inputs it must keep, when the task keeps one. */
  readonly recordDigest?: string;
  /**
   * Words of the reasons.
   * @default { output: 'window output', window: 'window' }
   */
  readonly words?: { readonly output: string; readonly window: string };
}

/**
 * Judges a window's published output from its HEAD (with `ChecksumMode: 'ENABLED'`): its integrity
 * metadata must match what S3 stored (length and SHA-256, so a truncated or overwritten object
 * fails), its partition must be this one, and it is current when its lineage hash and code version
 * are the expected ones and it keeps the expected record of its inputs. Pure: no SDK.
 *
 * @example
 * const verdict = judgeWindowHead(await store.head(bucket, key), { partition: '2026-12-05', lineageHash, codeVersion });
 * if (verdict.state === WindowOutputState.CURRENT) return 'skip';
 */
export function judgeWindowHead(
  head: OutputHead | undefined,
  expected: WindowOutputExpectation,
): WindowOutputJudgement {
  if (!head) return { state: WindowOutputState.MISSING };
  const words = expected.words ?? { output: 'window output', window: 'window' };
  const m = head.metadata;
  const lineageHash = m[WindowMetadataKey.LINEAGE_HASH];
  const codeVersion = m[WindowMetadataKey.CODE_VERSION];
  const invalid = (reason: string): WindowOutputJudgement => ({
    state: WindowOutputState.INVALID,
    etag: head.etag,
    reason,
  });
  if (!lineageHash || !codeVersion || !m[WindowMetadataKey.INTEGRITY]) {
    return invalid(`object has no rerun ${words.output} metadata (written by something else)`);
  }
  if (m[WindowMetadataKey.PARTITION] !== expected.partition) {
    return invalid(`object names partition ${String(m[WindowMetadataKey.PARTITION])}`);
  }
  const integrity = integrityProblem(m[WindowMetadataKey.INTEGRITY] as string, head);
  if (integrity) return invalid(integrity);
  const known = { etag: head.etag, lineageHash, codeVersion };
  const outdated = (reason: string): WindowOutputJudgement => ({ state: WindowOutputState.OUTDATED, ...known, reason });
  if (codeVersion !== expected.codeVersion) {
    return outdated(`built by code version ${codeVersion}, current is ${expected.codeVersion}`);
  }
  if (lineageHash !== expected.lineageHash) return outdated('inputs changed since it was built (lineage hash differs)');
  if (expected.recordDigest !== undefined && m[WindowMetadataKey.RECORD_DIGEST] !== expected.recordDigest) {
    return outdated(
      m[WindowMetadataKey.RECORD_DIGEST] === undefined
        ? `it does not record which inputs of the ${words.window} it covers`
        : `the ${words.window}'s inputs changed since it was built (an input was added, removed, failed or dead-lettered)`,
    );
  }
  return { state: WindowOutputState.CURRENT, ...known, reason: 'built from the current inputs by the current code' };
}
