import { PublishConflictError, WorkerConfigurationError } from '../errors.js';
import type { S3ObjectEvent } from '../intake/parseS3Event.js';
import { type Logger, silentLogger } from '../logging/logger.js';
import { withFields } from '../logging/withFields.js';
import { checkOptions } from '../options/checkOptions.js';
import { FirstRunPath } from './adaptiveFirstRun.js';
import type { KeptOutput } from './builtOutput.js';
import type { WorkerDefinition } from './defineWorker.js';
import { outsideInputs } from './inputScope.js';
import type { ObjectOutcome } from './ObjectOutcome.js';
import { type HeldMemory, PROCESS_OBJECT_OPTION_NAMES, type ProcessObjectOptions } from './processObjectOptions.js';
import { attempt } from './publishRound.js';
import { removeOutputs } from './removeOutputs.js';
import type { AttemptResult } from './roundResult.js';
import { sweepSideOutputs } from './sideOutputs.js';

// The outcome types live in their own module (removeOutputs.ts needs them too, and must not import this one).
export type { ObjectOutcome, OutputDescription } from './ObjectOutcome.js';

/**
 * The largest input whose first delivery creates at once (options.createFirst). Creating first saves
 * one round trip (a HEAD, about 25 ms) on a new object and costs a whole read and transform when its
 * create answers 412 and the output in place is done (S3's duplicate; an overwrite keeps what the
 * create built, src/worker/keptOutput.ts, which this limit bounds in memory): at the normalizer's
 * measured 35 MiB per CPU second, reading 1 MiB costs about one HEAD, and 8 MiB about eight. Above
 * this an input is read once, after the HEAD.
 */
export const CREATE_FIRST_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Brings one input's output up to date, idempotently. Running it twice has the effect of running
 * it once; running it concurrently with itself is safe.
 *
 * 0. S3's own first delivery of an event (options.createFirst) skips step 1 in its first round: it
 *    reads and transforms the input and creates the output with `If-None-Match: *` (step 3), so a
 *    new object costs a GET and a PUT. A 412 is a lost race (step 4): the next round runs step 1,
 *    and where that finds an output to replace, it publishes the output this round built, with
 *    `If-Match` and no second read (step 6 then asks whether the input is still what it was built
 *    from): an overwrite reads and transforms its input once (src/worker/keptOutput.ts).
 * 1. Done-check: HEAD the output (with the stored checksum) and judge it (judgeOutput.ts).
 * 2. On a fresh delivery (options.freshDelivery), a valid output whose source ETag is the event's
 *    eTag is done: a duplicate costs the HEAD alone (eventProvesCurrent.ts says why that is safe,
 *    and why only on a fresh delivery). Otherwise the output is current if the input still has the
 *    ETag it was built from: a conditional GET (`If-None-Match: <that ETag>`) answers 304 with no
 *    body, so such a rerun costs two requests and reads nothing. Otherwise the same GET returns the
 *    current content: the output always reflects the input as it is now, so a late or replayed
 *    event for older content cannot regress it.
 * 3. Transform while streaming to the outputs; publish side outputs (their protocol:
 *    src/worker/sideOutputs.ts), then the main output (the commit point) with `If-None-Match: *`
 *    (create) or `If-Match: <etag seen in step 1>` (replace).
 * 4. 412 means another writer got there first (as does a 409 the store's retries did not absorb,
 *    or any 409 on a multipart completion): start over from step 1, which then finds the other
 *    writer's output and either accepts it as done or replaces it with the current content.
 * 5. A call that replaced or removed a side object, or published an output that lists one, runs
 *    the done-check once more before it returns, and rebuilds if a listed side object is gone or
 *    changed (the side-output protocol's step 5, src/worker/sideOutputs.ts, says why).
 * 6. A call that published asks S3 once more whether the input still has the ETag it built from
 *    (a conditional GET, 304 when it does): a revert to older bytes may have found the older output
 *    done before this call replaced it. Changed: build again; deleted: remove the outputs. After a
 *    create this is skipped where removals look again (options.removalsLookAgain): no output existed
 *    for a revert to have found done, so only a delete can have gone unseen.
 * 7. The input gone (a round's GET answers 404), on a redelivery: side objects of this input that
 *    the output in place does not list are removed (left by an attempt killed before its main
 *    output), and an output that names this input and lists a side object that is gone is removed
 *    with its side objects, as a delete event would (the side-output protocol's step 6,
 *    src/worker/sideOutputs.ts, says why neither races a publisher).
 *
 * @example
 * const outcome = await processObject(worker, { bucket: 'in', key: 'incoming/a.csv', eventName: 'ObjectCreated:Put' },
 *   { store: new S3ObjectStore(s3) });
 */
export async function processObject(
  worker: WorkerDefinition,
  object: S3ObjectEvent,
  options: ProcessObjectOptions,
): Promise<ObjectOutcome> {
  checkOptions('processObject', options, PROCESS_OBJECT_OPTION_NAMES, (m) => new WorkerConfigurationError(m));
  const skip = skipReason(worker, object);
  if (skip) return { status: 'skipped', reason: skip };

  const maxRounds = options.maxRounds ?? 4;
  const logger = withFields(options.logger ?? silentLogger, {
    worker: worker.name,
    bucket: object.bucket,
    key: object.key,
  });
  // Side objects this call created in rounds that then lost the publish race: nothing lists them.
  const orphans = new Map<string, string>();
  let racesLost = 0;
  const fresh = options.freshDelivery === true;
  // A new object's first delivery writes before it reads the output (options.createFirst), when
  // the input is small enough that reading it in vain (it was an overwrite) costs less than the HEAD
  // saves, and the worker's firstRun allows it ('adaptive': the policy's answer for this object).
  const mayCreateFirst =
    fresh && options.createFirst === true && object.size !== undefined && object.size <= CREATE_FIRST_MAX_BYTES;
  const firstRun = worker.firstRun ?? 'adaptive';
  const policy = firstRun === 'adaptive' ? options.firstRunPolicy : undefined;
  let createFirst = mayCreateFirst && firstRun !== 'check';
  if (mayCreateFirst && policy) {
    createFirst = (await policy.choose(object)) === FirstRunPath.CREATE;
    logger.debug('first run', { path: createFirst ? FirstRunPath.CREATE : FirstRunPath.CHECK });
  }
  let sweepDebris = !fresh;
  // The event the next round judges by, and the outcome of the round that published or found the
  // output done (a closing check that finds it done does not replace it). A delivery that may
  // repeat a crashed writer's does not judge by the event's eTag: that writer's closing check
  // (step 6) may never have run.
  let judged = fresh ? object : withoutETag(object);
  let settled: ObjectOutcome | undefined;
  /** The input content this call last published an output of, if it did. */
  let published: string | undefined;
  /** What the create-first round built and could not create, for the next round (keptOutput.ts). */
  let kept: KeptOutput | undefined;
  const finish = (outcome: ObjectOutcome) => {
    // What the delivery ended with in place: a key this sandbox built checks first next time.
    policy?.settle(object, outcome.output?.sourceEtag);
    return racesLost > 0 ? { ...outcome, publishRacesLost: racesLost } : outcome;
  };
  for (let round = 1; round <= maxRounds; round++) {
    // Memory reserved for this round's transform (options.admission), given back when the round ends.
    const held: HeldMemory = {};
    let result: AttemptResult;
    const skipDoneCheck = createFirst && round === 1;
    try {
      const limits = { ...options, skipDoneCheck, eventEtag: object.eTag };
      result = await attempt(worker, judged, logger, limits, held, kept);
    } finally {
      held.release?.();
    }
    // Kept from the create-first round only, whose input is at most CREATE_FIRST_MAX_BYTES: the bound
    // on what is held in memory, past the round's reservation, until the next round publishes it.
    kept = skipDoneCheck && 'lostRace' in result ? result.kept : undefined;
    // What S3's fresh delivery found at the output key, the rate the adaptive first run keeps: the
    // create's 412 (a lost race) or the HEAD's answer.
    if (round === 1 && mayCreateFirst && policy) {
      policy.observe(object, { outputInPlace: 'lostRace' in result || result.outputWasInPlace });
    }
    if ('lostRace' in result) {
      for (const [name, etag] of Object.entries(result.created)) orphans.set(name, etag);
      logger.info('publish lost a race to another writer; re-running the done-check', { round });
      racesLost++;
      continue;
    }
    if (settled === undefined || result.outcome.status === 'processed') settled = result.outcome;
    if (result.outcome.status === 'processed') published = result.final.sourceEtag;
    else if (published !== undefined && result.inputGone) {
      // Step 6, the input gone: deleted while this call built its output.
      logger.info('the input was deleted while its output was built: removing the outputs');
      return finish(await removeAfterDelete(worker, object, options, logger, DELETED_WHILE_BUILT));
    } else if (result.inputGone && result.listedSideGone !== undefined) {
      // Step 7: an output of a deleted input that can never be done again (sideOutputs.ts, step 6).
      logger.info('the input was deleted and its output lists a side object that is gone: removing the outputs', {
        sideOutput: result.listedSideGone,
      });
      return finish(await removeAfterDelete(worker, object, options, logger, DELETED_SIDE_GONE));
    }
    let changedSideObjects = result.changedSideObjects;
    if (orphans.size > 0 || sweepDebris) {
      changedSideObjects += await sweepSideOutputs(worker, options.store, object, result, {
        orphans,
        debris: sweepDebris,
        logger,
      });
      orphans.clear();
      sweepDebris = false;
    }
    // The closing checks run without the event's eTag: they ask S3 about the input as it is now.
    judged = withoutETag(object);
    if (changedSideObjects > 0) {
      // Step 5: a full done-check once more (the output, the side objects it lists, the input).
      logger.debug('side objects changed: checking the output once more', { round });
      continue;
    }
    if (result.outcome.status !== 'processed' || published === undefined) return finish(settled);
    if (result.created && options.removalsLookAgain === true) return finish(settled);
    // Step 6: has the input changed while this round built from it? One conditional GET (304 when
    // not). It may have changed and changed back: an older delivery then found the output built
    // from those bytes done, before this round replaced it with the content in between.
    const now = await options.store.get(object.bucket, object.key, { ifNoneMatch: published });
    if (now.status === 'not-modified') return finish(settled);
    if (now.status === 'missing') {
      logger.info('the input was deleted while its output was built: removing the outputs');
      return finish(await removeAfterDelete(worker, object, options, logger, DELETED_WHILE_BUILT));
    }
    now.body.destroy();
    logger.info('the input changed while its output was built: building it again', { round });
  }
  throw new PublishConflictError(
    `Output for s3://${object.bucket}/${object.key} kept changing under concurrent writers (${maxRounds} rounds); ` +
      'the message will be retried.',
  );
}

/** The event without its eTag: the done-check then asks S3 whether the input still is what the output was built from. */
function withoutETag(object: S3ObjectEvent): S3ObjectEvent {
  const { eTag: _eTag, ...rest } = object;
  return rest;
}

const DELETED_WHILE_BUILT = 'input deleted while its output was built';
const DELETED_SIDE_GONE = 'input deleted and its output lists a side object that is gone';

/**
 * Removes the outputs of a deleted input, as its ObjectRemoved event would (src/worker/removeOutputs.ts:
 * conditional deletes, and an input that exists again is kept and rebuilt). Two callers:
 * - the input was deleted while this call built its output: that event may already have been
 *   handled, and then nothing else would remove what this call published;
 * - the output in place names the deleted input and lists a side object that is gone: a writer of the
 *   deleted content published it after its side object was removed as debris, and was killed before
 *   its closing check (sideOutputs.ts, step 6). It can never be done again.
 */
async function removeAfterDelete(
  worker: WorkerDefinition,
  object: S3ObjectEvent,
  options: ProcessObjectOptions,
  logger: Logger,
  why: string,
): Promise<ObjectOutcome> {
  const removal = await removeOutputs(
    worker,
    { bucket: object.bucket, key: object.key, eventName: 'ObjectRemoved:Delete' },
    { store: options.store, logger, rebuild: (o) => processObject(worker, o, options) },
  );
  return { ...removal, reason: `${why}: ${removal.reason}` };
}

function skipReason(worker: WorkerDefinition, object: S3ObjectEvent): string | undefined {
  const outside = outsideInputs(worker, object);
  if (outside) return outside;
  if (!object.eventName.startsWith('ObjectCreated:')) return `event ${object.eventName} does not create content`;
  if (object.key.endsWith('/')) return 'folder marker (key ends with "/")';
  return worker.skipReason?.(object);
}
