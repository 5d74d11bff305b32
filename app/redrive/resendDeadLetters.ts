import {
  DeleteMessageCommand,
  GetQueueUrlCommand,
  type Message,
  type MessageAttributeValue,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { RateLimiter } from '../common/RateLimiter.js';
import { describeError } from './describeError.js';
import { RedriveError } from './RedriveError.js';
import { releaseMessages } from './releaseMessages.js';

/** What the fallback takes of a redrive's options (see RedriveOptions in redriveDeadLetters.ts). */
export interface ResendOptions {
  readonly signal?: AbortSignal;
  readonly onProgress?: (moved: number, total: number) => void;
}

/** The fallback: send each held message to its source queue, then delete it from the DLQ. */
export async function resend(
  sqs: Pick<SQSClient, 'send'>,
  dlqUrl: string,
  messages: readonly Message[],
  sourceQueueUrl: string | undefined,
  ratePerSecond: number,
  options: ResendOptions,
): Promise<{ moved: number; failed: { messageId: string; error: string }[] }> {
  const limiter = new RateLimiter({ perSecond: ratePerSecond });
  const urls = new Map<string, string>();
  const failed: { messageId: string; error: string }[] = [];
  let moved = 0;
  const remaining: Message[] = [];
  for (const [index, message] of messages.entries()) {
    if (options.signal?.aborted) {
      remaining.push(...messages.slice(index));
      break;
    }
    await limiter.take();
    const id = message.MessageId as string;
    let target: string;
    try {
      const sourceArn = message.Attributes?.DeadLetterQueueSourceArn;
      target = sourceArn ? await urlOfArn(sqs, sourceArn, urls) : (sourceQueueUrl as string);
      const fifo = target.endsWith('.fifo');
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: target,
          MessageBody: message.Body ?? '',
          ...(message.MessageAttributes ? { MessageAttributes: copyAttributes(message.MessageAttributes) } : {}),
          ...(fifo
            ? {
                MessageGroupId: message.Attributes?.MessageGroupId ?? 'redrive',
                MessageDeduplicationId: `redrive-${id}`,
              }
            : {}),
        }),
      );
    } catch (error) {
      // Not sent: it stays in the DLQ (visible again once its hold expires).
      failed.push({ messageId: id, error: `not sent: ${describeError(error)}` });
      remaining.push(message);
      continue;
    }
    try {
      await sqs.send(new DeleteMessageCommand({ QueueUrl: dlqUrl, ReceiptHandle: message.ReceiptHandle as string }));
      moved++;
    } catch (error) {
      failed.push({
        messageId: id,
        error: `sent to ${target} but not deleted from the DLQ (${describeError(error)}): the next redrive moves it again, a duplicate the worker absorbs`,
      });
    }
    options.onProgress?.(moved, messages.length);
  }
  await releaseMessages(sqs, dlqUrl, remaining).catch(() => {});
  return { moved, failed };
}

async function urlOfArn(sqs: Pick<SQSClient, 'send'>, arn: string, cache: Map<string, string>): Promise<string> {
  const cached = cache.get(arn);
  if (cached) return cached;
  const [, , , , account, name] = arn.split(':');
  const url = (await sqs.send(new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }))).QueueUrl;
  if (!url) throw new RedriveError(`no URL for the source queue ${arn}`);
  cache.set(arn, url);
  return url;
}

function copyAttributes(attributes: Record<string, MessageAttributeValue>): Record<string, MessageAttributeValue> {
  return Object.fromEntries(
    Object.entries(attributes).map(([name, v]) => [
      name,
      {
        DataType: v.DataType,
        ...(v.StringValue !== undefined ? { StringValue: v.StringValue } : {}),
        ...(v.BinaryValue !== undefined ? { BinaryValue: v.BinaryValue } : {}),
      },
    ]),
  );
}
