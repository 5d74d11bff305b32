import { DeleteMessageBatchCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { Logger } from '../../src/logging/logger.js';
import { describeError } from './describeError.js';

/** A delete SQS refused (for example an expired receipt handle): that message comes back. */
export interface DeleteFailure {
  messageId: string;
  code: string;
  message: string;
}

/**
 * The deleter: deletes the messages of a settled invocation, as the event source mapping does for
 * the records a function did not report as failed. DeleteMessageBatch takes at most 10 entries, and
 * entries can fail one by one: an entry SQS reports as its own fault (SenderFault false) is retried
 * once; a sender fault (for example an expired receipt handle) cannot succeed on retry, so the
 * message comes back instead.
 *
 * @example
 * const { deleted, failures } = await deleteMessages({ sqs, queueUrl, logger }, messages);
 */
export async function deleteMessages(
  queue: { readonly sqs: SQSClient; readonly queueUrl: string; readonly logger: Logger },
  messages: readonly Message[],
): Promise<{ deleted: string[]; failures: DeleteFailure[] }> {
  const deleted: string[] = [];
  const failures: DeleteFailure[] = [];
  for (let start = 0; start < messages.length; start += 10) {
    let pending = messages.slice(start, start + 10);
    for (let attempt = 1; attempt <= 2 && pending.length > 0; attempt++) {
      const entries = pending.map((m, i) => ({ Id: `m${i}`, ReceiptHandle: m.ReceiptHandle as string }));
      const retry: Message[] = [];
      try {
        const response = await queue.sqs.send(
          new DeleteMessageBatchCommand({ QueueUrl: queue.queueUrl, Entries: entries }),
        );
        for (const ok of response.Successful ?? []) {
          const message = pending[Number(ok.Id?.slice(1))];
          if (message?.MessageId) deleted.push(message.MessageId);
        }
        for (const failed of response.Failed ?? []) {
          const message = pending[Number(failed.Id?.slice(1))];
          if (!message?.MessageId) continue;
          if (!failed.SenderFault && attempt < 2) retry.push(message);
          else
            failures.push({
              messageId: message.MessageId,
              code: failed.Code ?? 'Unknown',
              message: failed.Message ?? '',
            });
        }
      } catch (error) {
        if (attempt < 2) retry.push(...pending);
        else {
          for (const m of pending) {
            failures.push({ messageId: m.MessageId as string, code: 'RequestFailed', message: describeError(error) });
          }
        }
      }
      pending = retry;
    }
  }
  if (failures.length > 0) {
    queue.logger.warn('some messages could not be deleted; they will be received again', { failures });
  }
  return { deleted, failures };
}
