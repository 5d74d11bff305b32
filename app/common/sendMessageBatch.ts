import { SendMessageBatchCommand, type SendMessageBatchRequestEntry, type SQSClient } from '@aws-sdk/client-sqs';
import { RerunError } from '../../src/errors.js';

/** Some messages could not be enqueued. Retryable: running the same command again resumes it. */
export class EnqueueRefusedError extends RerunError {
  constructor(message: string) {
    super(message, { retryable: true });
    this.name = 'EnqueueRefusedError';
  }
}

/** One message of a batch. */
export interface BatchMessage {
  readonly body: string;
  /** FIFO queues only. */
  readonly groupId?: string;
  /** FIFO queues only. */
  readonly deduplicationId?: string;
}

/**
 * Sends up to ten messages in one SendMessageBatch (the SQS maximum) and returns how many SQS
 * accepted. Entries SQS rejects are retried once; a sender fault or a second refusal throws an
 * {@link EnqueueRefusedError} naming the queue and `resumeHint` (what the operator runs next).
 * The FIFO fields are sent only to a queue whose URL ends in `.fifo`.
 *
 * @example
 * const sent = await sendMessageBatch(sqs, queueUrl, [{ body: '{}' }], 'Run the same reprocess again to resume.');
 */
export async function sendMessageBatch(
  sqs: Pick<SQSClient, 'send'>,
  queueUrl: string,
  messages: readonly BatchMessage[],
  resumeHint: string,
): Promise<number> {
  if (messages.length > 10) throw new RangeError(`SendMessageBatch takes at most 10 messages (got ${messages.length})`);
  const fifo = queueUrl.endsWith('.fifo');
  let entries: SendMessageBatchRequestEntry[] = messages.map((m, i) => ({
    Id: `m${i}`,
    MessageBody: m.body,
    ...(fifo && m.groupId ? { MessageGroupId: m.groupId } : {}),
    ...(fifo && m.deduplicationId ? { MessageDeduplicationId: m.deduplicationId } : {}),
  }));
  let sent = 0;
  for (let attempt = 1; entries.length > 0; attempt++) {
    const out = await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
    sent += out.Successful?.length ?? 0;
    const failed = out.Failed ?? [];
    if (failed.length === 0) break;
    if (attempt >= 2 || failed.some((f) => f.SenderFault)) {
      throw new EnqueueRefusedError(
        `SQS refused ${failed.length} message(s) of ${queueUrl}: ` +
          `${failed.map((f) => `${f.Code}: ${f.Message}`).join('; ')}. ${resumeHint}`,
      );
    }
    const retry = new Set(failed.map((f) => f.Id));
    entries = entries.filter((e) => retry.has(e.Id));
  }
  return sent;
}
