import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { AwsClients } from '../aws/clients.js';
import { createTaskBatchHandler } from '../batch/createTaskBatchHandler.js';
import { sourceQueues } from '../batch/sourceQueues.js';
import { isRerunErrorNamed } from '../errors.js';
import type { FailureRecorder } from '../failures/FailureRecorder.js';
import { DEFAULT_FAILURE_PREFIX } from '../failures/failureRecord.js';
import { S3FailureRecorder } from '../failures/S3FailureRecorder.js';
import { type Logger, silentLogger } from '../logging/logger.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';
import type { PartitionWindow } from '../partitions/partitionScheme.js';
import { S3ObjectStore } from '../s3/S3ObjectStore.js';
import { S3PartitionStore } from '../s3/S3PartitionStore.js';
import type { OutcomeHook } from '../worker/outcomes.js';
import { type ContinuedMessage, continueWindow } from './continueWindow.js';
import type { WindowTask } from './defineWindowTask.js';
import { type WindowPartsPendingError, WindowTaskConfigurationError } from './errors.js';
import { windowOutputKeys } from './windowOutputLayout.js';
import { parseWindowTaskMessage } from './windowTaskMessage.js';

/** Options of {@link createWindowTaskHandler}. */
export interface WindowTaskHandlerOptions {
  /** The window task the stage runs (defineWindowTask). */
  // biome-ignore lint/suspicious/noExplicitAny: any task's result and record types are accepted here
  readonly task: WindowTask<any, any>;
  /** S3 for the task's reads and writes; SQS to read the queue's maxReceiveCount for failure records. */
  readonly clients: Pick<AwsClients, 's3' | 'sqs'>;
  /**
   * The stage's name in its messages: a message for another stage is refused (failed, not retryable).
   * @default the task's `name`
   */
  readonly stage?: string;
  /**
   * The prefix of the failure records, in the task's output bucket.
   * @default DEFAULT_FAILURE_PREFIX ('failures/')
   */
  readonly failurePrefix?: string;
  /**
   * Where give-ups are recorded for `rerun redrive`.
   * @default an S3FailureRecorder writing under failurePrefix in the task's output bucket
   */
  readonly failureRecorder?: FailureRecorder;
  /**
   * Stop starting a window, and stop a window that is reading its inputs, when less than this much
   * of the function's time is left (the window task's deadline).
   * @default a tenth of the invocation's time, from 250 ms to 5 s (defaultDeadlineMarginMs)
   */
  readonly deadlineMarginMs?: number;
  /**
   * Bounds of one window (see WindowRunOptions' `maxInputs`, `maxOutputBytes`, `maxRounds` and `readAhead`).
   * @default DEFAULT_MAX_WINDOW_INPUTS, DEFAULT_MAX_WINDOW_OUTPUT_BYTES, 4 rounds, DEFAULT_WINDOW_READ_AHEAD
   */
  readonly limits?: {
    readonly maxInputs?: number;
    readonly maxOutputBytes?: number;
    readonly maxRounds?: number;
    readonly readAhead?: number;
  };
  /**
   * Called with every window's outcome, then flushed once per invocation (e.g. `emfOutcomeMetrics()`).
   * @default none
   */
  readonly onOutcome?: OutcomeHook;
  /**
   * The clock (epoch ms) that measures how long a window has read its inputs.
   * @default Date.now
   */
  readonly now?: () => number;
  /** @default silentLogger */
  readonly logger?: Logger;
  /**
   * How soon a failed window's message comes back (ChangeMessageVisibility): the seconds for its
   * receive count and whether the failure is retryable. `false`: after the queue's visibility
   * timeout, which for a window stage is 6 x its 900 s timeout (90 minutes).
   * @default windowRetryDelaySeconds: 1, 2, 4, 8 minutes for a retryable failure; 1 s for one that is not, and on the last receive
   */
  readonly retryDelay?: false | ((receiveCount: number, retryable: boolean) => number);
}

/**
 * How soon a failed window's message comes back by default: a retryable failure (a throttle, a
 * deadline, inputs that kept changing) after 60 s, doubling with each receive up to 15 minutes; a
 * failure that is not retryable after 1 s, since every receive fails alike and the sooner the
 * message reaches its DLQ (with its failure record) the sooner an operator sees it. The queue's own
 * visibility timeout (6 x the function's, 90 minutes at a window stage's defaults) would hold a
 * scheduled window's FIFO group, and the next scheduled window behind it, for 5 x 90 minutes.
 *
 * @example
 * windowRetryDelaySeconds(1, true); // 60
 * windowRetryDelaySeconds(3, true); // 240
 * windowRetryDelaySeconds(2, false); // 1
 */
export function windowRetryDelaySeconds(receiveCount: number, retryable: boolean): number {
  if (!retryable) return 1;
  return Math.min(900, 60 * 2 ** Math.max(0, receiveCount - 1));
}

/** The names of {@link WindowTaskHandlerOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const WINDOW_TASK_HANDLER_OPTION_NAMES = {
  clients: true,
  deadlineMarginMs: true,
  failurePrefix: true,
  failureRecorder: true,
  limits: true,
  logger: true,
  now: true,
  onOutcome: true,
  retryDelay: true,
  stage: true,
  task: true,
} as const satisfies OptionNames<WindowTaskHandlerOptions>;

/** The names of {@link WindowTaskHandlerOptions}' `limits`, checked by checkOptions. */
export const WINDOW_TASK_HANDLER_LIMIT_NAMES = {
  maxInputs: true,
  maxOutputBytes: true,
  maxRounds: true,
  readAhead: true,
} as const satisfies OptionNames<NonNullable<WindowTaskHandlerOptions['limits']>>;

/**
 * The SQS handler of a user's window stage: each message names the stage and one window
 * ({@link windowTaskMessage}, or a schedule's `"window": "closed"`), and the handler brings that
 * window's output up to date with `task.run(window)` under the invocation's deadline. Each record
 * gets a classified outcome: processed (published or replaced), skipped with the reason (already
 * current: nothing is rewritten), or failed, retryable or not (the task's error says; a message that
 * is malformed, for another stage or names a window the stage's scheme does not have is refused by
 * name, not retryable). A give-up gets a failure record for `rerun redrive`; the partial batch
 * response lists what must come back. Windows run one at a time, in order (a FIFO queue).
 *
 * @example
 * import { createAwsClients } from 'rerun-pipeline';
 * import { createWindowTaskHandler } from 'rerun-pipeline/window';
 * import { dailyCounts } from './dailyCounts.js';
 * export const handler = createWindowTaskHandler({ task: dailyCounts, clients: createAwsClients() });
 */
export function createWindowTaskHandler(
  options: WindowTaskHandlerOptions,
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  checkOptions(
    'createWindowTaskHandler',
    options,
    WINDOW_TASK_HANDLER_OPTION_NAMES,
    (m) => new WindowTaskConfigurationError(options.task?.definition?.name ?? '(unnamed)', m),
  );
  if (options.limits !== undefined) {
    checkOptions(
      'createWindowTaskHandler limits',
      options.limits,
      WINDOW_TASK_HANDLER_LIMIT_NAMES,
      (m) => new WindowTaskConfigurationError(options.task?.definition?.name ?? '(unnamed)', m),
    );
  }
  const { task } = options;
  const stage = options.stage ?? task.definition.name;
  const { bucket } = task.definition.output;
  const store = new S3ObjectStore(options.clients.s3);
  const reader = new S3PartitionStore(options.clients.s3);
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const limits = options.limits ?? {};
  const queues = sourceQueues(options.clients.sqs);
  /**
   * A window built from its parts that made progress goes on in a new message (continueWindow.ts):
   * this one is then done. When the send fails, or for any other error, the error stands.
   */
  const continueOrThrow = async (
    error: unknown,
    message: ContinuedMessage,
    outputKey: string,
    log: Logger,
  ): Promise<{ status: 'processed'; reason: string; outputKey: string }> => {
    if (!isRerunErrorNamed(error, 'WindowPartsPendingError')) throw error;
    const pending = error as WindowPartsPendingError;
    try {
      await continueWindow(queues, message);
    } catch (sendError) {
      log.warn('could not continue the window in a new message; it comes back after the visibility timeout', {
        error: sendError instanceof Error ? sendError.message : String(sendError),
      });
      throw error;
    }
    const progress = `${pending.current} of ${pending.total} parts are current (${pending.built} built now)`;
    return { status: 'processed', reason: `${progress}; the rest continue in a new message`, outputKey };
  };
  return createTaskBatchHandler<{ window: PartitionWindow; origin: string; queueArn: string; messageId: string }>({
    name: stage,
    logger,
    // A window reads many inputs; one at a time keeps the memory bound of one window per invocation.
    concurrency: 1,
    ...(options.deadlineMarginMs !== undefined ? { deadlineMarginMs: options.deadlineMarginMs } : {}),
    ...(options.onOutcome ? { onOutcome: options.onOutcome } : {}),
    ...(options.retryDelay === false
      ? {}
      : { retryDelay: { queues, seconds: options.retryDelay ?? windowRetryDelaySeconds } }),
    failureRecorder:
      options.failureRecorder ??
      new S3FailureRecorder({
        store,
        sqs: options.clients.sqs,
        bucket,
        prefix: options.failurePrefix ?? DEFAULT_FAILURE_PREFIX,
        logger,
        // A window task is about a window, not about one input: nothing to index by object.
        indexByObject: false,
        // The retry delay's lookup of the queue holds its maxReceiveCount: one lookup serves both.
        maxReceiveCountOf: queues.maxReceiveCountOf,
      }),
    parse(record) {
      const sent = Number(record.attributes?.SentTimestamp);
      const parsed = parseWindowTaskMessage(record.body, {
        stage,
        scheme: task.scheme,
        ...(Number.isFinite(sent) ? { sentTimestampMs: sent } : {}),
      });
      if (parsed.kind === 'invalid') return parsed;
      return {
        kind: 'task',
        task: {
          window: parsed.window,
          origin: parsed.origin,
          queueArn: record.eventSourceARN,
          messageId: record.messageId,
        },
        source: { bucket, key: windowOutputKeys(task.scheme, parsed.window, task.definition.output).outputKey },
      };
    },
    async run(work, context) {
      const run = task.run(work.window, {
        store,
        reader,
        logger: context.logger,
        ...(limits.maxInputs !== undefined ? { maxInputs: limits.maxInputs } : {}),
        ...(limits.maxOutputBytes !== undefined ? { maxOutputBytes: limits.maxOutputBytes } : {}),
        ...(limits.maxRounds !== undefined ? { maxRounds: limits.maxRounds } : {}),
        ...(limits.readAhead !== undefined ? { readAhead: limits.readAhead } : {}),
        deadline: { ...context.deadline, now },
      });
      const message = { stage, window: work.window.name, queueArn: work.queueArn, messageId: work.messageId };
      const outputKey = windowOutputKeys(task.scheme, work.window, task.definition.output).outputKey;
      const outcome = await run.catch((error: unknown) => continueOrThrow(error, message, outputKey, context.logger));
      const origin = work.origin === 'window' ? '' : ` [${work.origin}]`;
      return {
        status: outcome.status,
        reason: `${work.window.name}: ${outcome.reason}${origin}`,
        outputKey: outcome.outputKey,
      };
    },
  });
}
