import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** A queue's approximate message counts (SQS counts lag by up to about a minute on AWS). */
export interface QueueCounts {
  /** Waiting to be received (`ApproximateNumberOfMessages`). */
  readonly visible: number;
  /** Received and not yet deleted or returned (`ApproximateNumberOfMessagesNotVisible`). */
  readonly inFlight: number;
  /** Sent with a delay that has not passed yet (`ApproximateNumberOfMessagesDelayed`). */
  readonly delayed: number;
}

/**
 * A queue's approximate counts, from one GetQueueAttributes.
 *
 * @example
 * const { visible, inFlight, delayed } = await queueCounts(sqs, queueUrl);
 */
export async function queueCounts(sqs: Pick<SQSClient, 'send'>, queueUrl: string): Promise<QueueCounts> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  const a = out.Attributes ?? {};
  return {
    visible: Number(a.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
  };
}
