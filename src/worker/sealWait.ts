import { OutputState } from '../done/judgeOutput.js';
import { type UnsealedWriter, unsealedWriter } from '../done/sealInProgress.js';
import { SealInProgressError } from '../errors.js';
import type { S3ObjectEvent } from '../intake/parseS3Event.js';
import type { Logger } from '../logging/logger.js';
import type { WorkerDefinition } from './defineWorker.js';
import { type Judged, judge } from './doneCheck.js';
import type { RoundOptions } from './processObjectOptions.js';

/*
 * A seal in progress is not a death. A multipart output is completed, then sealed (OutputWriter.ts);
 * a delivery that HEADs it in between finds it unsealed. When its writer may still be alive
 * (src/done/sealInProgress.ts) the delivery waits for the seal with a few HEADs, then judges again;
 * when it cannot wait long enough it defers the message; only a writer that must be dead (an earlier
 * receive of the same message, or one that completed the upload a function timeout ago) has its
 * output rebuilt.
 */

/**
 * The pauses before each HEAD that looks for the seal, ms: five HEADs over 7.75 s. A seal is a
 * CreateMultipartUpload, one UploadPartCopy per 5 GiB and a completion, usually well under a second.
 */
export const SEAL_POLL_DELAYS_MS: readonly number[] = [250, 500, 1000, 2000, 4000];

/** What a round that found an unsealed output learnt about its writer: the round's `was` names it. */
export interface SealWaitResult {
  readonly judged: Judged;
  /** Set when the output is still unsealed and its writer must be dead: why it is rebuilt. */
  readonly writerDead?: string;
}

/**
 * Waits for the seal of an output that `judged` found unsealed while its writer may still be sealing
 * it: HEADs after the pauses of {@link SEAL_POLL_DELAYS_MS}, each only while it leaves twice the
 * deadline margin of the invocation (`limits.deadline`), and returns the first judgement that is no
 * longer such an output (sealed: done as any other; replaced or removed: judged as usual). Still
 * unsealed when its writer must be dead: returned with `writerDead` (rebuild). Still unsealed with
 * its writer possibly alive once the time is used: throws {@link SealInProgressError}, which defers
 * the message to when the writer must be dead. An output whose writer was an earlier receive of this
 * delivery's own SQS message (`limits.messageId`) is rebuilt at once, with no wait: that receive has
 * ended (src/done/sealInProgress.ts). Without `limits.deadline` (no function timeout is known) nothing
 * is waited for: the output is rebuilt, as before.
 */
export async function waitForSeal(
  worker: WorkerDefinition,
  object: S3ObjectEvent,
  first: Judged,
  limits: RoundOptions,
  logger: Logger,
): Promise<SealWaitResult> {
  const { deadline } = limits;
  if (!deadline) return { judged: first };
  const writerOf = (judged: Judged): UnsealedWriter | undefined =>
    judged.verdict.state === OutputState.INVALID
      ? unsealedWriter(
          judged.head,
          { source: object, codeVersion: worker.codeVersion, eventEtag: limits.eventEtag, messageId: limits.messageId },
          deadline.now(),
          deadline.timeLimitMs,
        )
      : undefined;
  let judged = first;
  let writer = writerOf(judged);
  if (!writer) return { judged };
  const started = deadline.now();
  const sleep = limits.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const fieldsOf = (w: UnsealedWriter) => ({
    outputKey: judged.outputKey,
    writerDeadAt: new Date(w.writerDeadAt).toISOString(),
  });
  const fields = fieldsOf(writer);
  let heads = 0;
  for (const pause of SEAL_POLL_DELAYS_MS) {
    if (!writer.mayBeSealing) break;
    // Never past this invocation's time: the record must still end, and be reported, before it.
    if (deadline.remainingTimeMs() - pause < 2 * deadline.marginMs) break;
    if (heads === 0)
      logger.info('output completed but not sealed yet; its writer may still be sealing it: waiting', fields);
    await sleep(pause);
    heads++;
    judged = await judge(worker, object, limits);
    writer = writerOf(judged);
    if (!writer) {
      logger.info('waited for the seal: judging the output again', {
        ...fields,
        heads,
        waitedMs: deadline.now() - started,
      });
      return { judged };
    }
  }
  if (writer.sameMessage) {
    // No clock needed: SQS hands this message out again only once its earlier receive has ended.
    logger.info('unsealed output written by an earlier receive of this same message, which is over: rebuilding it', {
      outputKey: judged.outputKey,
      heads,
    });
    return {
      judged,
      writerDead: 'never sealed, and its writer was an earlier receive of this same message, which has ended',
    };
  }
  if (!writer.mayBeSealing) {
    const why = `never sealed, and its writer must be dead (completed at ${new Date(writer.writerDeadAt - deadline.timeLimitMs).toISOString()}, more than a function timeout ago)`;
    logger.info('unsealed output whose writer must be dead: rebuilding it', { ...fieldsOf(writer), heads });
    return { judged, writerDead: why };
  }
  const last = fieldsOf(writer);
  const retryAfterSeconds = Math.max(1, Math.ceil((writer.writerDeadAt - deadline.now()) / 1000));
  logger.info('output still unsealed and its writer may be alive: deferring the message, not rebuilding', {
    ...last,
    heads,
    retryAfterSeconds,
  });
  throw new SealInProgressError(
    `output s3://${worker.outputBucket}/${judged.outputKey} is completed but not sealed yet, and its writer may still ` +
      `be sealing it (it must be dead by ${last.writerDeadAt}): not rebuilt, retried later`,
    retryAfterSeconds,
  );
}
