import { setTimeout as delay } from 'node:timers/promises';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { FullBatchFailureError, WorkerConfigurationError } from '../errors.js';
import type { FailureRecorder } from '../failures/FailureRecorder.js';
import { IntakeKind, type IntakeResult, parseS3EventBody } from '../intake/parseS3Event.js';
import { createInvocationLogger } from '../logging/lambdaContext.js';
import { type Logger, silentLogger } from '../logging/logger.js';
import { withFields } from '../logging/withFields.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';
import type { S3ObjectStore } from '../s3/S3ObjectStore.js';
import { AdaptiveFirstRun, type FirstRunPolicy } from '../worker/adaptiveFirstRun.js';
import {
  CODE_VERSION_MARKER_PLACE_NAMES,
  codeVersionMarkerKey,
  writeCodeVersionMarker,
} from '../worker/codeVersionMarker.js';
import type { WorkerDefinition } from '../worker/defineWorker.js';
import type { OutcomeHook } from '../worker/outcomes.js';
import type { AfterOutputHook } from './AfterOutputHook.js';
import { wiringFromEnvironment } from './environmentWiring.js';
import { invocationLimits } from './invocationLimits.js';
import { MemoryBudget } from './MemoryBudget.js';
import { type Invocation, processSqsRecord, type RecordRun } from './processSqsRecord.js';
import { runBatch } from './runBatch.js';
import { sourceQueues } from './sourceQueues.js';

export type { AfterOutputHook, AfterOutputResult } from './AfterOutputHook.js';
export { inProcessWaitMs, maxDeferralSeconds } from './deferMessage.js';
export { REQUEUED_FROM_ATTRIBUTE, REQUEUES_ATTRIBUTE } from './requeueRest.js';

/** Options for {@link createSqsBatchHandler}. */
export interface SqsBatchHandlerOptions {
  /** The transform, its key functions and code version (`defineWorker`). */
  readonly worker: WorkerDefinition;
  /**
   * Reads inputs and publishes outputs with conditional writes; injected, so tests can wrap it. Give
   * it with `sqs` to wire the handler yourself; leave both out to take the wiring from the environment
   * RerunPipeline and rerun dev set (src/batch/environmentWiring.ts).
   * @default an S3ObjectStore on createAwsClients({ endpoint: AWS_ENDPOINT_URL }), with `sqs` left out too
   */
  readonly store?: S3ObjectStore;
  /**
   * Used to defer a message (ChangeMessageVisibility) when an error asks for a later retry. Given with
   * `store`, or left out with it.
   * @default the SQS client of the same createAwsClients, with `store` left out too
   */
  readonly sqs?: SQSClient;
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
   * @default MAX_INPUT_BYTES (which RerunPipeline sets) when `store` and `sqs` are left out; else no limit
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
   * @default createLogger() (JSON lines at LOG_LEVEL) when `store` and `sqs` are left out; else silentLogger
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
   * @default an S3FailureRecorder in OUTPUT_BUCKET under FAILURE_PREFIX ('failures/' when unset) when
   * `store` and `sqs` are left out (a missing OUTPUT_BUCKET is refused by name); else none
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
   * so no output of this version is ever older than its marker. `false`: no marker, whatever the
   * environment says. Writing it needs a create-only `s3:PutObject` on the prefix, which
   * RerunPipeline grants.
   * @default under CODE_VERSION_PREFIX (which RerunPipeline and rerun dev set) in the worker's
   * `outputBucket` when `store` and `sqs` are left out and the variable is set; else none
   */
  readonly codeVersionMarker?: { readonly bucket: string; readonly prefix: string } | false;
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
  /**
   * How S3's fresh deliveries choose between creating first and checking first when the worker's
   * `firstRun` is `'adaptive'` (the default): a policy that learns from what each delivery found
   * (src/worker/adaptiveFirstRun.ts). Kept for the handler's life, so a warm sandbox remembers.
   * @default new AdaptiveFirstRun(), one per handler (one sandbox)
   */
  readonly firstRunPolicy?: FirstRunPolicy;
}

/** The names of {@link SqsBatchHandlerOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const SQS_BATCH_HANDLER_OPTION_NAMES = {
  afterOutput: true,
  codeVersionMarker: true,
  concurrency: true,
  deadlineMarginMs: true,
  failureRecorder: true,
  firstRunPolicy: true,
  logger: true,
  maxInputBytes: true,
  memoryBudget: true,
  now: true,
  onOutcome: true,
  sleep: true,
  sqs: true,
  store: true,
  throwOnFullBatchFailure: true,
  worker: true,
} as const satisfies OptionNames<SqsBatchHandlerOptions>;

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
 * Under RerunPipeline or rerun dev, `{ worker }` is enough: the clients, the store, the failure
 * recorder, the logger, `maxInputBytes` and the code-version marker come from the environment they set; an option given
 * explicitly wins, and a missing variable is refused by name (`WorkerConfigurationError`). Given
 * `store` and `sqs`, the handler reads no environment ("wiring it yourself").
 *
 * @example
 * export const handler = createSqsBatchHandler({ worker }); // wired from the environment
 * export const wired = createSqsBatchHandler({ worker, store: new S3ObjectStore(s3), sqs }); // wired yourself
 */
export function createSqsBatchHandler(
  given: SqsBatchHandlerOptions,
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  checkOptions('createSqsBatchHandler', given, SQS_BATCH_HANDLER_OPTION_NAMES, (m) => new WorkerConfigurationError(m));
  if (given.codeVersionMarker) {
    const place = given.codeVersionMarker;
    checkOptions(
      'createSqsBatchHandler codeVersionMarker',
      place,
      CODE_VERSION_MARKER_PLACE_NAMES,
      (m) => new WorkerConfigurationError(m),
    );
  }
  // Built once per sandbox, at the handler's creation (module scope), as the clients of a Lambda should be.
  const options = { ...given, ...wiringFromEnvironment(given) };
  const concurrency = options.concurrency ?? (options.memoryBudget === false ? 4 : 100);
  let budget = options.memoryBudget === false ? undefined : options.memoryBudget;
  const baseLogger = withFields(options.logger ?? silentLogger, { worker: options.worker.name });
  // Every line of an invocation carries Lambda's context keys, as the Powertools Logger names them.
  const forInvocation = createInvocationLogger(baseLogger);
  const queues = sourceQueues(options.sqs);
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => delay(ms));
  const markCodeVersion = codeVersionMarking(options);
  // One per sandbox: the adaptive first run learns across the invocations a warm sandbox serves.
  const handling = { ...options, firstRunPolicy: options.firstRunPolicy ?? new AdaptiveFirstRun() };

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
    const run: RecordRun = { options: handling, queues, now, sleep, context, invocationLogger: logger, invocation };
    // One parse per body: a record's subject (named when it never starts, and to the failure
    // recorder before it starts) and its processing read the same intake.
    const intakeOf = intakeCache();
    const response = await runBatch(event, context, (record) => processSqsRecord(record, intakeOf(record), run), {
      concurrency,
      ...(options.deadlineMarginMs !== undefined ? { deadlineMarginMs: options.deadlineMarginMs } : {}),
      subjectOf: (record) => {
        const intake = intakeOf(record);
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

/** Each record's body parsed once per invocation, however many times it is asked for. */
function intakeCache(): (record: SQSRecord) => IntakeResult {
  const intakes = new Map<SQSRecord, IntakeResult>();
  return (record) => {
    let intake = intakes.get(record);
    if (!intake) {
      intake = parseS3EventBody(record.body);
      intakes.set(record, intake);
    }
    return intake;
  };
}

/**
 * Writes the code-version marker once per handler (`codeVersionMarker`), before the first record;
 * a failed write is tried again by the next batch. Resolves at once without a marker to write.
 */
function codeVersionMarking(
  options: Pick<SqsBatchHandlerOptions, 'codeVersionMarker' | 'worker'> & { readonly store: S3ObjectStore },
): () => Promise<void> {
  let marked: Promise<void> | undefined;
  return () => {
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
}
