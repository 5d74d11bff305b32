import { GetQueueAttributesCommand, GetQueueUrlCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { maxReceiveCountOfPolicy } from '../failures/redrivePolicy.js';

/** The queues records come from, as the batch handler sends to them (a deferral, a requeue). */
export interface SourceQueues {
  readonly sqs: SQSClient;
  /** The URL of the queue with this ARN: one GetQueueUrl per queue, tried again after a failure. */
  readonly queueUrlOf: (arn: string) => Promise<string>;
  /**
   * The queue's visibility timeout (seconds) and its redrive policy's maxReceiveCount (when it has
   * one): one GetQueueAttributes per queue (which the event source mapping's role allows), tried
   * again after a failure. Read only on a failure's path.
   */
  readonly retryTimingOf: (arn: string) => Promise<QueueRetryTiming>;
  /**
   * The queue's redrive policy's maxReceiveCount, from the same GetQueueAttributes as retryTimingOf:
   * what a failure recorder beside the retry delay reads (S3FailureRecorder's `maxReceiveCountOf`).
   */
  readonly maxReceiveCountOf: (arn: string) => Promise<number | undefined>;
}

/** How a queue brings a failed message back: after its visibility timeout, until maxReceiveCount. */
export interface QueueRetryTiming {
  readonly visibilityTimeoutSeconds: number;
  readonly maxReceiveCount?: number;
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
  const timings = new Map<string, Promise<QueueRetryTiming>>();
  const retryTimingOf = (arn: string): Promise<QueueRetryTiming> => {
    let timing = timings.get(arn);
    if (!timing) {
      timing = queueUrlOf(arn)
        .then((url) =>
          sqs.send(
            new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['VisibilityTimeout', 'RedrivePolicy'] }),
          ),
        )
        .then((out) => {
          const visibilityTimeoutSeconds = Number(out.Attributes?.VisibilityTimeout);
          if (!Number.isFinite(visibilityTimeoutSeconds)) throw new Error(`no VisibilityTimeout for queue ${arn}`);
          const maxReceiveCount = maxReceiveCountOfPolicy(out.Attributes?.RedrivePolicy);
          return maxReceiveCount !== undefined
            ? { visibilityTimeoutSeconds, maxReceiveCount }
            : { visibilityTimeoutSeconds };
        });
      timing.catch(() => timings.delete(arn));
      timings.set(arn, timing);
    }
    return timing;
  };
  const maxReceiveCountOf = (arn: string) => retryTimingOf(arn).then((timing) => timing.maxReceiveCount);
  return { sqs, queueUrlOf, retryTimingOf, maxReceiveCountOf };
}

/** A FIFO queue: nothing may be sent back into it out of order, so its removals do not look again. */
export function isFifo(record: SQSRecord): boolean {
  return record.eventSourceARN?.endsWith('.fifo') === true;
}
