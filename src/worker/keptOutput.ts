import { OutputState } from '../done/judgeOutput.js';
import type { S3ObjectEvent } from '../intake/parseS3Event.js';
import { type S3ObjectStore, WriteStatus } from '../s3/S3ObjectStore.js';
import type { KeptOutput } from './builtOutput.js';
import type { Judged, OutputHeadOrNone } from './doneCheck.js';
import type { AttemptResult } from './roundResult.js';

/*
 * The output a create-first round built and could not create (its `If-None-Match: *` answered 412:
 * an output is in place, mostly an overwrite's). processObject keeps it for the next round, which
 * runs the done-check's HEAD and then, instead of reading and transforming the input again,
 * publishes the kept bytes with `If-Match` on the ETag that HEAD saw, when:
 *
 * 1. the output in place is not already the kept content's, or proven current by the event (then
 *    the ordinary done-check decides, as it would without a kept output), and
 * 2. the input still has the ETag the kept output was built from: one conditional GET
 *    (`If-None-Match: <that ETag>`) answers 304 with no body. Anything else (the input changed or
 *    was deleted since the create read it) drops the kept output, and the round goes on as an
 *    ordinary one. No change made before that GET can be published over: the kept bytes go out only
 *    when the input is, at that GET, the content they were built from.
 *
 * The closing check after the publish (processObject's step 6) stays: the input may change, and
 * change back, between that GET and the publish, and a delivery of the older bytes may then have
 * found the older output done before this round replaced it.
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

/** Whether the input still has the ETag the kept output was built from: a conditional GET, 304 when it has. */
export async function inputStillKept(kept: KeptOutput, object: S3ObjectEvent, store: S3ObjectStore): Promise<boolean> {
  const now = await store.get(object.bucket, object.key, { ifNoneMatch: kept.source.etag });
  if (now.status === 'ok') now.body.destroy();
  return now.status === 'not-modified';
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
