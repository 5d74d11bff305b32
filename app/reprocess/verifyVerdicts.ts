import { judgeOutput, type OutputHead, OutputState } from '../../src/done/judgeOutput.js';
import { publishedSideOutputs } from '../../src/done/outputMetadata.js';
import { ReprocessState, type ReprocessVerdict } from './planReprocess.js';

/** Options of {@link verifyVerdicts}. */
export interface VerifyOptions {
  /** The input bucket (outputs name their source as bucket + key). */
  readonly inputBucket: string;
  /** The code version the deployed worker runs: outputs of another are old-code. */
  readonly codeVersion: string;
  /** HEAD of an output with its stored checksum (S3ObjectStore.head), undefined on 404. */
  head(outputKey: string): Promise<OutputHead | undefined>;
  /** The worker's own extra validation, as in its done-check. @default none */
  readonly validate?: (head: OutputHead) => string | undefined;
  /**
   * The keys of the worker's side outputs of an input (`worker.sideOutputs`), so that an output is
   * current only while every side object it lists is there with the ETag it lists, as in the
   * worker's done-check (one more HEAD per listed side object).
   * @default none: side outputs are not checked
   */
  readonly sideOutputKeys?: (inputKey: string) => Readonly<Record<string, string>>;
  /** HEADs in flight at once. @default 16 */
  readonly concurrency?: number;
  /** Called once per HEAD sent (the cost of --verify). */
  readonly onHead?: () => void;
  /**
   * Which current-looking verdicts get the HEAD. The listing's stale candidates
   * (`checkSource`) always get it, whatever this says.
   * @default every current-looking one
   */
  readonly select?: (verdict: ReprocessVerdict) => boolean;
}

/**
 * The worker's done-check for the outputs the listings cannot judge, one HEAD each, with bounded
 * concurrency and in order (a window of `concurrency` verdicts in memory): always each stale
 * candidate (an output older than its input, `checkSource`: current when it was built from the
 * input's listed ETag, as after identical bytes were uploaded again), and, for `--verify`, each
 * output that looks current (or those `select` picks).
 * The HEAD tells what a listing cannot: the output is intact (S3's stored SHA-256 equals the
 * digest recorded), names this input, was built by this code version, and from which input ETag;
 * the input's ETag comes from its listing, so no GET of the input is needed. With `sideOutputKeys`,
 * each side object the output lists gets a HEAD too: one missing or replaced makes it invalid.
 *
 * @example
 * for await (const v of verifyVerdicts(planReprocess(plan), { inputBucket: 'in', codeVersion: 'normalize@1',
 *   head: (key) => store.head('out', key) })) console.log(v.state);
 */
export async function* verifyVerdicts(
  verdicts: AsyncIterable<ReprocessVerdict>,
  options: VerifyOptions,
): AsyncGenerator<ReprocessVerdict> {
  const limit = options.concurrency ?? 16;
  const window: Promise<ReprocessVerdict>[] = [];
  for await (const verdict of verdicts) {
    const check =
      verdict.checkSource === true || (verdict.state === ReprocessState.CURRENT && (options.select?.(verdict) ?? true));
    window.push(check ? verifyOne(verdict, options) : Promise.resolve(verdict));
    if (window.length >= limit) yield await (window.shift() as Promise<ReprocessVerdict>);
  }
  while (window.length > 0) yield await (window.shift() as Promise<ReprocessVerdict>);
}

async function verifyOne(listed: ReprocessVerdict, options: VerifyOptions): Promise<ReprocessVerdict> {
  const { inputKey, input } = listed;
  if (!inputKey || !input) return listed;
  // Judged now: the candidate flag is spent (a verdict that still carries it was not checked).
  const { checkSource, ...verdict } = listed;
  options.onHead?.();
  const head = await options.head(verdict.outputKey);
  const judged = judgeOutput(head, {
    source: { bucket: options.inputBucket, key: inputKey },
    codeVersion: options.codeVersion,
    ...(options.validate ? { validate: options.validate } : {}),
  });
  switch (judged.state) {
    case OutputState.MISSING:
      return { ...verdict, state: ReprocessState.MISSING, reason: 'no output (removed since the listing)' };
    case OutputState.INVALID:
      return { ...verdict, state: ReprocessState.INVALID, reason: judged.reason };
    case OutputState.OLD_CODE:
      return { ...verdict, state: ReprocessState.OLD_CODE, reason: judged.reason };
    default:
      if (judged.sourceEtag !== input.etag) {
        return {
          ...verdict,
          state: ReprocessState.STALE,
          reason: `built from input ETag ${judged.sourceEtag}, the input is ${input.etag}`,
        };
      }
      return (
        (await sideOutputProblem({ ...verdict, inputKey }, head as OutputHead, options)) ?? {
          ...verdict,
          state: ReprocessState.CURRENT,
          reason: checkSource
            ? `output is older than its input but built from its content (input ETag ${judged.sourceEtag}: the same bytes uploaded again)`
            : 'output is valid and current (verified)',
        }
      );
  }
}

/** The first side object the output lists that is missing or has another ETag, as an invalid verdict. */
async function sideOutputProblem(
  verdict: ReprocessVerdict & { readonly inputKey: string },
  head: OutputHead,
  options: VerifyOptions,
): Promise<ReprocessVerdict | undefined> {
  const keys = options.sideOutputKeys?.(verdict.inputKey);
  const listed = keys ? publishedSideOutputs(head.metadata) : undefined;
  if (!keys || !listed) return undefined;
  for (const [name, etag] of listed) {
    const key = keys[name];
    if (key === undefined || etag === '') continue;
    options.onHead?.();
    const side = await options.head(key);
    if (side?.etag === etag) continue;
    const reason = side
      ? `side output ${name} has ETag ${side.etag}, the output lists ${etag}`
      : `side output ${name} is missing`;
    return { ...verdict, state: ReprocessState.INVALID, reason };
  }
  return undefined;
}
