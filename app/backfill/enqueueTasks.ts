import type { SQSClient } from '@aws-sdk/client-sqs';
import { RerunError } from '../../src/errors.js';
import type { RateLimiter } from '../common/RateLimiter.js';
import { EnqueueRefusedError, sendMessageBatch } from '../common/sendMessageBatch.js';
import { summaryTaskEnvelope } from '../partition/summaryTask.js';
import type { PlannedTask } from './planBackfill.js';

/** Some tasks could not be enqueued. Retryable: running the same backfill again resumes it. */
export class BackfillEnqueueError extends RerunError {
  constructor(message: string) {
    super(message, { retryable: true });
    this.name = 'BackfillEnqueueError';
  }
}

/** Options of {@link enqueueTasks}. */
export interface EnqueueTasksOptions {
  readonly sqs: Pick<SQSClient, 'send'>;
  readonly queueUrl: string;
  readonly tasks: readonly PlannedTask[];
  /** @default no limit */
  readonly limiter?: RateLimiter;
  /** Stops between batches (an interrupted backfill is resumed by running it again). */
  readonly signal?: AbortSignal;
  /** Called after each batch with the number sent so far. */
  readonly onSent?: (sent: number) => void;
}

/**
 * Sends one message per task, ten per SendMessageBatch (the SQS maximum). On a FIFO queue (URL ends
 * in `.fifo`) each message carries its deterministic identity: `MessageGroupId` = the partition and
 * `MessageDeduplicationId` = partition + lineage hash, so SQS drops a task sent again within its
 * 5-minute deduplication interval (a backfill interrupted and resumed, or run twice back to back).
 * A standard queue has no deduplication; duplicates are then absorbed by the worker's done-check.
 * Entries SQS rejects are retried once, then reported.
 *
 * @example
 * const sent = await enqueueTasks({ sqs, queueUrl, tasks: plan.tasks });
 */
export async function enqueueTasks(options: EnqueueTasksOptions): Promise<number> {
  let sent = 0;
  for (let start = 0; start < options.tasks.length; start += 10) {
    if (options.signal?.aborted) break;
    const batch = options.tasks.slice(start, start + 10);
    await options.limiter?.take(batch.length);
    const messages = batch.map((task) => summaryTaskEnvelope(task.day, task.lineageHash, task.coverageDigest));
    try {
      sent += await sendMessageBatch(options.sqs, options.queueUrl, messages, 'Run the same backfill again to resume.');
    } catch (error) {
      if (error instanceof EnqueueRefusedError) throw new BackfillEnqueueError(error.message);
      throw error;
    }
    options.onSent?.(sent);
  }
  return sent;
}
