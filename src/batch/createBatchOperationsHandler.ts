import type { Context } from 'aws-lambda';
import { RerunError, retryableOf, WorkerConfigurationError } from '../errors.js';
import type { FailureRecorder } from '../failures/FailureRecorder.js';
import {
  type BatchOperationsResponse,
  BatchOperationsResultCode,
  type BatchOperationsTaskResult,
  type ParsedBatchOperationsTask,
  parseBatchOperationsEvent,
} from '../intake/parseBatchOperationsEvent.js';
import { createInvocationLogger } from '../logging/lambdaContext.js';
import { describeError, type Logger, silentLogger } from '../logging/logger.js';
import { withFields } from '../logging/withFields.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';
import type { S3ObjectStore } from '../s3/S3ObjectStore.js';
import type { WorkerDefinition } from '../worker/defineWorker.js';
import { type OutcomeHook, type RecordOutcome, RecordStatus } from '../worker/outcomes.js';
import { processObject } from '../worker/processObject.js';
import { errorMessage } from './errorMessage.js';
import { invocationLimits } from './invocationLimits.js';
import { MemoryBudget } from './MemoryBudget.js';
import { mapWithConcurrency } from './mapWithConcurrency.js';
import { reportOutcomes } from './reportOutcomes.js';

/** Options for {@link createBatchOperationsHandler}. */
export interface BatchOperationsHandlerOptions {
  /** The transform, its key functions and code version (`defineWorker`): the same as the SQS worker's. */
  readonly worker: WorkerDefinition;
  /** Reads inputs and publishes outputs with conditional writes; injected, so tests can wrap it. */
  readonly store: S3ObjectStore;
  /**
   * Tasks processed at once within one invocation. S3 sends one task per invocation today; a
   * larger batch runs with this bound, never an unbounded `Promise.all`.
   * @default 4
   */
  readonly concurrency?: number;
  /**
   * Transforms share a memory budget keyed by each input's size (src/batch/MemoryBudget.ts).
   * `false`: no budget, `concurrency` alone bounds.
   * @default MemoryBudget.forFunction(context.memoryLimitInMB), one per handler
   */
  readonly memoryBudget?: MemoryBudget | false;
  /**
   * The largest input one invocation can finish; a larger one is a PermanentFailure naming the
   * limit (see ProcessObjectOptions.maxInputBytes).
   * @default no limit
   */
  readonly maxInputBytes?: number;
  /**
   * No task starts when less than this much of the function's time is left: it is answered
   * `TemporaryFailure` with that reason, and S3 redrives it before the job completes.
   * @default a tenth of the invocation's time, from 250 ms to 5 s (defaultDeadlineMarginMs)
   */
  readonly deadlineMarginMs?: number;
  /**
   * One JSON line per task outcome (`record processed|skipped|failed`, as the SQS handler writes),
   * with Lambda's context keys and the job id.
   * @default silentLogger
   */
  readonly logger?: Logger;
  /**
   * Records why a task failed permanently, as the SQS handler records a non-retryable message:
   * `failures/s3-batch-job-{jobId}/{task}.json` in the recorder's bucket, indexed by input (see
   * `batchOperationsFailureSource`). A `TemporaryFailure` is not recorded: S3 redrives it, and
   * one that fails on its last redrive is in the job's failed-tasks report. Recording never fails a task.
   * @default none
   */
  readonly failureRecorder?: FailureRecorder;
  /** Called with every task's outcome, then flushed once per invocation (see OutcomeHook). @default none */
  readonly onOutcome?: OutcomeHook;
}

/** The names of {@link BatchOperationsHandlerOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const BATCH_OPERATIONS_HANDLER_OPTION_NAMES = {
  concurrency: true,
  deadlineMarginMs: true,
  failureRecorder: true,
  logger: true,
  maxInputBytes: true,
  memoryBudget: true,
  onOutcome: true,
  store: true,
  worker: true,
} as const satisfies OptionNames<BatchOperationsHandlerOptions>;

/** The longest result string returned: it goes into every row of the completion report. */
const MAX_RESULT_STRING = 512;

/**
 * Builds a Lambda handler for an S3 Batch Operations job with the `LambdaInvoke` operation
 * (invocation schema 1.0 or 2.0). Each task runs the same {@link processObject} as the SQS path,
 * so a job over objects already done costs a done-check each and writes nothing, and running a job
 * twice has the effect of running it once.
 *
 * Outcomes map to result codes (S3 User Guide, "Invoke AWS Lambda function", "Response and result
 * codes"): processed and skipped are `Succeeded`; a retryable failure (a lost race, a throttle, the
 * deadline) is `TemporaryFailure`, which S3 redrives; a failure no retry can fix (an input too
 * large, a task naming no object, a key outside the worker's prefixes) is `PermanentFailure`, with
 * a failure record when a recorder is given. The result string is the outcome's reason, cut to 512
 * characters. Tasks missing from the response count as `PermanentFailure` (`treatMissingKeysAs`),
 * so none can pass unnoticed.
 *
 * A task is never a fresh delivery (src/batch/isFreshDelivery.ts): it carries no event eTag and may
 * be a redrive of an attempt that died part-way, so the full done-check runs.
 *
 * An event that is not a Batch Operations invocation throws: S3 then fails the invocation's tasks
 * with the error message in the report.
 *
 * @example
 * export const handler = createBatchOperationsHandler({ worker, store: new S3ObjectStore(s3) });
 */
export function createBatchOperationsHandler(
  options: BatchOperationsHandlerOptions,
): (event: unknown, context: Context) => Promise<BatchOperationsResponse> {
  checkOptions(
    'createBatchOperationsHandler',
    options,
    BATCH_OPERATIONS_HANDLER_OPTION_NAMES,
    (m) => new WorkerConfigurationError(m),
  );
  const concurrency = options.concurrency ?? 4;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be an integer >= 1 (got ${concurrency})`);
  }
  let budget = options.memoryBudget === false ? undefined : options.memoryBudget;
  const baseLogger = withFields(options.logger ?? silentLogger, { worker: options.worker.name });
  const forInvocation = createInvocationLogger(baseLogger);

  return async (event, context) => {
    // At most the function's timeout: a read whose pace projects past it is too large for the function.
    const timeLimitMs = context.getRemainingTimeInMillis();
    const parsed = parseBatchOperationsEvent(event);
    if (!parsed.ok) {
      throw new BatchOperationsEventError(`not an S3 Batch Operations invocation: ${parsed.reason}`);
    }
    const logger = forInvocation(context).child({ jobId: parsed.jobId, invocationId: parsed.invocationId });
    if (options.memoryBudget !== false) budget ??= MemoryBudget.forFunction(context.memoryLimitInMB);
    // The SQS handler's limits: a read that runs short of time stops before the timeout
    // (TemporaryFailure), one that no invocation could finish is too large (PermanentFailure).
    const {
      marginMs: margin,
      admission,
      deadline,
    } = invocationLimits(context, { deadlineMarginMs: options.deadlineMarginMs, budget, timeLimitMs, now: Date.now });
    const source = batchOperationsFailureSource(parsed.jobId);

    const run = async (task: ParsedBatchOperationsTask): Promise<RecordOutcome> => {
      if (!task.ok) {
        return { messageId: task.taskId, status: RecordStatus.FAILED, retryable: false, reason: task.reason };
      }
      const subject = { bucket: task.bucket, key: task.key };
      if (context.getRemainingTimeInMillis() < margin) {
        return {
          messageId: task.taskId,
          status: RecordStatus.FAILED,
          retryable: true,
          reason: `not started: function deadline is near (less than ${margin} ms left)`,
          source: subject,
        };
      }
      try {
        const outcome = await processObject(
          options.worker,
          { ...subject, eventName: 'ObjectCreated:BatchOperations' },
          {
            store: options.store,
            logger: logger.child({ taskId: task.taskId }),
            // Never fresh: no event eTag to trust, and a redrive may follow an attempt that died.
            freshDelivery: false,
            ...(admission ? { admission } : {}),
            ...(options.maxInputBytes !== undefined ? { maxInputBytes: options.maxInputBytes } : {}),
            deadline,
          },
        );
        return {
          messageId: task.taskId,
          status: outcome.status === 'processed' ? RecordStatus.PROCESSED : RecordStatus.SKIPPED,
          reason: outcome.reason,
          source: subject,
          ...(outcome.outputKey ? { outputKey: outcome.outputKey } : {}),
          ...(typeof outcome.summary?.quarantined === 'number' && outcome.summary.quarantined > 0
            ? { quarantined: outcome.summary.quarantined }
            : {}),
          ...(outcome.publishRacesLost ? { publishRacesLost: outcome.publishRacesLost } : {}),
        };
      } catch (error) {
        return {
          messageId: task.taskId,
          status: RecordStatus.FAILED,
          retryable: retryableOf(error),
          reason: errorMessage(error),
          source: subject,
          ...(error instanceof Error ? { error: describeError(error) } : {}),
        };
      }
    };

    const outcomes = await mapWithConcurrency(parsed.tasks, concurrency, run);
    if (options.failureRecorder) {
      const recorder = options.failureRecorder;
      await mapWithConcurrency(
        outcomes.filter((o) => o.status === RecordStatus.FAILED && o.retryable === false),
        concurrency,
        (outcome) =>
          recorder.record({
            queueArn: source.arn,
            messageId: failureMessageId(outcome.messageId),
            receiveCount: 1,
            outcome,
            ...(outcome.source ? { subject: `s3://${outcome.source.bucket}/${outcome.source.key}` } : {}),
          }),
      );
    }
    await reportOutcomes(outcomes, { logger, name: options.worker.name, onOutcome: options.onOutcome }, 'task');
    return {
      invocationSchemaVersion: parsed.schema,
      treatMissingKeysAs: BatchOperationsResultCode.PERMANENT_FAILURE,
      invocationId: parsed.invocationId,
      results: outcomes.map(taskResult),
    };
  };
}

/**
 * The result of one task for its outcome: `Succeeded`, `TemporaryFailure` (retryable) or
 * `PermanentFailure`, with the reason as the result string (at most 512 characters).
 *
 * @example
 * taskResult({ messageId: 't1', status: 'skipped', reason: 'already done' });
 * // { taskId: 't1', resultCode: 'Succeeded', resultString: 'skipped: already done' }
 */
export function taskResult(outcome: RecordOutcome): BatchOperationsTaskResult {
  const resultCode =
    outcome.status !== RecordStatus.FAILED
      ? BatchOperationsResultCode.SUCCEEDED
      : outcome.retryable === false
        ? BatchOperationsResultCode.PERMANENT_FAILURE
        : BatchOperationsResultCode.TEMPORARY_FAILURE;
  const text = outcome.status === RecordStatus.FAILED ? outcome.reason : `${outcome.status}: ${outcome.reason}`;
  return {
    taskId: outcome.messageId,
    resultCode,
    resultString: text.length > MAX_RESULT_STRING ? `${text.slice(0, MAX_RESULT_STRING - 1)}…` : text,
  };
}

/**
 * Where the failure records of a job's tasks are kept: the recorder files them under this
 * pseudo-queue, `s3-batch-job-{jobId}` (the job id with anything but letters, digits, `-` and `_`
 * replaced), so `failures/s3-batch-job-{jobId}/` holds one job's permanent failures.
 *
 * @example
 * batchOperationsFailureSource('f3cc4f60-61f6'); // { name: 's3-batch-job-f3cc4f60-61f6', arn: 'arn:aws:s3:::s3-batch-job-f3cc4f60-61f6' }
 */
export function batchOperationsFailureSource(jobId: string): { readonly name: string; readonly arn: string } {
  const name = `s3-batch-job-${jobId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  return { name, arn: `arn:aws:s3:::${name}` };
}

/**
 * The id a task's failure record is filed under: its task id in base64url, since task ids are
 * opaque strings that may hold `/`, `+` or `=` (never valid in a record's key segment).
 *
 * @example
 * failureMessageId('dGFza2lkZ29lc2hlcmUK'); // 'ZEdGemEybGtaMjlsYzJobGNtVUs'
 */
export function failureMessageId(taskId: string): string {
  return Buffer.from(taskId, 'utf8').toString('base64url');
}

/** The event given to a Batch Operations handler is not an invocation of schema 1.0 or 2.0. Not retryable. */
export class BatchOperationsEventError extends RerunError {
  constructor(message: string) {
    super(message, { retryable: false });
    this.name = 'BatchOperationsEventError';
  }
}
