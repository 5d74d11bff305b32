import { GetQueueAttributesCommand, GetQueueUrlCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';

/** The queues records come from, as the batch handler sends to them (a deferral, a requeue). */
export interface SourceQueues {
  readonly sqs: SQSClient;
  /** The URL of the queue with this ARN: one GetQueueUrl per queue, tried again after a failure. */
  readonly queueUrlOf: (arn: string) => Promise<string>;
  /**
   * The queue's visibility timeout, seconds: one GetQueueAttributes per queue (which the event
   * source mapping's role allows), tried again after a failure. Read only on a failure's path.
   */
  readonly visibilityTimeoutOf: (arn: string) => Promise<number>;
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
  const visibilities = new Map<string, Promise<number>>();
  const visibilityTimeoutOf = (arn: string): Promise<number> => {
    let seconds = visibilities.get(arn);
    if (!seconds) {
      seconds = queueUrlOf(arn)
        .then((url) =>
          sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['VisibilityTimeout'] })),
        )
        .then((out) => {
          const value = Number(out.Attributes?.VisibilityTimeout);
          return Number.isFinite(value) ? value : Promise.reject(new Error(`no VisibilityTimeout for queue ${arn}`));
        });
      seconds.catch(() => visibilities.delete(arn));
      visibilities.set(arn, seconds);
    }
    return seconds;
  };
  return { sqs, queueUrlOf, visibilityTimeoutOf };
}

/** A FIFO queue: nothing may be sent back into it out of order, so its removals do not look again. */
export function isFifo(record: SQSRecord): boolean {
  return record.eventSourceARN?.endsWith('.fifo') === true;
}
