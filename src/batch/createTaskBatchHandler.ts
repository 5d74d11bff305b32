import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { retryableOf } from '../errors.js';
import type { FailureRecorder } from '../failures/FailureRecorder.js';
import { createInvocationLogger } from '../logging/lambdaContext.js';
import { describeError, type Logger, silentLogger } from '../logging/logger.js';
import { withFields } from '../logging/withFields.js';
import { type OutcomeHook, type RecordOutcome, RecordStatus } from '../worker/outcomes.js';
import { deferIfAsked, failedWithDeferral } from './deferMessage.js';
import { errorMessage } from './errorMessage.js';
import { defaultDeadlineMarginMs, receiveCountOf, runBatch } from './runBatch.js';
import type { QueueRetryTiming, SourceQueues } from './sourceQueues.js';

/** What a message asks for: a task, or the reason it is not a valid one (failed, not retryable). */
export type ParsedTask<T> =
  | {
      readonly kind: 'task';
      readonly task: T;
      /** What the task reads (shown in outcomes, e.g. a partition's prefix). */
      readonly source: { readonly bucket: string; readonly key: string };
    }
  | { readonly kind: 'invalid'; readonly reason: string };

/** How a task ended (failures are thrown; a RerunError's `retryable` is honoured). */
export interface TaskResult {
  readonly status: 'processed' | 'skipped';
  readonly reason: string;
  readonly outputKey?: string;
}

/** What a task is told when it runs. */
export interface TaskContext {
  readonly logger: Logger;
  /** The time left when the task started, ms. */
  readonly remainingTimeMs: number;
  /**
   * The invocation's time, for a task that checks it as it goes: stop when less than `marginMs`
   * is left (the handler's deadline margin), before the timeout.
   */
  readonly deadline: {
    remainingTimeMs(): number;
    readonly marginMs: number;
    /** The time left when the invocation started. */
    readonly timeLimitMs: number;
  };
}

/** Options of {@link createTaskBatchHandler}. */
export interface TaskBatchHandlerOptions<T> {
  /** Name used in logs. */
  readonly name: string;
  /** Reads a record's body (and attributes, e.g. SentTimestamp) into a task. Pure. */
  parse(record: SQSRecord): ParsedTask<T>;
  /** Runs one task idempotently. */
  run(task: T, context: TaskContext): Promise<TaskResult>;
  /**
   * Tasks run at once within one invocation (FIFO batches always run one at a time, in order).
   * @default 4
   */
  readonly concurrency?: number;
  /**
   * Stop starting tasks when less than this much of the function's time is left; unstarted ones are
   * reported as batch item failures and come back after the visibility timeout.
   * @default a tenth of the invocation's time, from 250 ms to 5 s (defaultDeadlineMarginMs)
   */
  readonly deadlineMarginMs?: number;
  /** @default silentLogger */
  readonly logger?: Logger;
  /**
   * Records why a message was given up on (see createSqsBatchHandler's option of the same name).
   * @default none
   */
  readonly failureRecorder?: FailureRecorder;
  /**
   * Called with every task's outcome, then flushed once per invocation (see createSqsBatchHandler's
   * option of the same name).
   * @default none
   */
  readonly onOutcome?: OutcomeHook;
  /**
   * When a task fails, how soon its message comes back: the seconds for its receive count and
   * whether the failure is retryable, set with ChangeMessageVisibility on `queues` (a deferral; the
   * outcome's reason says "deferred N s") when that is sooner than the queue's visibility timeout.
   * Without it, or when a call fails, a failed message comes back after the queue's visibility
   * timeout, which for a long task is long (6 x its timeout).
   * @default none: the queue's visibility timeout
   */
  readonly retryDelay?: {
    readonly queues: SourceQueues;
    seconds(receiveCount: number, retryable: boolean): number;
  };
}

/**
 * A Lambda handler for an SQS event source mapping with `ReportBatchItemFailures` whose messages are
 * tasks (not S3 events): the same contract as createSqsBatchHandler (classified outcome per record,
 * emitted to onRecordOutcome listeners; never throws for a record, which would fail the whole batch;
 * bounded concurrency; deadline-aware; FIFO order kept by failing the rest of a FIFO batch after a
 * failure), for work such as a partition task.
 *
 * @example
 * export const handler = createTaskBatchHandler({
 *   name: 'summarize',
 *   parse: (record) => ({ kind: 'task', task: record.body, source: { bucket: 'out', key: record.body } }),
 *   run: async (task) => ({ status: 'processed', reason: `did ${task}` }),
 * });
 */
export function createTaskBatchHandler<T>(
  options: TaskBatchHandlerOptions<T>,
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const concurrency = options.concurrency ?? 4;
  const baseLogger = withFields(options.logger ?? silentLogger, { worker: options.name });
  // Every line of an invocation carries Lambda's context keys, as the Powertools Logger names them.
  const forInvocation = createInvocationLogger(baseLogger);

  const processRecord = async (
    record: SQSRecord,
    context: Context,
    invocationLogger: Logger,
    deadline: TaskContext['deadline'],
    invocationStart: number,
  ): Promise<RecordOutcome> => {
    const base = { messageId: record.messageId, receiveCount: receiveCountOf(record) };
    const parsed = options.parse(record);
    const logger = withFields(invocationLogger, { messageId: record.messageId });
    if (parsed.kind === 'invalid') {
      // Every receive refuses it alike: with a retry delay it comes back in 1 s, so it reaches its DLQ
      // (with its failure record) in seconds, not after the queue's visibility timeout times its receives.
      const deferred = await retrySooner(options.retryDelay, record, base.receiveCount, false, logger, invocationStart);
      return {
        ...base,
        status: RecordStatus.FAILED,
        retryable: false,
        ...failedWithDeferral(parsed.reason, deferred),
      };
    }
    try {
      const result = await options.run(parsed.task, {
        logger,
        remainingTimeMs: context.getRemainingTimeInMillis(),
        deadline,
      });
      return {
        ...base,
        status: result.status === 'processed' ? RecordStatus.PROCESSED : RecordStatus.SKIPPED,
        reason: result.reason,
        source: parsed.source,
        ...(result.outputKey ? { outputKey: result.outputKey } : {}),
      };
    } catch (error) {
      const retryable = retryableOf(error);
      const deferred = await retrySooner(
        options.retryDelay,
        record,
        base.receiveCount,
        retryable,
        logger,
        invocationStart,
      );
      return {
        ...base,
        status: RecordStatus.FAILED,
        retryable,
        ...failedWithDeferral(error, deferred),
        source: parsed.source,
        ...(error instanceof Error ? { error: describeError(error) } : {}),
      };
    }
  };

  return (event, context) => {
    const invocationStart = Date.now();
    const logger = forInvocation(context);
    const timeLimitMs = context.getRemainingTimeInMillis();
    const deadline = {
      remainingTimeMs: () => context.getRemainingTimeInMillis(),
      marginMs: options.deadlineMarginMs ?? defaultDeadlineMarginMs(timeLimitMs),
      timeLimitMs,
    };
    return runBatch(event, context, (record) => processRecord(record, context, logger, deadline, invocationStart), {
      concurrency,
      ...(options.deadlineMarginMs !== undefined ? { deadlineMarginMs: options.deadlineMarginMs } : {}),
      subjectOf: (record) => {
        const parsed = options.parse(record);
        return parsed.kind === 'task' ? parsed.source : undefined;
      },
      logger,
      name: options.name,
      ...(options.failureRecorder ? { failureRecorder: options.failureRecorder } : {}),
      ...(options.onOutcome ? { onOutcome: options.onOutcome } : {}),
    });
  };
}

/**
 * Defers a failed task's message by `retryDelay`'s seconds when that is sooner than the queue's own
 * visibility timeout (never later: a queue set for quick retries, as under `rerun dev`, keeps them).
 * On the message's last receive (the queue's maxReceiveCount) by 1 s: a retry would only wait for
 * the redrive policy to move it to the DLQ. Returns the seconds deferred by, or undefined.
 */
async function retrySooner(
  retryDelay: TaskBatchHandlerOptions<unknown>['retryDelay'],
  record: SQSRecord,
  receiveCount: number,
  retryable: boolean,
  logger: Logger,
  invocationStart: number,
): Promise<number | undefined> {
  if (!retryDelay) return undefined;
  let timing: QueueRetryTiming;
  try {
    timing = await retryDelay.queues.retryTimingOf(record.eventSourceARN);
  } catch (error) {
    logger.warn("could not read the queue's visibility timeout; the message returns after it", {
      error: errorMessage(error),
    });
    return undefined;
  }
  const last = timing.maxReceiveCount !== undefined && receiveCount >= timing.maxReceiveCount;
  const seconds = last ? 1 : retryDelay.seconds(receiveCount, retryable);
  if (!(seconds < timing.visibilityTimeoutSeconds)) return undefined;
  return deferIfAsked(retryDelay.queues, record, { retryAfterSeconds: seconds }, logger, Date.now, invocationStart);
}
