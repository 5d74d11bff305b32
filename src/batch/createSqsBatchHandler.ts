import { setTimeout as delay } from 'node:timers/promises';
import {
  ChangeMessageVisibilityCommand,
  GetQueueUrlCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { DeadlineNearError, FullBatchFailureError, RerunError } from '../errors.js';
import type { FailureRecorder } from '../failures/FailureRecorder.js';
import { IntakeKind, parseS3EventBody, type S3ObjectEvent, sentByRerun } from '../intake/parseS3Event.js';
import { s3EventBodyFrom } from '../intake/splitS3EventBody.js';
import { createInvocationLogger } from '../logging/lambdaContext.js';
import { describeError, type Logger, silentLogger } from '../logging/logger.js';
import { withFields } from '../logging/withFields.js';
import type { S3ObjectStore } from '../s3/S3ObjectStore.js';
import { codeVersionMarkerKey, writeCodeVersionMarker } from '../worker/codeVersionMarker.js';
import type { WorkerDefinition } from '../worker/defineWorker.js';
import { type OutcomeHook, type RecordOutcome, RecordStatus } from '../worker/outcomes.js';
import {
  type ObjectOutcome,
  type OutputDescription,
  type ProcessObjectOptions,
  processObject,
  type TransformAdmission,
} from '../worker/processObject.js';
import type { ReadDeadline } from '../worker/readGuard.js';
import { removeOutputs } from '../worker/removeOutputs.js';
import { invocationLimits } from './invocationLimits.js';
import { isFreshDelivery } from './isFreshDelivery.js';
import { MemoryBudget } from './MemoryBudget.js';
import { lookAgainBody, lookAgainDelaySeconds, lookAgainDueAt } from './removalLookAgain.js';
import { receiveCountOf, runBatch } from './runBatch.js';

/** Called after an object's output is known to be valid and current (written now or found done). */
export type AfterOutputHook = (
  output: OutputDescription,
  context: {
    readonly source: { bucket: string; key: string };
    readonly remainingTimeMs: number;
    readonly logger: Logger;
  },
) => Promise<AfterOutputResult>;

/** What an {@link AfterOutputHook} did: whether its side effect ran now (false: replayed or not needed). */
export interface AfterOutputResult {
  readonly executed: boolean;
  /** Appended to the record's reason, e.g. `notified` or `notification already sent`. */
  readonly note: string;
}

/** Options for {@link createSqsBatchHandler}. */
export interface SqsBatchHandlerOptions {
  /** The transform, its key functions and code version (`defineWorker`). */
  readonly worker: WorkerDefinition;
  /** Reads inputs and publishes outputs with conditional writes; injected, so tests can wrap it. */
  readonly store: S3ObjectStore;
  /** Used to defer a message (ChangeMessageVisibility) when an error asks for a later retry. */
  readonly sqs: SQSClient;
  /**
   * Records processed at once within one invocation: their done-checks all run at once, and their
   * transforms are admitted by `memoryBudget`.
   * @default 100 (every record of a batch of up to 100); 4 when `memoryBudget` is false
   */
  readonly concurrency?: number;
  /**
   * Transforms share a memory budget keyed by each input's size (src/batch/MemoryBudget.ts): ten
   * small files run together, a 1 GiB file runs alone. `false`: no budget, `concurrency` alone bounds.
   * @default MemoryBudget.forFunction(context.memoryLimitInMB), one per handler (one sandbox's memory)
   */
  readonly memoryBudget?: MemoryBudget | false;
  /**
   * The largest input one invocation can finish; a larger one fails at once, not retryable, with a
   * reason naming the limit (see ProcessObjectOptions.maxInputBytes).
   * @default no limit
   */
  readonly maxInputBytes?: number;
  /**
   * Stop starting new records when less than this much of the function's time is left; the
   * unstarted ones are reported as batch item failures and come back after the visibility timeout.
   * The same margin stops a read in progress (src/worker/readGuard.ts) and the S3 records of one
   * message between them: the records left are requeued on the worker's own queue as one new
   * message (status `requeued`), which needs `sqs:SendMessage` on it (SqsWorker grants it).
   * @default a tenth of the invocation's time, from 250 ms to 5 s (defaultDeadlineMarginMs)
   */
  readonly deadlineMarginMs?: number;
  /**
   * One JSON line per record outcome and per notable event, each with a timestamp and Lambda's
   * context keys. Adapters take the logger you have: `fromPowertoolsLogger`, `fromPino`, `fromConsole`.
   * @default silentLogger
   */
  readonly logger?: Logger;
  /**
   * Runs after an output is valid and current: the place for side effects such as a webhook
   * (see src/notify/). A thrown error fails the record like any other.
   * @default none
   */
  readonly afterOutput?: AfterOutputHook;
  /**
   * Records why the worker gave up on a message (a non-retryable failure, or its last receive before
   * the queue's redrive policy moves it to the DLQ) at a deterministic place, so `rerun redrive` can
   * show the reason before moving it back (see src/failures/S3FailureRecorder.ts). Recording never
   * fails the batch.
   * @default none
   */
  readonly failureRecorder?: FailureRecorder;
  /**
   * The clock (epoch ms) that measures how long an invocation has run, for the deferral limit.
   * @default Date.now
   */
  readonly now?: () => number;
  /**
   * Waits `ms` milliseconds: how the handler waits, within an invocation, for a side effect in
   * progress elsewhere (a ledger lease held by another delivery).
   * @default setTimeout (node:timers/promises)
   */
  readonly sleep?: (ms: number) => Promise<void>;
  /**
   * Record, once per instance and before the first record, that this code version has run: an
   * empty object at `{prefix}{worker name}/{codeVersion}` in `bucket`, created once
   * (src/worker/codeVersionMarker.ts). `rerun reprocess` reads its LastModified to find the
   * outputs of older code from listings. When it cannot be written the batch fails (and returns),
   * so no output of this version is ever older than its marker.
   * @default none
   */
  readonly codeVersionMarker?: { readonly bucket: string; readonly prefix: string };
  /**
   * Called with every record's outcome after it is logged, then flushed once per invocation: the
   * place for outcome metrics, e.g. `emfOutcomeMetrics()` or `powertoolsOutcomeMetrics(metrics)`
   * (src/metrics/). Its errors are logged, never fail the batch.
   * @default none
   */
  readonly onOutcome?: OutcomeHook;
  /**
   * When every record of a batch failed, throw a {@link FullBatchFailureError} (after logging,
   * recording and flushing the outcomes) instead of returning them all as `batchItemFailures`, so
   * that Lambda's Errors metric counts the batch; the Powertools BatchProcessor does the same by
   * default. SQS retries the messages either way.
   *
   * Opt-in, because a thrown error has effects of its own: Lambda slows the scaling of the SQS
   * event source when invocations fail (AWS Knowledge Center, "lambda-sqs-scaling"), and a batch
   * is also all-failed when its records were only deferred, not started before the deadline, or
   * one bad message in a batch of one; the function's error alarms would then fire for a healthy
   * pipeline. The outcome metrics (`onOutcome`) count failures without either effect.
   * @default false
   */
  readonly throwOnFullBatchFailure?: boolean;
}

/** What every record of one invocation shares. */
interface Invocation {
  /** When it started (the handler's clock). */
  readonly start: number;
  /** The time left when it started: at most the function's timeout. */
  readonly timeLimitMs: number;
  /** What an in-process wait must leave. */
  readonly reserveMs: number;
  readonly admission?: TransformAdmission;
  readonly deadline: ReadDeadline;
}

/** The id of the message whose remaining records a requeued message carries. */
export const REQUEUED_FROM_ATTRIBUTE = 'rerun-requeued-from';
/** How many requeues in a row did no record (reset when one did). */
export const REQUEUES_ATTRIBUTE = 'rerun-requeues';
/** Requeues in a row without a record done, after which the message fails and meets the redrive policy. */
const MAX_REQUEUES_WITHOUT_PROGRESS = 5;

/** The requeue count of a message this handler sent back to its queue, or undefined for any other. */
function requeuesOf(record: SQSRecord): number | undefined {
  const attributes = record.messageAttributes as Record<string, { stringValue?: string } | undefined> | undefined;
  if (!attributes?.[REQUEUED_FROM_ATTRIBUTE]) return undefined;
  const n = Number(attributes[REQUEUES_ATTRIBUTE]?.stringValue ?? '0');
  return Number.isFinite(n) && n >= 0 ? n : 0;
}

/** An error that asks for its message to come back after a delay (e.g. a side effect in progress elsewhere). */
interface DeferrableError {
  readonly retryAfterSeconds: number;
}

/**
 * Builds a Lambda handler for an SQS event source mapping with `ReportBatchItemFailures`.
 *
 * Every record gets a classified outcome (processed / skipped / failed, with a reason), logged as
 * one JSON line and emitted to {@link onRecordOutcome} listeners. Only failed records are listed in
 * `batchItemFailures`; the handler never throws for a record, because a throw would make AWS retry
 * the whole batch (docs/AWS-BEHAVIOUR.md, "A thrown error or a timeout fails the whole batch"). Only a batch whose
 * every record failed may throw, when `throwOnFullBatchFailure` asks for it.
 *
 * - Bounded concurrency (no unbounded Promise.all).
 * - Deadline-aware: when `context.getRemainingTimeInMillis()` drops below `deadlineMarginMs`, no
 *   new record starts; unstarted records are reported as failures, never lost. A read in progress
 *   stops before the timeout too, and so does a message of many S3 records between two of them:
 *   what is done stays done, the records left go back to the queue as a new message (`requeued`).
 * - An input larger than `maxInputBytes`, stored or decoded, or too slow for a whole invocation,
 *   fails at once, not retryable, with a reason that says which (src/worker/readGuard.ts).
 * - FIFO queues: records run in order and, after the first failure, the rest are reported failed
 *   too, so SQS redelivers them in order.
 *
 * @example
 * export const handler = createSqsBatchHandler({ worker, store: new S3ObjectStore(s3), sqs });
 */
export function createSqsBatchHandler(
  options: SqsBatchHandlerOptions,
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const concurrency = options.concurrency ?? (options.memoryBudget === false ? 4 : 100);
  let budget = options.memoryBudget === false ? undefined : options.memoryBudget;
  const baseLogger = withFields(options.logger ?? silentLogger, { worker: options.worker.name });
  // Every line of an invocation carries Lambda's context keys, as the Powertools Logger names them.
  const forInvocation = createInvocationLogger(baseLogger);
  const queueUrls = new Map<string, Promise<string>>();
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => delay(ms));

  const processRecord = async (
    record: SQSRecord,
    context: Context,
    invocationLogger: Logger,
    invocation: Invocation,
  ): Promise<RecordOutcome> => {
    const { start: invocationStart, timeLimitMs, reserveMs, admission, deadline } = invocation;
    const base = { messageId: record.messageId, receiveCount: receiveCountOf(record) };
    const logger = withFields(invocationLogger, { messageId: record.messageId });
    const intake = parseS3EventBody(record.body);
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
    const notes: string[] = [];
    let effectsExecuted = 0;
    let current: { bucket: string; key: string } | undefined;
    let index = 0;
    /** Where the deadline stopped this message, when it did: the records from `index` on are not done. */
    let stopped: { index: number; why: string; error?: unknown } | undefined;
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
        const source = current;
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
              // A create needs no closing check where every removal looks again (removalLookAgain.ts).
              removalsLookAgain: !isFifo(record),
              ...(admission ? { admission } : {}),
              ...(options.maxInputBytes !== undefined ? { maxInputBytes: options.maxInputBytes } : {}),
              deadline,
            };
            const outcome = object.eventName.startsWith('ObjectRemoved:')
              ? await removeThenLookAgain(record, object, processOptions, timeLimitMs, logger)
              : await processObject(options.worker, object, processOptions);
            let effect: AfterOutputResult | undefined;
            if (options.afterOutput && outcome.output) {
              effect = await options.afterOutput(outcome.output, {
                source,
                remainingTimeMs: context.getRemainingTimeInMillis(),
                logger,
              });
            }
            outcomes.push(outcome);
            if (effect?.executed) effectsExecuted++;
            if (effect) notes.push(effect.note);
            break;
          } catch (error) {
            // A deferral spends a receive (SQS counts every delivery), and a holder that was killed
            // leaves its lease behind for up to a function timeout: a few kills plus their leases
            // would use up maxReceiveCount of a healthy message. When the wait fits in this
            // invocation's time, wait here and run the (idempotent) object again instead.
            const waitMs = inProcessWaitMs(error, waits, context.getRemainingTimeInMillis(), reserveMs);
            if (waitMs === undefined) throw error;
            logger.info('waiting for a side effect in progress elsewhere, within this invocation', { waitMs });
            await sleep(waitMs);
          }
        }
      }
    } catch (error) {
      // The deadline stopped this record (not started for memory, or its read ran short of time):
      // it fits a fresh invocation, so it is not a failure of the input (readGuard.ts).
      if (error instanceof DeadlineNearError) stopped = { index, why: errorMessage(error), error };
      else {
        const retryable = error instanceof RerunError ? error.retryable : true;
        const deferred = await deferIfAsked(record, error, logger, invocationStart);
        return {
          ...base,
          status: RecordStatus.FAILED,
          retryable,
          reason: `${errorMessage(error)}${deferred ? ` (deferred ${deferred} s)` : ''}`,
          ...(deferred ? { deferredSeconds: deferred } : {}),
          ...(current ? { source: current } : {}),
          ...(error instanceof Error ? { error: describeError(error) } : {}),
        };
      }
    }
    if (stopped) return requeueRest(record, intake.objects, outcomes, stopped, base, logger);
    const processed = outcomes.find((o) => o.status === 'processed');
    const first = processed ?? outcomes[0];
    const quarantined = sumOf(outcomes, (o) => o.summary?.quarantined);
    const publishRacesLost = sumOf(outcomes, (o) => o.publishRacesLost);
    return {
      ...base,
      status: processed ? RecordStatus.PROCESSED : RecordStatus.SKIPPED,
      reason: [...outcomes.map((o) => o.reason), ...notes].join('; '),
      ...(effectsExecuted > 0 ? { effectsExecuted } : {}),
      ...(quarantined > 0 ? { quarantined } : {}),
      ...(publishRacesLost > 0 ? { publishRacesLost } : {}),
      ...(current ? { source: current } : {}),
      ...(first?.outputKey ? { outputKey: first.outputKey } : {}),
    };
  };

  /**
   * The deadline came near with records of this message not done: send those back to the worker's
   * own queue as one new message (the same body with only the remaining records, so each keeps its
   * eventTime, eTag and sequencer) and acknowledge this one. The new message starts at receive
   * count 1: a crowded batch or a long message does not spend the receives that would move a
   * healthy input to the DLQ. When that cannot be done (a FIFO queue, whose order a new message
   * would break; a body that cannot be split; too many requeues without progress; a failed send),
   * the message fails retryably and comes back whole, which is safe: its done records are found
   * done (idempotent), at the cost of a receive.
   */
  const requeueRest = async (
    record: SQSRecord,
    objects: readonly { readonly bucket: string; readonly key: string }[],
    outcomes: readonly ObjectOutcome[],
    stopped: { readonly index: number; readonly why: string; readonly error?: unknown },
    base: { readonly messageId: string; readonly receiveCount: number },
    logger: Logger,
  ): Promise<RecordOutcome> => {
    const total = objects.length;
    const left = total - stopped.index;
    const next = objects[stopped.index];
    const done = outcomes.length;
    const tally = `${done} of ${total} S3 record${total === 1 ? '' : 's'} done (${outcomes.filter((o) => o.status === 'processed').length} processed)`;
    // Consecutive requeues that did no record: bounded, so a message that can never progress here
    // meets the queue's redrive policy (and its reason is recorded) instead of circling forever.
    const requeues = done > 0 ? 0 : (requeuesOf(record) ?? 0) + 1;
    const failed = (why: string): RecordOutcome => ({
      ...base,
      status: RecordStatus.FAILED,
      retryable: true,
      reason: `${stopped.why}; ${tally}; ${why}: the message comes back whole, and its done records are found done`,
      ...(next ? { source: { bucket: next.bucket, key: next.key } } : {}),
      ...(stopped.error instanceof Error ? { error: describeError(stopped.error) } : {}),
    });
    if (isFifo(record)) return failed('not requeued (a FIFO queue keeps its order)');
    if (requeues > MAX_REQUEUES_WITHOUT_PROGRESS) {
      return failed(`not requeued again (${MAX_REQUEUES_WITHOUT_PROGRESS} requeues in a row did no record)`);
    }
    const body = s3EventBodyFrom(record.body, stopped.index);
    if (body === undefined) return failed('not requeued (the body cannot be split)');
    try {
      const sent = await options.sqs.send(
        new SendMessageCommand({
          QueueUrl: await queueUrlOf(record.eventSourceARN),
          MessageBody: body,
          MessageAttributes: {
            [REQUEUED_FROM_ATTRIBUTE]: { DataType: 'String', StringValue: record.messageId },
            [REQUEUES_ATTRIBUTE]: { DataType: 'Number', StringValue: String(requeues) },
          },
        }),
      );
      const requeuedAs = sent.MessageId ?? '';
      return {
        ...base,
        status: RecordStatus.REQUEUED,
        reason: `${stopped.why}; ${tally}; the other ${left} requeued as message ${requeuedAs}`,
        requeuedRecords: left,
        requeuedAs,
        ...(next ? { source: { bucket: next.bucket, key: next.key } } : {}),
      };
    } catch (sendError) {
      logger.warn('could not requeue the records left; the message returns whole', { error: errorMessage(sendError) });
      return failed(`requeueing the ${left} left failed (${errorMessage(sendError)})`);
    }
  };

  const deferIfAsked = async (
    record: SQSRecord,
    error: unknown,
    logger: Logger,
    invocationStart: number,
  ): Promise<number | undefined> => {
    const seconds = (error as Partial<DeferrableError> | undefined)?.retryAfterSeconds;
    if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) return undefined;
    // docs/AWS-BEHAVIOUR.md, "ChangeMessageVisibility": it delays the next delivery: wait for the other
    // holder instead of burning receives. Its limit is 12 hours counted from this receive, not from
    // the call; SQS refuses anything beyond. The receive happened before the invocation started,
    // at most a batching window (300 s) earlier, so that and the time run so far are left out.
    const visibility = Math.min(Math.ceil(seconds), maxDeferralSeconds(now() - invocationStart));
    if (visibility <= 0) return undefined;
    try {
      const queueUrl = await queueUrlOf(record.eventSourceARN);
      await options.sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: queueUrl,
          ReceiptHandle: record.receiptHandle,
          VisibilityTimeout: visibility,
        }),
      );
      return visibility;
    } catch (deferError) {
      logger.warn('could not defer the message; it returns after the queue visibility timeout', {
        error: errorMessage(deferError),
      });
      return undefined;
    }
  };

  /**
   * Deletion propagates: an ObjectRemoved event removes the input's outputs at once (conditional
   * deletes), and on a standard queue the event is sent again to look once more when every build that
   * read the input before the delete has ended (src/batch/removalLookAgain.ts says why).
   */
  const removeThenLookAgain = async (
    record: SQSRecord,
    object: S3ObjectEvent,
    processOptions: ProcessObjectOptions,
    timeLimitMs: number,
    logger: Logger,
  ): Promise<ObjectOutcome> => {
    const outcome = await removeOutputs(options.worker, object, {
      store: options.store,
      logger,
      rebuild: (created) => processObject(options.worker, created, processOptions),
    });
    if (isFifo(record)) return outcome;
    const eventTime = object.eventTime ?? new Date(now()).toISOString();
    const delaySeconds = lookAgainDelaySeconds(lookAgainDueAt(eventTime, timeLimitMs), now());
    if (delaySeconds === undefined) return outcome;
    await options.sqs.send(
      new SendMessageCommand({
        QueueUrl: await queueUrlOf(record.eventSourceARN),
        MessageBody: lookAgainBody(object, eventTime),
        DelaySeconds: delaySeconds,
      }),
    );
    return { ...outcome, reason: `${outcome.reason}; looking again in ${delaySeconds} s` };
  };

  const queueUrlOf = (arn: string): Promise<string> => {
    let url = queueUrls.get(arn);
    if (!url) {
      const [, , , , account, name] = arn.split(':');
      url = options.sqs
        .send(new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }))
        .then((out) => out.QueueUrl ?? Promise.reject(new Error(`no URL for queue ${arn}`)));
      url.catch(() => queueUrls.delete(arn));
      queueUrls.set(arn, url);
    }
    return url;
  };

  let marked: Promise<void> | undefined;
  const markCodeVersion = (): Promise<void> => {
    const marker = options.codeVersionMarker;
    if (!marker) return Promise.resolve();
    if (!marked) {
      const key = codeVersionMarkerKey(marker.prefix, options.worker.name, options.worker.codeVersion);
      marked = writeCodeVersionMarker(options.store, marker.bucket, key);
      marked.catch(() => {
        marked = undefined; // the next batch tries again
      });
    }
    return marked;
  };

  return async (event, context) => {
    const invocationStart = now();
    // At most the function's timeout: what tells a first delivery from a repeated one.
    const timeLimitMs = context.getRemainingTimeInMillis();
    const logger = forInvocation(context);
    // A thrown error fails the whole batch (docs/AWS-BEHAVIOUR.md): it comes back, and no output of this
    // code version is written before its marker exists.
    await markCodeVersion();
    if (options.memoryBudget !== false) budget ??= MemoryBudget.forFunction(context.memoryLimitInMB);
    // Every read of this invocation judges the time left by the same margin (src/worker/readGuard.ts).
    const {
      marginMs: margin,
      admission,
      deadline,
    } = invocationLimits(context, { deadlineMarginMs: options.deadlineMarginMs, budget, timeLimitMs, now });
    // What an in-process wait must leave: the deadline margin, and as much again to finish the record.
    const reserveMs = 2 * margin;
    const invocation: Invocation = {
      start: invocationStart,
      timeLimitMs,
      reserveMs,
      deadline,
      ...(admission ? { admission } : {}),
    };
    const run = (record: SQSRecord) => processRecord(record, context, logger, invocation);
    const response = await runBatch(event, context, run, {
      concurrency,
      ...(options.deadlineMarginMs !== undefined ? { deadlineMarginMs: options.deadlineMarginMs } : {}),
      subjectOf: (record) => {
        const intake = parseS3EventBody(record.body);
        const first = intake.kind === IntakeKind.OBJECTS ? intake.objects[0] : undefined;
        return first ? { bucket: first.bucket, key: first.key } : undefined;
      },
      logger,
      name: options.worker.name,
      ...(options.failureRecorder ? { failureRecorder: options.failureRecorder } : {}),
      ...(options.onOutcome ? { onOutcome: options.onOutcome } : {}),
    });
    const records = event.Records ?? [];
    if (
      options.throwOnFullBatchFailure === true &&
      records.length > 0 &&
      response.batchItemFailures.length === records.length
    ) {
      throw new FullBatchFailureError(response.batchItemFailures.map((f) => f.itemIdentifier));
    }
    return response;
  };
}

/** SQS's visibility limit: 12 hours from the receive (ChangeMessageVisibility API reference). */
const SQS_MAX_VISIBILITY_SECONDS = 43_200;
/** Lambda's longest batching window: how long before the invocation a record may have been received. */
const MAX_BATCHING_WINDOW_SECONDS = 300;

/**
 * The longest deferral SQS accepts for a record of an invocation that has run `elapsedMs`: 12 hours
 * from the receive, less the batching window the record may have waited in and the time run so far.
 *
 * @example
 * maxDeferralSeconds(0); // 42900
 */
export function maxDeferralSeconds(elapsedMs: number): number {
  return SQS_MAX_VISIBILITY_SECONDS - MAX_BATCHING_WINDOW_SECONDS - Math.ceil(elapsedMs / 1000);
}

/** In-process waits per object before the message is deferred instead. */
const MAX_IN_PROCESS_WAITS = 3;

/**
 * How long to wait in this invocation before running an object again, for an error that asks for a
 * later retry (`retryAfterSeconds`, e.g. a ledger lease held elsewhere): undefined when the error
 * does not ask, the waits are used up, or the wait plus `reserveMs` does not fit in `remainingMs`
 * (then the message is deferred with ChangeMessageVisibility, which spends a receive).
 *
 * @example
 * inProcessWaitMs({ retryAfterSeconds: 3 }, 0, 7000, 1600); // 3000
 * inProcessWaitMs({ retryAfterSeconds: 6 }, 0, 7000, 1600); // undefined
 */
export function inProcessWaitMs(
  error: unknown,
  waits: number,
  remainingMs: number,
  reserveMs: number,
): number | undefined {
  const seconds = (error as Partial<DeferrableError> | undefined)?.retryAfterSeconds;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) return undefined;
  if (waits >= MAX_IN_PROCESS_WAITS) return undefined;
  // At least a moment: a lease that just ended may read as 0 s left.
  const waitMs = Math.max(100, Math.ceil(seconds * 1000));
  return waitMs + reserveMs < remainingMs ? waitMs : undefined;
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

function errorMessage(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

/** A FIFO queue: nothing may be sent back into it out of order, so its removals do not look again. */
function isFifo(record: SQSRecord): boolean {
  return record.eventSourceARN?.endsWith('.fifo') === true;
}
