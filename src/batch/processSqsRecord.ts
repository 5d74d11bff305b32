import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSRecord } from 'aws-lambda';
import { isRerunErrorNamed, retryableOf } from '../errors.js';
import { IntakeKind, type IntakeResult, type S3ObjectEvent, sentByRerun } from '../intake/parseS3Event.js';
import { describeError, type Logger } from '../logging/logger.js';
import { withFields } from '../logging/withFields.js';
import type { S3ObjectStore } from '../s3/S3ObjectStore.js';
import type { FirstRunPolicy } from '../worker/adaptiveFirstRun.js';
import type { WorkerDefinition } from '../worker/defineWorker.js';
import { outsideInputs } from '../worker/inputScope.js';
import { type RecordOutcome, RecordStatus } from '../worker/outcomes.js';
import { type ObjectOutcome, processObject } from '../worker/processObject.js';
import type { ProcessObjectOptions, TransformAdmission } from '../worker/processObjectOptions.js';
import type { ReadDeadline } from '../worker/readGuard.js';
import { removeOutputs } from '../worker/removeOutputs.js';
import type { AfterOutputHook, AfterOutputResult } from './AfterOutputHook.js';
import { deferIfAsked, failedWithDeferral, inProcessWaitMs } from './deferMessage.js';
import { errorMessage } from './errorMessage.js';
import { isFreshDelivery } from './isFreshDelivery.js';
import { joinReasons } from './joinReasons.js';
import { lookAgainMessages, type PendingLookAgain, planLookAgain } from './removalLookAgain.js';
import { requeueRest, requeuesOf, type StoppedAt } from './requeueRest.js';
import { receiveCountOf } from './runBatch.js';
import { isFifo, type SourceQueues } from './sourceQueues.js';

/** What the handler's options decide about a record (SqsBatchHandlerOptions has them all). */
export interface RecordHandling {
  readonly worker: WorkerDefinition;
  readonly store: S3ObjectStore;
  readonly maxInputBytes?: number | undefined;
  readonly afterOutput?: AfterOutputHook | undefined;
  /** Chooses the first run of S3's fresh deliveries for an adaptive worker (ProcessObjectOptions.firstRunPolicy). */
  readonly firstRunPolicy?: FirstRunPolicy | undefined;
}

/** What every record of one invocation shares. */
export interface Invocation {
  /** When it started (the handler's clock). */
  readonly start: number;
  /** The time left when it started: at most the function's timeout. */
  readonly timeLimitMs: number;
  /** What an in-process wait must leave. */
  readonly reserveMs: number;
  readonly admission?: TransformAdmission;
  readonly deadline: ReadDeadline;
}

/** How the records of one invocation run: the handler's settings and the invocation's limits. */
export interface RecordRun {
  readonly options: RecordHandling;
  /** Where a deferral or a requeue goes: the record's own queue. */
  readonly queues: SourceQueues;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly context: Context;
  /** The invocation's logger; each record logs through a child with its message id. */
  readonly invocationLogger: Logger;
  readonly invocation: Invocation;
}

/** One message as its objects run: the record, its outcome's base, whether it was requeued, its logger. */
interface Delivery {
  readonly record: SQSRecord;
  readonly base: { readonly messageId: string; readonly receiveCount: number };
  readonly requeued: boolean;
  readonly logger: Logger;
  /** The look agains its deletions ask for, by S3 record: sent together once the records have run. */
  readonly lookAgains: Map<S3ObjectEvent, PendingLookAgain>;
}

/**
 * Runs one SQS message (its body already parsed into `intake`) to a classified outcome: an
 * s3:TestEvent is acknowledged, a body that is not an S3 event fails for good, and each S3 record
 * of the message runs in order (a deletion removes its outputs and, on a standard queue, looks
 * again later; every other event runs the worker), then `afterOutput`. An error that asks for a later retry is waited out within the
 * invocation when it fits, else the message is deferred. When the deadline comes near between
 * two records, or stops one, the records left are requeued as one new message (requeueRest.ts).
 *
 * @example
 * const outcome = await processSqsRecord(record, parseS3EventBody(record.body), run);
 */
export async function processSqsRecord(
  record: SQSRecord,
  intake: IntakeResult,
  run: RecordRun,
): Promise<RecordOutcome> {
  const { context } = run;
  const { deadline } = run.invocation;
  const base = { messageId: record.messageId, receiveCount: receiveCountOf(record) };
  const logger = withFields(run.invocationLogger, { messageId: record.messageId });
  if (intake.kind === IntakeKind.TEST_EVENT) {
    return {
      ...base,
      status: RecordStatus.SKIPPED,
      reason: 's3:TestEvent acknowledged (sent when notifications are set up)',
    };
  }
  if (intake.kind === IntakeKind.INVALID) {
    return { ...base, status: RecordStatus.FAILED, retryable: false, reason: `not an S3 event: ${intake.reason}` };
  }
  // A message this handler sent back to its queue (requeueRest) is never judged fresh. Records that
  // never started could not have published, so the event's eTag would be safe for them either way;
  // but the record the deadline stopped may have published in an earlier round of processObject
  // (before a closing check rebuilt it), and that round's own closing check never ran.
  const requeued = requeuesOf(record) !== undefined;
  const outcomes: ObjectOutcome[] = [];
  /** Per outcome: whether its success may supersede earlier failures of its input (see settledRecord). */
  const superseding: boolean[] = [];
  const notes: string[] = [];
  let effectsExecuted = 0;
  let current: { bucket: string; key: string } | undefined;
  let index = 0;
  /** Where the deadline stopped this message, when it did: the records from `index` on are not done. */
  let stopped: StoppedAt | undefined;
  const delivery: Delivery = { record, base, requeued, logger, lookAgains: new Map() };
  try {
    for (; index < intake.objects.length; index++) {
      const object = intake.objects[index] as (typeof intake.objects)[number];
      // Between the records of one message: one S3 event may carry hundreds of records. Without
      // this check the message runs into the timeout, which returns the whole batch and, after
      // maxReceiveCount, dead-letters it as "crashed or timed out" with no outcome logged.
      if (index > 0 && context.getRemainingTimeInMillis() < deadline.marginMs) {
        stopped = { index, why: `the function deadline came near (less than ${deadline.marginMs} ms left)` };
        break;
      }
      current = { bucket: object.bucket, key: object.key };
      // Judged before the object runs, at the moment its own freshness is judged: a long run must not
      // turn S3's fresh delivery into one that lists the failure index.
      const mayFollow = mayFollowAFailure(run, delivery, object);
      const { outcome, effect } = await runObject(run, object, current, delivery);
      outcomes.push(outcome);
      superseding.push(mayFollow);
      if (effect?.executed) effectsExecuted++;
      if (effect) notes.push(effect.note);
    }
  } catch (error) {
    // The deadline stopped this record (not started for memory, or its read ran short of time):
    // it fits a fresh invocation, so it is not a failure of the input (readGuard.ts).
    if (isRerunErrorNamed(error, 'DeadlineNearError')) stopped = { index, why: errorMessage(error), error };
    else return failedRecord(run, error, delivery, current);
  }
  // Sent once every record has run (or the deadline stopped them): a message of many deletions
  // costs a send or two, not one per record. A failed send returns the whole message (its removals
  // are idempotent), as a failed record does.
  try {
    const sent = await sendLookAgains(run, record, [...delivery.lookAgains.values()]);
    if (sent) notes.push(sent);
  } catch (error) {
    return failedRecord(run, error, delivery, current);
  }
  if (stopped) return requeueRest(run.queues, record, intake.objects, outcomes, stopped, base, logger);
  return settledRecord(base, outcomes, notes, effectsExecuted, current, superseding);
}

/**
 * Whether a success of `object` in this delivery may follow a failure that left an index entry: a
 * retry, a redriven or requeued message. Not a fresh delivery (S3's own of a new write, or a fresh
 * `rerun reprocess` message, whose duplicate of a done object costs the HEAD alone), which then
 * costs no listing of the failure index; an older failure stays indexed while its dead letter is in
 * the DLQ, and the success of that dead letter's redrive clears it.
 */
function mayFollowAFailure(run: RecordRun, delivery: Delivery, object: S3ObjectEvent): boolean {
  if (delivery.requeued) return true;
  const { now, invocation } = run;
  return !isFreshDelivery({ ...delivery.base, eventTime: object.eventTime }, now(), invocation.timeLimitMs);
}

/**
 * Runs one S3 record of a message, then `afterOutput`. An error that asks for a later retry (a side
 * effect in progress elsewhere) is waited out here when the wait fits the invocation's time, and
 * the (idempotent) object runs again; any other error, or one that does not fit, is thrown.
 */
async function runObject(
  run: RecordRun,
  object: S3ObjectEvent,
  source: { bucket: string; key: string },
  delivery: Delivery,
): Promise<{ readonly outcome: ObjectOutcome; readonly effect: AfterOutputResult | undefined }> {
  const { options, context, now, sleep } = run;
  const { timeLimitMs, reserveMs, admission, deadline } = run.invocation;
  const { record, base, requeued, logger } = delivery;
  for (let waits = 0; ; waits++) {
    try {
      // Deletion propagates: an ObjectRemoved event removes the input's outputs (conditional deletes).
      // Not fresh: an earlier attempt of this event may have died part-way (isFreshDelivery.ts).
      const fresh = !requeued && isFreshDelivery({ ...base, eventTime: object.eventTime }, now(), timeLimitMs);
      const processOptions = {
        store: options.store,
        logger,
        freshDelivery: fresh,
        // S3's own first delivery of an event, not a message of rerun's tools (those name objects
        // that are usually done): a new object is created at once.
        createFirst: fresh && !sentByRerun(object),
        ...(options.firstRunPolicy ? { firstRunPolicy: options.firstRunPolicy } : {}),
        // A create needs no closing check where every removal looks again (removalLookAgain.ts).
        removalsLookAgain: !isFifo(record),
        ...(admission ? { admission } : {}),
        ...(options.maxInputBytes !== undefined ? { maxInputBytes: options.maxInputBytes } : {}),
        deadline,
        sleep: run.sleep,
        // Recorded on a multipart output until its seal: a later receive of this message that finds
        // it unsealed knows its writer is over (src/done/sealInProgress.ts).
        messageId: record.messageId,
      };
      const outcome = object.eventName.startsWith('ObjectRemoved:')
        ? await removeThenLookAgain(run, delivery, object, processOptions, timeLimitMs)
        : await processObject(options.worker, object, processOptions);
      let effect: AfterOutputResult | undefined;
      if (options.afterOutput && outcome.output) {
        effect = await options.afterOutput(outcome.output, {
          source,
          remainingTimeMs: context.getRemainingTimeInMillis(),
          logger,
        });
      }
      return { outcome, effect };
    } catch (error) {
      // A deferral spends a receive (SQS counts every delivery), and a holder that was killed
      // leaves its lease behind for up to a function timeout: a few kills plus their leases
      // would use up maxReceiveCount of a healthy message. When the wait fits in this
      // invocation's time, wait here and run the (idempotent) object again instead.
      const waitMs = inProcessWaitMs(error, waits, context.getRemainingTimeInMillis(), reserveMs);
      if (waitMs === undefined) throw error;
      logger.info('waiting for work in progress elsewhere (a side effect, a seal), within this invocation', {
        waitMs,
        reason: errorMessage(error),
      });
      await sleep(waitMs);
    }
  }
}

/**
 * Deletion propagates: an ObjectRemoved event removes the input's outputs at once (conditional
 * deletes), and on a standard queue the event is to be sent again, to look once more when every
 * build that read the input before the delete has ended (src/batch/removalLookAgain.ts says why),
 * when its eventTime lies within that window; the outcome's reason says which.
 */
async function removeThenLookAgain(
  run: RecordRun,
  delivery: Delivery,
  object: S3ObjectEvent,
  processOptions: ProcessObjectOptions,
  timeLimitMs: number,
): Promise<ObjectOutcome> {
  const { options, now } = run;
  const outcome = await removeOutputs(options.worker, object, {
    store: options.store,
    logger: delivery.logger,
    rebuild: (created) => processObject(options.worker, created, processOptions),
  });
  // A refused input (outside the worker's buckets and prefixes) removed nothing: nothing to look at again.
  if (isFifo(delivery.record) || outsideInputs(options.worker, object)) return outcome;
  const plan = planLookAgain(object.eventTime, now(), timeLimitMs);
  if (!plan.send) return { ...outcome, reason: `${outcome.reason}; ${plan.note}` };
  delivery.lookAgains.set(object, { object, eventTime: plan.eventTime, delaySeconds: plan.delaySeconds });
  return { ...outcome, reason: `${outcome.reason}; looking again in ${plan.delaySeconds} s` };
}

/**
 * Sends a message's look agains to its own queue, as few messages as fit (lookAgainMessages), and
 * returns a note when they were more than one; nothing to send returns undefined.
 */
async function sendLookAgains(
  run: RecordRun,
  record: SQSRecord,
  pending: readonly PendingLookAgain[],
): Promise<string | undefined> {
  if (pending.length === 0) return undefined;
  const messages = lookAgainMessages(pending);
  const queueUrl = await run.queues.queueUrlOf(record.eventSourceARN);
  for (const message of messages) {
    await run.queues.sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: message.body, DelaySeconds: message.delaySeconds }),
    );
  }
  if (pending.length === 1) return undefined;
  const delays = messages.map((m) => m.delaySeconds).join(', ');
  return `its ${pending.length} look agains went as ${messages.length} message${messages.length === 1 ? '' : 's'} delayed ${delays} s (the latest due of their records)`;
}

/** A message that failed (not for the deadline): deferred first when its error asks for a later retry. */
async function failedRecord(
  run: RecordRun,
  error: unknown,
  delivery: Delivery,
  current: { bucket: string; key: string } | undefined,
): Promise<RecordOutcome> {
  const { record, base, logger } = delivery;
  const retryable = retryableOf(error);
  const deferred = await deferIfAsked(run.queues, record, error, logger, run.now, run.invocation.start);
  return {
    ...base,
    status: RecordStatus.FAILED,
    retryable,
    ...failedWithDeferral(error, deferred),
    ...(current ? { source: current } : {}),
    ...(error instanceof Error ? { error: describeError(error) } : {}),
  };
}

/** A message whose every S3 record ran: processed when one was, with the reasons and counts of all. */
function settledRecord(
  base: Delivery['base'],
  outcomes: readonly ObjectOutcome[],
  notes: readonly string[],
  effectsExecuted: number,
  current: { bucket: string; key: string } | undefined,
  superseding: readonly boolean[],
): RecordOutcome {
  const processed = outcomes.find((o) => o.status === 'processed');
  const first = processed ?? outcomes[0];
  const quarantined = sumOf(outcomes, (o) => o.summary?.quarantined);
  const publishRacesLost = sumOf(outcomes, (o) => o.publishRacesLost);
  const covered = outcomes.flatMap((o, i) =>
    o.output && o.source && superseding[i]
      ? [{ bucket: o.source.bucket, key: o.source.key, etag: o.output.sourceEtag }]
      : [],
  );
  return {
    ...base,
    status: processed ? RecordStatus.PROCESSED : RecordStatus.SKIPPED,
    reason: joinReasons([...outcomes.map((o) => o.reason), ...notes]),
    ...(effectsExecuted > 0 ? { effectsExecuted } : {}),
    ...(quarantined > 0 ? { quarantined } : {}),
    ...(publishRacesLost > 0 ? { publishRacesLost } : {}),
    ...(current ? { source: current } : {}),
    ...(first?.outputKey ? { outputKey: first.outputKey } : {}),
    ...(covered.length > 0 ? { covered } : {}),
  };
}

/** The sum of a numeric property over outcomes (a missing or non-numeric one counts 0). */
function sumOf(outcomes: readonly ObjectOutcome[], value: (o: ObjectOutcome) => unknown): number {
  let sum = 0;
  for (const outcome of outcomes) {
    const n = value(outcome);
    if (typeof n === 'number' && Number.isFinite(n)) sum += n;
  }
  return sum;
}
