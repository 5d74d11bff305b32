import { OutputState } from '../done/judgeOutput.js';
import { WriteStatus } from '../s3/S3ObjectStore.js';
import type { KeptOutput } from './builtOutput.js';
import type { Judged, OutputHeadOrNone } from './doneCheck.js';
import type { AttemptResult } from './roundResult.js';

/*
 * The output a create-first round built and could not create (its `If-None-Match: *` answered 412:
 * an output is in place, mostly an overwrite's). processObject keeps it for the next round, which
 * runs the done-check's HEAD and then, instead of reading and transforming the input again,
 * publishes the kept bytes with `If-Match` on the ETag that HEAD saw, unless the output in place is
 * already the kept content's, or proven current by the event (then the ordinary done-check decides,
 * as it would without a kept output).
 *
 * No read of the input comes between the HEAD and that publish: the closing check after it
 * (processObject's step 6, or with a side output the side-output protocol's closing done-check,
 * src/worker/sideOutputs.ts step 5) asks S3 whether the input still has the ETag the kept bytes were
 * built from, and builds again (or removes the outputs of a deleted input) when it has not. A GET
 * before the publish could not spare that check (the input may change, and change back, between any
 * such GET and the publish: the revert race), and every change it could see the closing check sees
 * too. What it would spare is a window: an input changed since the create's read may have had its
 * own output published before this round's HEAD, and the kept bytes then replace that newer output
 * until the closing check (or, if this call dies first, the redelivery of its message, which judges
 * without the event's eTag) builds the input as it is. The delivery's outcome, and so its
 * notification, is that last build's. An output removed since the 412 (its input deleted) is created
 * with `If-None-Match: *`, as a create-first round's would be, and removed by the removal's look
 * again (src/batch/removalLookAgain.ts) where no closing check follows a create.
 *
 * Only a single-part main output is kept (its bytes are in memory already; a multipart upload that
 * lost is aborted as before), only when every side output was published (they are not written
 * again: the kept output lists the ETags they were published with, and the side-output protocol's
 * closing done-check, src/worker/sideOutputs.ts step 5, still follows), and only from the first
 * round of a create-first delivery, whose input is at most CREATE_FIRST_MAX_BYTES: that bounds what
 * is held between the two rounds.
 */

/**
 * Whether the output the done-check judged is one the kept output may replace: not built from the
 * kept content, and not proven current by the event (eventProvesCurrent.ts).
 */
export function mayReplaceWithKept(judged: Judged, kept: KeptOutput): boolean {
  const { verdict } = judged;
  if (verdict.state !== OutputState.BUILT) return true;
  return !judged.decidedByEvent && verdict.sourceEtag !== kept.source.etag;
}

/**
 * Publishes the kept main output with `If-Match` on the ETag the done-check's HEAD saw (or
 * `If-None-Match: *` when it saw none), listing the side outputs published with it. Another 412 is a
 * lost race (the next round starts over with the ordinary done-check); it created no side object.
 */
export async function publishKept(
  kept: KeptOutput,
  head: OutputHeadOrNone,
): Promise<
  | { readonly etag: string; readonly listed: Readonly<Record<string, string>> }
  | Extract<AttemptResult, { lostRace: true }>
> {
  const { main, summary } = kept.built;
  const condition = head ? { ifMatch: head.etag } : { ifNoneMatch: '*' as const };
  const published = await main.publish(condition, summary, kept.listed);
  if (published.status !== WriteStatus.WRITTEN) return { lostRace: true, created: {} };
  return { etag: published.etag, listed: kept.listed };
}
