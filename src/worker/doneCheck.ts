import { eventProvesCurrent } from '../done/eventProvesCurrent.js';
import { recordedSha256 } from '../done/integrity.js';
import { type Judgement, judgeOutput, OutputState } from '../done/judgeOutput.js';
import { MetadataKey, publishedSideOutputs, readSummary } from '../done/outputMetadata.js';
import { InputTooLargeError } from '../errors.js';
import type { S3ObjectEvent } from '../intake/parseS3Event.js';
import type { Logger } from '../logging/logger.js';
import type { GetResult, S3ObjectStore } from '../s3/S3ObjectStore.js';
import type { WorkerDefinition } from './defineWorker.js';
import type { ObjectOutcome } from './ObjectOutcome.js';
import type { HeldMemory, RoundOptions } from './processObjectOptions.js';
import { formatSize } from './readGuard.js';
import { checkListedSideOutputs, type FinalOutput } from './sideOutputs.js';

/*
 * The done-check of one round of processObject (its steps 1 and 2): HEAD the output and judge it,
 * then read the input with a conditional GET against the ETag the output was built from, checking
 * the side objects it lists beside it; and the outcome of a round that finds the output done.
 */

/** The input is known to be at the output's source ETag without asking S3 (see eventProvesCurrent). */
const NOT_MODIFIED: GetResult = { status: 'not-modified' };

/** What the done-check of one round found (skipped on a new object's first delivery: then nothing). */
export interface Judged {
  readonly outputKey: string;
  readonly head: OutputHeadOrNone;
  readonly verdict: Judgement;
  readonly listed: ReadonlyMap<string, string> | undefined;
  /** The output in place, when this round writes nothing (no output at all lists nothing). */
  readonly inPlace: FinalOutput;
  /** The event alone proves the output current (eventProvesCurrent.ts): no conditional GET. */
  readonly decidedByEvent: boolean;
}

export type OutputHeadOrNone = Awaited<ReturnType<S3ObjectStore['head']>>;

export async function judge(worker: WorkerDefinition, object: S3ObjectEvent, limits: RoundOptions): Promise<Judged> {
  const outputKey = worker.outputKey(object);
  // Skipped on a new object's first delivery: the create's If-None-Match is the done-check then.
  const head = limits.skipDoneCheck ? undefined : await limits.store.head(worker.outputBucket, outputKey);
  const verdict = judgeOutput(head, { source: object, codeVersion: worker.codeVersion, validate: worker.validate });
  const listed = head ? publishedSideOutputs(head.metadata) : undefined;
  const inPlace: FinalOutput =
    verdict.state === OutputState.BUILT
      ? { sourceEtag: verdict.sourceEtag, ...(listed ? { sideOutputs: listed } : {}) }
      : verdict.state === OutputState.MISSING
        ? { sideOutputs: new Map() }
        : {};
  // A duplicate costs one request: when the event names the content the output was built from,
  // the HEAD alone decides (eventProvesCurrent.ts: every later write of the key causes its own
  // event, docs/AWS-BEHAVIOUR.md, "The event's eTag"), and no conditional GET is sent. Otherwise the
  // conditional GET asks S3 whether the input still has that ETag.
  return { outputKey, head, verdict, listed, inPlace, decidedByEvent: eventProvesCurrent(verdict, object) };
}

/**
 * Reads the input: a conditional GET against the source of a built output (304: it is current),
 * else the content, with memory reserved for its transform. A built output is done only with the
 * side objects it lists (checked beside the conditional GET, only when it lists any), also when the
 * event's eTag matches: a concurrent writer of other content may have replaced one after the commit
 * and died before repairing it.
 */
export async function readInput(
  worker: WorkerDefinition,
  object: S3ObjectEvent,
  judged: Judged,
  limits: RoundOptions,
  held: HeldMemory,
  logger: Logger,
): Promise<{ readonly input: GetResult; readonly sideProblem: string | undefined }> {
  const { maxInputBytes, store, admission } = limits;
  const { verdict, listed, decidedByEvent, outputKey } = judged;
  // No valid output: the GET returns a body to transform. Reserve memory for it first, by the
  // event's size (the version that caused it), so the body is never left waiting unread on a socket.
  if (verdict.state !== OutputState.BUILT) refuseTooLarge(object, object.size, maxInputBytes);
  if (admission && verdict.state !== OutputState.BUILT && object.size !== undefined) {
    held.release = await admission.acquire(object.size);
  }
  const [firstRead, sideProblem] = await Promise.all([
    decidedByEvent
      ? NOT_MODIFIED
      : store.get(object.bucket, object.key, {
          ...(verdict.state === OutputState.BUILT ? { ifNoneMatch: verdict.sourceEtag } : {}),
        }),
    verdict.state === OutputState.BUILT && listed ? checkListedSideOutputs(worker, store, object, listed) : undefined,
  ]);
  let input = firstRead;
  if (input.status === 'not-modified' && verdict.state === OutputState.BUILT && sideProblem) {
    logger.info('rebuilding output: a side object it lists was changed', { outputKey, sideOutput: sideProblem });
    input = await store.get(object.bucket, object.key);
  }
  if (input.status === 'ok' && maxInputBytes !== undefined && input.contentLength > maxInputBytes) {
    input.body.destroy();
    refuseTooLarge(object, input.contentLength, maxInputBytes);
  }
  if (admission && input.status === 'ok' && !held.release) {
    // A body arrived unreserved (an event without a size, or the input changed): take its size now,
    // or, when the budget is full, close it and read again once admitted (an unread response
    // would meet the SDK's idle socket timeout while it waits).
    const now = admission.tryAcquire(input.contentLength);
    if (now) held.release = now;
    else {
      input.body.destroy();
      held.release = await admission.acquire(input.contentLength);
      input = await store.get(object.bucket, object.key);
    }
  }
  return { input, sideProblem };
}

/** The outcome of a round that found the output valid and current: nothing written. */
export function doneOutcome(
  worker: WorkerDefinition,
  object: S3ObjectEvent,
  judged: Judged,
  verdict: Judgement & { readonly state: typeof OutputState.BUILT },
): ObjectOutcome {
  const { head, outputKey, decidedByEvent } = judged;
  return {
    status: 'skipped',
    reason: decidedByEvent
      ? `already done: output is valid and built from the event's content (input ETag ${verdict.sourceEtag})`
      : `already done: output is valid and current (input ETag ${verdict.sourceEtag})`,
    outputKey,
    outputEtag: verdict.etag,
    source: { bucket: object.bucket, key: object.key, etag: verdict.sourceEtag },
    output: {
      bucket: worker.outputBucket,
      key: outputKey,
      etag: verdict.etag,
      sha256: recordedSha256(head?.metadata[MetadataKey.INTEGRITY]) ?? '',
      summary: readSummary(head?.metadata ?? {}),
      sourceEtag: verdict.sourceEtag,
    },
  };
}

/** Throws InputTooLargeError for an input above the limit (its size from the event or the GET). */
function refuseTooLarge(object: S3ObjectEvent, size: number | undefined, maxInputBytes: number | undefined): void {
  if (size === undefined || maxInputBytes === undefined || size <= maxInputBytes) return;
  const mib = formatSize;
  throw new InputTooLargeError(
    `s3://${object.bucket}/${object.key} is ${mib(size)} (${size} bytes), above the worker's limit of ${mib(maxInputBytes)} ` +
      `(MAX_INPUT_BYTES ${maxInputBytes}, the largest input one invocation finishes at the function's memory and timeout): ` +
      'nothing was read or written; raise the function memory and timeout (maxInputBytes in the stack sizes both, ' +
      'src/sizing/sizeWorker.ts) or split the input, then redrive this message',
  );
}
