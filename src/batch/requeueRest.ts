import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { s3EventBodyFrom } from '../intake/splitS3EventBody.js';
import { describeError, type Logger } from '../logging/logger.js';
import type { ObjectOutcome } from '../worker/ObjectOutcome.js';
import { type RecordOutcome, RecordStatus } from '../worker/outcomes.js';
import { errorMessage } from './errorMessage.js';
import { isFifo, type SourceQueues } from './sourceQueues.js';

/** The id of the message whose remaining records a requeued message carries. */
export const REQUEUED_FROM_ATTRIBUTE = 'rerun-requeued-from';
/** How many requeues in a row did no record (reset when one did). */
export const REQUEUES_ATTRIBUTE = 'rerun-requeues';
/** Requeues in a row without a record done, after which the message fails and meets the redrive policy. */
const MAX_REQUEUES_WITHOUT_PROGRESS = 5;

/** The requeue count of a message this handler sent back to its queue, or undefined for any other. */
export function requeuesOf(record: SQSRecord): number | undefined {
  const attributes = record.messageAttributes as Record<string, { stringValue?: string } | undefined> | undefined;
  if (!attributes?.[REQUEUED_FROM_ATTRIBUTE]) return undefined;
  const n = Number(attributes[REQUEUES_ATTRIBUTE]?.stringValue ?? '0');
  return Number.isFinite(n) && n >= 0 ? n : 0;
}

/** Where the deadline stopped a message: the records from `index` on are not done. */
export interface StoppedAt {
  readonly index: number;
  readonly why: string;
  readonly error?: unknown;
}

/**
 * The deadline came near with records of this message not done: send those back to the worker's
 * own queue as one new message (the same body with only the remaining records, so each keeps its
 * eventTime, eTag and sequencer) and acknowledge this one. The new message starts at receive
 * count 1: a crowded batch or a long message does not spend the receives that would move a
 * healthy input to the DLQ. When that cannot be done (a FIFO queue, whose order a new message
 * would break; a body that cannot be split; too many requeues without progress; a failed send),
 * the message fails retryably and comes back whole, which is safe: its done records are found
 * done (idempotent), at the cost of a receive.
 *
 * @example
 * return requeueRest(queues, record, intake.objects, outcomes, { index, why }, base, logger);
 */
export async function requeueRest(
  queues: SourceQueues,
  record: SQSRecord,
  objects: readonly { readonly bucket: string; readonly key: string }[],
  outcomes: readonly ObjectOutcome[],
  stopped: StoppedAt,
  base: { readonly messageId: string; readonly receiveCount: number },
  logger: Logger,
): Promise<RecordOutcome> {
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
    const sent = await queues.sqs.send(
      new SendMessageCommand({
        QueueUrl: await queues.queueUrlOf(record.eventSourceARN),
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
}
