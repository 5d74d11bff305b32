import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { AwsClients } from '../../src/aws/clients.js';
import { createTaskBatchHandler } from '../../src/batch/createTaskBatchHandler.js';
import { sourceQueues } from '../../src/batch/sourceQueues.js';
import type { FailureRecorder } from '../../src/failures/FailureRecorder.js';
import { S3FailureRecorder } from '../../src/failures/S3FailureRecorder.js';
import type { Day } from '../../src/keys/partition.js';
import { type Logger, silentLogger } from '../../src/logging/logger.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { windowRetryDelaySeconds } from '../../src/window/createWindowTaskHandler.js';
import type { OutcomeHook } from '../../src/worker/outcomes.js';
import { topology as defaultTopology, type Topology } from '../topology.js';
import { SUMMARIZE_CODE_VERSION } from './codeVersion.js';
import type { InputRules } from './inputCoverage.js';
import { S3PartitionStore } from './S3PartitionStore.js';
import { summarizePartition } from './summarizePartition.js';
import { lineagePrefix, summaryLayout } from './summaryLayout.js';
import { parseSummaryTask } from './summaryTask.js';

/** Options of {@link createSummarizeHandler}. */
export interface SummarizeHandlerOptions {
  readonly clients: Pick<AwsClients, 's3' | 'sqs'>;
  /** The output bucket: holds the normalized outputs (lineage) and receives the summaries. */
  readonly outputBucket: string;
  /** The input bucket whose normalized outputs are summarized (it names their prefix). */
  readonly inputBucket: string;
  /** @default the project's topology (app/topology.ts) */
  readonly topology?: Topology;
  /** @default SUMMARIZE_CODE_VERSION */
  readonly codeVersion?: string;
  /**
   * Where give-ups are recorded for `rerun redrive`.
   * @default an S3FailureRecorder writing failures/ in the output bucket
   */
  readonly failureRecorder?: FailureRecorder;
  /**
   * The queue's maxReceiveCount for the default failure recorder (the stack gives it as
   * MAX_RECEIVE_COUNT); without it the recorder asks the queue (GetQueueUrl, GetQueueAttributes)
   * before a cold sandbox's first task.
   * @default read from the queue's redrive policy
   */
  readonly maxReceiveCount?: number;
  /**
   * The day's inputs and the worker's key rules, so each summary records which inputs it covers and
   * which it does not (see summarizePartition's `inputs`).
   * @default undefined: no coverage record
   */
  readonly inputs?: InputRules;
  /**
   * Stop starting tasks, and stop a task that is reading its day, when less than this much of the
   * function's time is left (see summarizePartition's `deadline`).
   * @default a tenth of the invocation's time, from 250 ms to 5 s (defaultDeadlineMarginMs)
   */
  readonly deadlineMarginMs?: number;
  /**
   * Bounds of one day's summary (see summarizePartition's `maxInputs` and `maxSummaryBytes`).
   * @default DEFAULT_MAX_SUMMARY_INPUTS and DEFAULT_MAX_SUMMARY_BYTES
   */
  readonly limits?: { readonly maxInputs?: number; readonly maxSummaryBytes?: number };
  /**
   * How soon a failed task's message comes back (ChangeMessageVisibility): the seconds for its
   * receive count and whether the failure is retryable, as a window stage's. `false`: after the
   * queue's visibility timeout, 6 x the function's 300 s timeout (30 minutes), so a task that cannot
   * succeed reaches its DLQ after 5 receives, 2.5 hours.
   * @default windowRetryDelaySeconds: 1, 2, 4, 8 minutes for a retryable failure; 1 s for one that is not, and on the last receive
   */
  readonly retryDelay?: false | ((receiveCount: number, retryable: boolean) => number);
  /**
   * Called with every task's outcome, then flushed once per invocation: e.g. `emfOutcomeMetrics()`
   * (src/metrics/), as the normalize worker does.
   * @default none
   */
  readonly onOutcome?: OutcomeHook;
  /**
   * The clock (epoch ms) that measures how long a task has read its day.
   * @default Date.now
   */
  readonly now?: () => number;
  /** @default silentLogger */
  readonly logger?: Logger;
}

/**
 * The summary stage's SQS handler: each message is one partition task (`{"type":"summarize",
 * "partition":"dt=..."}` from a backfill, or `{"window":"yesterday","at":...}` from the daily
 * schedule), run by summarizePartition: list the day's lineage, done-check, compute, stage, validate,
 * publish with a conditional put, record the manifest marker.
 *
 * @example
 * const handler = createSummarizeHandler({ clients, outputBucket: 'rerun-output', inputBucket: 'rerun-input' });
 */
export function createSummarizeHandler(
  options: SummarizeHandlerOptions,
): (event: SQSEvent, context: Context) => Promise<SQSBatchResponse> {
  const t = options.topology ?? defaultTopology;
  const layout = summaryLayout(options.inputBucket, t);
  const store = new S3ObjectStore(options.clients.s3);
  const reader = new S3PartitionStore(options.clients.s3);
  const logger = options.logger ?? silentLogger;
  const codeVersion = options.codeVersion ?? SUMMARIZE_CODE_VERSION;
  const now = options.now ?? Date.now;
  const queues = sourceQueues(options.clients.sqs);
  return createTaskBatchHandler<{ day: Day; origin: string }>({
    name: t.summarize.name,
    logger,
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
        bucket: options.outputBucket,
        prefix: t.failurePrefix,
        logger,
        // A task is about a partition, not about one input: nothing to index by object.
        indexByObject: false,
        // Without the stack's count, the retry delay's lookup of the queue holds it: one lookup serves both.
        ...(options.maxReceiveCount !== undefined
          ? { maxReceiveCount: options.maxReceiveCount }
          : { maxReceiveCountOf: queues.maxReceiveCountOf }),
      }),
    parse(record) {
      const sent = Number(record.attributes?.SentTimestamp);
      const parsed = parseSummaryTask(record.body, Number.isFinite(sent) ? sent : undefined);
      if (parsed.kind === 'invalid') return parsed;
      return {
        kind: 'task',
        task: { day: parsed.day, origin: parsed.origin },
        source: { bucket: options.outputBucket, key: lineagePrefix(layout, 'normalized', parsed.day) },
      };
    },
    async run(task, context) {
      const outcome = await summarizePartition(task.day, {
        store,
        reader,
        bucket: options.outputBucket,
        layout,
        codeVersion,
        logger: context.logger,
        ...(options.inputs ? { inputs: options.inputs } : {}),
        ...options.limits,
        deadline: { ...context.deadline, now },
      });
      const origin = task.origin === 'partition' ? '' : ` [${task.origin}]`;
      return { status: outcome.status, reason: `${outcome.reason}${origin}`, outputKey: outcome.summaryKey };
    },
  });
}
