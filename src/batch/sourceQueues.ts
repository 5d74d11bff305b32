import { GetQueueUrlCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';

/** The queues records come from, as the batch handler sends to them (a deferral, a requeue). */
export interface SourceQueues {
  readonly sqs: SQSClient;
  /** The URL of the queue with this ARN: one GetQueueUrl per queue, tried again after a failure. */
  readonly queueUrlOf: (arn: string) => Promise<string>;
}

/**
 * The queues of one handler, their URLs looked up once (a record names its queue by ARN only).
 *
 * @example
 * const queues = sourceQueues(sqs);
 * const url = await queues.queueUrlOf(record.eventSourceARN);
 */
export function sourceQueues(sqs: SQSClient): SourceQueues {
  const queueUrls = new Map<string, Promise<string>>();
  const queueUrlOf = (arn: string): Promise<string> => {
    let url = queueUrls.get(arn);
    if (!url) {
      const [, , , , account, name] = arn.split(':');
      url = sqs
        .send(new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }))
        .then((out) => out.QueueUrl ?? Promise.reject(new Error(`no URL for queue ${arn}`)));
      url.catch(() => queueUrls.delete(arn));
      queueUrls.set(arn, url);
    }
    return url;
  };
  return { sqs, queueUrlOf };
}

/** A FIFO queue: nothing may be sent back into it out of order, so its removals do not look again. */
export function isFifo(record: SQSRecord): boolean {
  return record.eventSourceARN?.endsWith('.fifo') === true;
}
