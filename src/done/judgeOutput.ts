import { WorkerConfigurationError } from '../errors.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';
import { integrityProblem } from './integrity.js';
import { encodeSource, MetadataKey } from './outputMetadata.js';

/** What a HEAD of an output (with `ChecksumMode: 'ENABLED'`) returned. */
export interface OutputHead {
  /** ETag without quotes. */
  readonly etag: string;
  readonly contentLength: number;
  /** User metadata, keys lower-case without `x-amz-meta-`. */
  readonly metadata: Readonly<Record<string, string>>;
  /** The SHA-256 checksum S3 stored at upload (base64; composite ones may end in `-N`). */
  readonly checksumSHA256?: string;
  /** S3's LastModified (epoch ms), when the HEAD returned one: how old an unsealed output is (sealInProgress.ts). */
  readonly lastModified?: number;
}

/** The verdict of a done-check on one output. */
export const OutputState = {
  /** No object at the output key. */
  MISSING: 'missing',
  /** An object is there but it is not a complete rerun output for this input: replace it. */
  INVALID: 'invalid',
  /** A valid output written by another code version: rebuild it. */
  OLD_CODE: 'old-code',
  /** A valid output of this code version, built from the input content `sourceEtag`. */
  BUILT: 'built',
} as const;
export type OutputState = (typeof OutputState)[keyof typeof OutputState];

export type Judgement =
  | { readonly state: typeof OutputState.MISSING }
  | {
      readonly state: typeof OutputState.INVALID | typeof OutputState.OLD_CODE;
      readonly etag: string;
      readonly reason: string;
    }
  | {
      readonly state: typeof OutputState.BUILT;
      readonly etag: string;
      readonly sourceEtag: string;
      readonly sourceVersionId?: string;
    };

/** What the output should be. */
export interface OutputExpectation {
  readonly source: { readonly bucket: string; readonly key: string };
  readonly codeVersion: string;
  /** Extra checks of the worker's own: return a reason to reject the output, or undefined. */
  readonly validate?: ((head: OutputHead) => string | undefined) | undefined;
}

/** The names of {@link OutputExpectation}, checked by checkOptions (tsc fails when this list and the type differ). */
export const OUTPUT_EXPECTATION_NAMES = {
  codeVersion: true,
  source: true,
  validate: true,
} as const satisfies OptionNames<OutputExpectation>;

/**
 * The done-check's decision, from the HEAD alone (no body read, so its cost does not depend on the
 * output's size). A complete output has rerun's metadata, names this input, and its content is
 * verified by S3's stored checksum: S3 computed the SHA-256 of the bytes it stored (for a multipart
 * output, of its parts) and it must be the digest recorded in metadata, and the length must match;
 * a truncated, partial or overwritten object fails this, and so does a multipart output that was
 * completed but never sealed with its digest, counts and side outputs (src/done/integrity.ts).
 *
 * Whether the output is *current* (built from the input's current content) is the caller's next
 * question: compare `sourceEtag` with the input (a conditional GET, see src/worker/doneCheck.ts).
 *
 * @example
 * const verdict = judgeOutput(head, { source: { bucket: 'in', key: 'incoming/a.csv' }, codeVersion: '1' });
 * if (verdict.state === OutputState.BUILT) console.log('built from', verdict.sourceEtag);
 */
export function judgeOutput(head: OutputHead | undefined, expected: OutputExpectation): Judgement {
  // A misspelt `validate` would skip the worker's own checks: refused. Costs a look at three keys.
  checkOptions('judgeOutput', expected, OUTPUT_EXPECTATION_NAMES, (m) => new WorkerConfigurationError(m));
  if (!head) return { state: OutputState.MISSING };
  const invalid = (reason: string): Judgement => ({ state: OutputState.INVALID, etag: head.etag, reason });
  const m = head.metadata;

  const source = m[MetadataKey.SOURCE];
  const sourceEtag = m[MetadataKey.SOURCE_ETAG];
  const codeVersion = m[MetadataKey.CODE_VERSION];
  const integrity = m[MetadataKey.INTEGRITY];
  if (!source || !sourceEtag || !codeVersion || !integrity) {
    return invalid('object has no rerun metadata (written by something else, or by a crashed foreign writer)');
  }
  if (source !== encodeSource(expected.source)) {
    return invalid(`object was built from another input (${source})`);
  }
  const contentProblem = integrityProblem(integrity, head);
  if (contentProblem) return invalid(contentProblem);
  if (codeVersion !== expected.codeVersion) {
    return {
      state: OutputState.OLD_CODE,
      etag: head.etag,
      reason: `built by code version ${codeVersion}, current is ${expected.codeVersion}`,
    };
  }
  const custom = expected.validate?.(head);
  if (custom) return invalid(custom);
  const versionId = m[MetadataKey.SOURCE_VERSION];
  return {
    state: OutputState.BUILT,
    etag: head.etag,
    sourceEtag,
    ...(versionId ? { sourceVersionId: versionId } : {}),
  };
}
