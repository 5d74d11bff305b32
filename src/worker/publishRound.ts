import { type Judgement, OutputState } from '../done/judgeOutput.js';
import type { SourceIdentity } from '../done/outputMetadata.js';
import type { S3ObjectEvent } from '../intake/parseS3Event.js';
import type { Logger } from '../logging/logger.js';
import type { KeptOutput } from './builtOutput.js';
import type { WorkerDefinition } from './defineWorker.js';
import { doneOutcome, judge, readInput } from './doneCheck.js';
import { mayReplaceWithKept, publishKept } from './keptOutput.js';
import type { HeldMemory, RoundOptions } from './processObjectOptions.js';
import type { AttemptResult } from './roundResult.js';
import { waitForSeal } from './sealWait.js';
import { tidy } from './tidyAfterPublish.js';
import { publish, transform } from './transformAndPublish.js';

/*
 * One round of processObject: the done-check (src/worker/doneCheck.ts), then, unless the output is
 * done or the input gone, the transform and publish (src/worker/transformAndPublish.ts) and the
 * tidying after it (src/worker/tidyAfterPublish.ts). The rounds and the closing checks between
 * them are processObject's (src/worker/processObject.ts).
 */

/**
 * One round: judge the output in place (waiting for the seal of one a live writer may still be
 * sealing), read the input (or learn from a 304 that it is current),
 * transform it into new outputs, publish them, and tidy what the replaced output left. With `kept`
 * (the output a create-first round built, src/worker/keptOutput.ts), an output that must be replaced
 * is replaced by it, without a read.
 */
export async function attempt(
  worker: WorkerDefinition,
  object: S3ObjectEvent,
  logger: Logger,
  limits: RoundOptions,
  held: HeldMemory,
  kept?: KeptOutput,
): Promise<AttemptResult> {
  // An output completed but not sealed yet, whose writer may be alive, is waited for (sealWait.ts).
  const { judged, writerDead } = await waitForSeal(worker, object, await judge(worker, object, limits), limits, logger);
  if (kept && mayReplaceWithKept(judged, kept)) {
    // The create's output, published without a second read: the closing check after it (processObject's
    // step 6, or the side-output protocol's step 5) asks whether the input is still what it was built from.
    const was = writerDead ? `invalid: ${writerDead}` : describe(judged.verdict).was;
    logger.info('replacing output with the one the create built', { outputKey: judged.outputKey, was });
    const published = await publishKept(kept, judged.head);
    if ('lostRace' in published) return published;
    const { built, source } = kept;
    return tidy(worker, object, { judged, built, source, was, published }, limits.store, logger);
  }
  const read = await readInput(worker, object, judged, limits, held, logger);
  const { verdict, outputKey } = judged;
  const { input } = read;
  if (input.status === 'not-modified' && verdict.state === OutputState.BUILT) {
    return {
      outcome: doneOutcome(worker, object, judged, verdict),
      final: judged.inPlace,
      changedSideObjects: 0,
      outputWasInPlace: true,
    };
  }
  if (input.status !== 'ok') {
    // The event is older than a delete: acknowledge it and write nothing.
    return {
      outcome: { status: 'skipped', reason: 'input no longer exists: nothing written', outputKey },
      final: judged.inPlace,
      changedSideObjects: 0,
      inputGone: true,
      ...(read.sideProblem !== undefined && verdict.state === OutputState.BUILT
        ? { listedSideGone: read.sideProblem }
        : {}),
      outputWasInPlace: judged.head !== undefined,
    };
  }
  const source: SourceIdentity = {
    bucket: object.bucket,
    key: object.key,
    etag: input.etag,
    ...(input.versionId ? { versionId: input.versionId } : {}),
  };
  // Why the output in place is not done: its state, or (for one built from this content) a side object.
  const was =
    read.sideProblem && verdict.state === OutputState.BUILT && verdict.sourceEtag === input.etag
      ? `a side object it lists was changed: ${read.sideProblem}`
      : writerDead
        ? `invalid: ${writerDead}`
        : describe(verdict).was;
  if (verdict.state !== OutputState.MISSING) logger.info('rebuilding output', { outputKey, was });
  const built = await transform(worker, object, source, input, limits);
  const published = await publish(built, source, judged.head, limits.store);
  if ('lostRace' in published) return published;
  return tidy(worker, object, { judged, built, source, was, published }, limits.store, logger);
}

function describe(verdict: Judgement): { was: string } {
  switch (verdict.state) {
    case OutputState.MISSING:
      return { was: 'missing' };
    case OutputState.BUILT:
      return { was: `stale: built from input ETag ${verdict.sourceEtag}` };
    default:
      return { was: `${verdict.state}: ${verdict.reason}` };
  }
}
