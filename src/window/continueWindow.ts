import { createHash } from 'node:crypto';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SourceQueues } from '../batch/sourceQueues.js';
import { windowTaskMessage } from './windowTaskMessage.js';

/**
 * A window built from its parts goes on in a new message: the window's handler sends the same
 * window's task message to the queue the current one came from, then acknowledges the current one.
 * The new message starts at receive count 1, so a window whose parts take many invocations does not
 * spend the receives that would dead-letter it; each message it takes has built at least one part,
 * so the chain ends once every part is current.
 *
 * On a FIFO queue it joins the window's own message group (the current message still holds the
 * group, so it is delivered after this one is acknowledged) with a deduplication id made from the
 * current message's id: a handler that dies after the send and sends again from a redelivery of
 * the same message within 5 minutes sends nothing new.
 */

/** Which message is continued, and where it came from. */
export interface ContinuedMessage {
  readonly stage: string;
  readonly window: string;
  /** The ARN of the queue it came from. */
  readonly queueArn: string;
  readonly messageId: string;
}

/**
 * Sends the window's message again, to the queue `message` came from.
 *
 * @example
 * await continueWindow(queues, { stage: 'daily', window: '2026-12-05', queueArn: record.eventSourceARN, messageId: record.messageId });
 */
export async function continueWindow(queues: SourceQueues, message: ContinuedMessage): Promise<void> {
  const token = `continued-${createHash('sha256').update(message.messageId).digest('hex').slice(0, 16)}`;
  const envelope = windowTaskMessage({ stage: message.stage, window: message.window, token });
  const fifo = message.queueArn.endsWith('.fifo');
  await queues.sqs.send(
    new SendMessageCommand({
      QueueUrl: await queues.queueUrlOf(message.queueArn),
      MessageBody: envelope.body,
      ...(fifo ? { MessageGroupId: envelope.groupId, MessageDeduplicationId: envelope.deduplicationId } : {}),
    }),
  );
}
