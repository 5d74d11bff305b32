import { Readable } from 'node:stream';
import { eventProvesCurrent } from '../done/eventProvesCurrent.js';
import { recordedSha256 } from '../done/integrity.js';
import { type Judgement, judgeOutput, OutputState } from '../done/judgeOutput.js';
import { MetadataKey, publishedSideOutputs, readSummary, type SourceIdentity } from '../done/outputMetadata.js';
import { InputTooLargeError, PublishConflictError, WorkerConfigurationError } from '../errors.js';
import type { S3ObjectEvent } from '../intake/parseS3Event.js';
import { type Logger, silentLogger } from '../logging/logger.js';
import { withFields } from '../logging/withFields.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';
import { OutputWriter } from '../publish/OutputWriter.js';
import { type GetResult, type S3ObjectStore, type WriteCondition, WriteStatus } from '../s3/S3ObjectStore.js';
import { FirstRunPath, type FirstRunPolicy } from './adaptiveFirstRun.js';
import type { WorkerDefinition } from './defineWorker.js';
import { outsideInputs } from './inputScope.js';
import type { ObjectOutcome } from './ObjectOutcome.js';
import { formatSize, type ReadDeadline, ReadGuard } from './readGuard.js';
import { removeOutputs } from './removeOutputs.js';
import {
  checkListedSideOutputs,
  type FinalOutput,
  removeStaleSideOutputs,
  SideOutputWriters,
  sweepSideOutputs,
} from './sideOutputs.js';
import { createTransformInput } from './transformInput.js';

// The outcome types live in their own module (removeOutputs.ts needs them too, and must not import this one).
export type { ObjectOutcome, OutputDescription } from './ObjectOutcome.js';

/** Options for {@link processObject}. */
export interface ProcessObjectOptions {
  readonly store: S3ObjectStore;
  /** @default silentLogger */
  readonly logger?: Logger;
  /**
   * How many times to start over after losing a publish race (412) or a multipart conflict (409)
   * before giving up with a retryable {@link PublishConflictError}.
   * @default 4
   */
  readonly maxRounds?: number;
  /**
   * This call is provably the first delivery of its event (the batch handler decides it with
   * isFreshDelivery: the message's first receive, and younger than one invocation's time limit).
   * Only then may the event's eTag alone prove the output current (src/done/eventProvesCurrent.ts).
   * Otherwise an earlier attempt may have died anywhere: after its publish and before its closing
   * check (so the done-check asks S3 about the input, as that check would have), or between a side
   * output and the main output (so side objects the final output does not list are removed).
   * @default false: the full done-check, for a caller that cannot tell
   */
  readonly freshDelivery?: boolean;
  /**
   * This delivery is S3's own first delivery of an ObjectCreated event (the batch handler decides it:
   * a fresh delivery that carries the event's time; rerun's own messages never do). The first round
   * then skips the done-check and creates the output at once with `If-None-Match: *`: a new object
   * costs its GET and its PUT, with no round trip before the work. A 412 means an output is there (an
   * overwrite, or a duplicate delivery): the round is a lost race, and the next one runs the
   * done-check, which finds it done or replaces it. Only for an event that gives the input's size,
   * at most `CREATE_FIRST_MAX_BYTES`; the worker's `firstRun: 'check'` turns it off, and its
   * `firstRun: 'adaptive'` (the default) asks `firstRunPolicy` per delivery.
   * @default false: the done-check first
   */
  readonly createFirst?: boolean;
  /**
   * Chooses, for the worker's `firstRun: 'adaptive'`, whether a delivery that may create first
   * (`createFirst`) does, and learns from what the first round found (an output in place or not) and
   * what the delivery ended with (src/worker/adaptiveFirstRun.ts). The batch handler keeps one per
   * sandbox. Either answer is safe: it only picks between two paths that are each correct.
   * @default none: 'adaptive' creates first, as a policy that has learnt nothing would
   */
  readonly firstRunPolicy?: FirstRunPolicy;
  /**
   * Every removal of a deleted input looks again once every build that read it before the delete has
   * ended (the batch handler's do: src/batch/removalLookAgain.ts). Then an output this call *created*
   * needs no closing check of the input (step 6): the only way the input can have changed under a
   * create and stay unseen is a delete, and the look again removes what the create left. A replace
   * still closes with the check (a revert to older bytes is no delete).
   * @default false: step 6 after every publish
   */
  readonly removalsLookAgain?: boolean;
  /**
   * Admits the transform of an input by its size (see src/batch/MemoryBudget.ts), so that the
   * done-checks of a batch can all run at once while transforms share the function's memory. The
   * done-check itself is never held back: a reservation is taken only before reading a body.
   * @default none: every transform starts at once
   */
  readonly admission?: TransformAdmission;
  /**
   * The largest input one invocation can finish (the stack derives it from the function's memory,
   * timeout and the measured throughput: src/sizing/sizeWorker.ts). A larger one is refused before
   * its body is read, from the event's `size` or the GET's ContentLength, with a non-retryable
   * InputTooLargeError that names the limit and the setting to change: without it such an input
   * times out on every receive until the DLQ.
   * @default no limit
   */
  readonly maxInputBytes?: number;
  /**
   * The invocation's time: while the transform reads, a read that would run into the function's
   * timeout stops before it with a classified outcome (src/worker/readGuard.ts): non-retryable
   * InputTooLargeError when the input cannot finish even in a fresh invocation, else a retryable
   * DeadlineNearError. With maxInputBytes, the decoded bytes a transform reports
   * (`countDecoded`) are judged by the same limit as the stored size.
   * @default none: no time guard
   */
  readonly deadline?: ReadDeadline;
}

/** The names of {@link ProcessObjectOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const PROCESS_OBJECT_OPTION_NAMES = {
  admission: true,
  createFirst: true,
  deadline: true,
  firstRunPolicy: true,
  freshDelivery: true,
  logger: true,
  maxInputBytes: true,
  maxRounds: true,
  removalsLookAgain: true,
  store: true,
} as const satisfies OptionNames<ProcessObjectOptions>;

/** What {@link ProcessObjectOptions.admission} needs: a memory budget keyed by input size. */
export interface TransformAdmission {
  /** Reserves at once if possible. */
  tryAcquire(contentLength: number | undefined): (() => void) | undefined;
  /** Waits for a reservation; may throw (e.g. the deadline came near while waiting). */
  acquire(contentLength: number | undefined): Promise<() => void>;
}

interface HeldMemory {
  release?: () => void;
}

/**
 * The largest input whose first delivery creates at once (options.createFirst). Creating first saves
 * one round trip (a HEAD, about 25 ms) on a new object and costs a whole read and transform on an
 * overwrite, whose create answers 412: at the normalizer's measured 35 MiB per CPU second, reading
 * 1 MiB costs about one HEAD, and 8 MiB about eight. Above this an input is read once, after the HEAD.
 */
export const CREATE_FIRST_MAX_BYTES = 8 * 1024 * 1024;

/** The input is known to be at the output's source ETag without asking S3 (see eventProvesCurrent). */
const NOT_MODIFIED: GetResult = { status: 'not-modified' };

/**
 * Brings one input's output up to date, idempotently. Running it twice has the effect of running
 * it once; running it concurrently with itself is safe.
 *
 * 0. S3's own first delivery of an event (options.createFirst) skips step 1 in its first round: it
 *    reads and transforms the input and creates the output with `If-None-Match: *` (step 3), so a
 *    new object costs a GET and a PUT. A 412 is a lost race (step 4): the next round runs step 1.
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
  const finish = (outcome: ObjectOutcome) => {
    // What the delivery ended with in place: a key this sandbox built checks first next time.
    policy?.settle(object, outcome.output?.sourceEtag);
    return racesLost > 0 ? { ...outcome, publishRacesLost: racesLost } : outcome;
  };
  for (let round = 1; round <= maxRounds; round++) {
    // Memory reserved for this round's transform (options.admission), given back when the round ends.
    const held: HeldMemory = {};
    let result: AttemptResult;
    try {
      const skipDoneCheck = createFirst && round === 1;
      result = await attempt(worker, judged, logger, { ...options, skipDoneCheck }, held);
    } finally {
      held.release?.();
    }
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

/**
 * How one round ended: an outcome with the side outputs the final output lists and how many side
 * objects (or outputs listing one) this round changed, or a lost race with the side objects it created.
 */
type AttemptResult =
  | {
      readonly outcome: ObjectOutcome;
      readonly final: FinalOutput;
      readonly changedSideObjects: number;
      /** The input did not exist when this round read it. */
      readonly inputGone?: boolean;
      /** With inputGone: the output in place names this input and lists a side object that is missing or changed. */
      readonly listedSideGone?: string;
      /** This round published the output with `If-None-Match: *`: there was none before it. */
      readonly created?: boolean;
      /** The round's done-check found an output at the key (false when it skipped the check and created). */
      readonly outputWasInPlace: boolean;
    }
  | { readonly lostRace: true; readonly created: Readonly<Record<string, string>> };

/** What one round is given besides the worker, the event and the logger. */
interface RoundOptions extends Pick<ProcessObjectOptions, 'store' | 'admission' | 'maxInputBytes' | 'deadline'> {
  /** Create at once, as if the done-check had found no output (options.createFirst, first round only). */
  readonly skipDoneCheck: boolean;
}

/**
 * One round: judge the output in place, read the input (or learn from a 304 that it is current),
 * transform it into new outputs, publish them, and tidy what the replaced output left.
 */
async function attempt(
  worker: WorkerDefinition,
  object: S3ObjectEvent,
  logger: Logger,
  limits: RoundOptions,
  held: HeldMemory,
): Promise<AttemptResult> {
  const judged = await judge(worker, object, limits);
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
      : describe(verdict).was;
  if (verdict.state !== OutputState.MISSING) logger.info('rebuilding output', { outputKey, was });
  const built = await transform(worker, object, source, input, limits);
  const published = await publish(built, source, judged.head, limits.store);
  if ('lostRace' in published) return published;
  return tidy(worker, object, { judged, built, source, was, published }, limits.store, logger);
}

/** What the done-check of one round found (skipped on a new object's first delivery: then nothing). */
interface Judged {
  readonly outputKey: string;
  readonly head: OutputHeadOrNone;
  readonly verdict: Judgement;
  readonly listed: ReadonlyMap<string, string> | undefined;
  /** The output in place, when this round writes nothing (no output at all lists nothing). */
  readonly inPlace: FinalOutput;
  /** The event alone proves the output current (eventProvesCurrent.ts): no conditional GET. */
  readonly decidedByEvent: boolean;
}

type OutputHeadOrNone = Awaited<ReturnType<S3ObjectStore['head']>>;

async function judge(worker: WorkerDefinition, object: S3ObjectEvent, limits: RoundOptions): Promise<Judged> {
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
async function readInput(
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
function doneOutcome(
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

/** A transform's result: its summary and the writers that hold the outputs, not yet published. */
interface Built {
  readonly summary: Record<string, string | number>;
  readonly main: OutputWriter;
  readonly sides: SideOutputWriters;
}

/** Runs the worker's transform over the input, streaming into writers for the main and side outputs. */
async function transform(
  worker: WorkerDefinition,
  object: S3ObjectEvent,
  source: SourceIdentity,
  input: Extract<GetResult, { status: 'ok' }>,
  limits: RoundOptions,
): Promise<Built> {
  const { maxInputBytes, store } = limits;
  const writerFor = (key: string) =>
    new OutputWriter({
      store,
      bucket: worker.outputBucket,
      key,
      source,
      codeVersion: worker.codeVersion,
      ...(worker.partBytes ? { partBytes: worker.partBytes } : {}),
      ...(worker.contentType ? { contentType: worker.contentType } : {}),
    });
  const main = writerFor(worker.outputKey(object));
  const sides = new SideOutputWriters(worker, object, writerFor);
  const guard = new ReadGuard({
    object,
    storedBytes: input.contentLength,
    ...(maxInputBytes !== undefined ? { maxInputBytes } : {}),
    ...(limits.deadline ? { deadline: limits.deadline } : {}),
  });
  try {
    const summary = await worker.transform(
      createTransformInput({
        source,
        body: guard.active ? guardedBody(input.body, guard) : input.body,
        contentLength: input.contentLength,
        countDecoded: (bytes) => guard.countDecoded(bytes),
      }),
      { output: main, side: sides.side },
    );
    return { summary, main, sides };
  } catch (error) {
    input.body.destroy();
    await Promise.allSettled([main.abort(), sides.abortAll()]);
    throw error;
  } finally {
    guard.end();
  }
}

/**
 * Publishes side outputs first (src/worker/sideOutputs.ts), then the main output, the commit point,
 * which lists each: `If-None-Match: *` where the done-check saw none, else `If-Match` on the ETag it
 * saw. Whatever fails from here on, no multipart upload of this round is left open.
 */
async function publish(
  built: Built,
  source: SourceIdentity,
  head: OutputHeadOrNone,
  store: S3ObjectStore,
): Promise<
  | { readonly etag: string; readonly listed: Readonly<Record<string, string>> }
  | Extract<AttemptResult, { lostRace: true }>
> {
  const { main, sides, summary } = built;
  let sideOutputs: Awaited<ReturnType<SideOutputWriters['publishAll']>>;
  let published: Awaited<ReturnType<OutputWriter['publish']>> | undefined;
  try {
    sideOutputs = await sides.publishAll(store, source);
    const condition: WriteCondition = head ? { ifMatch: head.etag } : { ifNoneMatch: '*' };
    // The store retries a single PutObject's 409; a multipart 409 (or one left over) is answered by
    // starting over with a new writer, as a lost race is.
    if (!sideOutputs.lost) published = await main.publish(condition, summary, sideOutputs.listed);
  } catch (error) {
    await Promise.allSettled([main.abort(), sides.abortAll()]);
    throw error;
  }
  if (published?.status !== WriteStatus.WRITTEN) {
    await main.abort();
    return { lostRace: true, created: sideOutputs.created };
  }
  return { etag: published.etag, listed: sideOutputs.listed };
}

/**
 * After a publish: removes the side objects the replaced output listed and the new one does not,
 * and outputs at keys of earlier releases; describes what was written.
 */
async function tidy(
  worker: WorkerDefinition,
  object: S3ObjectEvent,
  round: {
    readonly judged: Judged;
    readonly built: Built;
    readonly source: SourceIdentity;
    readonly was: string;
    readonly published: { readonly etag: string; readonly listed: Readonly<Record<string, string>> };
  },
  store: S3ObjectStore,
  logger: Logger,
): Promise<AttemptResult> {
  const { judged, built, source, was, published } = round;
  const { head, verdict, outputKey } = judged;
  const listedNow = Object.keys(published.listed);
  const staleRemoved = head ? await removeStaleSideOutputs(worker, store, object, listedNow, judged.listed, logger) : 0;
  await removeLegacyOutputs(worker, store, object, logger);
  const { summary } = built;
  const outcome: ObjectOutcome = {
    status: 'processed',
    reason: `${verdict.state === OutputState.MISSING ? 'output created' : `output replaced (${was})`}${describeSummary(summary)}`,
    outputKey,
    source,
    summary,
    outputEtag: published.etag,
    output: {
      bucket: worker.outputBucket,
      key: outputKey,
      etag: published.etag,
      sha256: built.main.contentChecksum ?? '',
      summary: Object.fromEntries(Object.entries(summary).map(([k, v]) => [k, String(v)])),
      sourceEtag: source.etag,
    },
  };
  return {
    outcome,
    final: { sourceEtag: source.etag, sideOutputs: new Map(Object.entries(published.listed)) },
    changedSideObjects: listedNow.length + staleRemoved,
    created: head === undefined,
    outputWasInPlace: head !== undefined,
  };
}

/**
 * Removes what earlier releases wrote for this input at other keys (worker.legacyOutputKeys), now that
 * the output is published at its current key: left in place, a day would count the input twice.
 */
async function removeLegacyOutputs(
  worker: WorkerDefinition,
  store: S3ObjectStore,
  object: S3ObjectEvent,
  logger: Logger,
): Promise<void> {
  const current = new Set([worker.outputKey(object), ...Object.values(worker.sideOutputs ?? {}).map((k) => k(object))]);
  for (const key of worker.legacyOutputKeys?.(object) ?? []) {
    if (current.has(key)) continue;
    // Conditional like every delete (the bucket policy requires s3:if-match): on the ETag seen now.
    const legacy = await store.head(worker.outputBucket, key);
    if (!legacy) continue;
    await store.deleteIfMatch(worker.outputBucket, key, legacy.etag);
    logger.info('removed an output at its earlier key', { key });
  }
}

/**
 * The body as the transform reads it: the same bytes, each chunk counted by the guard first, so that
 * a read running into the deadline stops with the guard's error (the stream fails with it).
 */
function guardedBody(body: Readable, guard: ReadGuard): Readable {
  async function* counted(): AsyncGenerator<Uint8Array> {
    for await (const chunk of body as AsyncIterable<Uint8Array | string>) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      guard.countRaw(bytes.length);
      yield bytes;
    }
  }
  return Readable.from(counted(), { objectMode: false });
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

/** `: records 12, quarantined 3` — the transform's summary, for people reading logs and tables. */
function describeSummary(summary: Readonly<Record<string, string | number>>): string {
  const entries = Object.entries(summary);
  return entries.length === 0 ? '' : `: ${entries.map(([k, v]) => `${k} ${v}`).join(', ')}`;
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
