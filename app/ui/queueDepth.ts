import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** A queue's depth as SQS attributes tell it. */
export interface QueueDepth {
  readonly name: string;
  /** The user's window stage the queue is of (its rows are labelled by it); absent for a worker's. */
  readonly stage?: string;
  /** The rerun worker whose queue it is (`normalize`, `summarize`), whatever the row's name; absent for a window stage's. */
  readonly worker?: string;
  readonly url: string;
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
  /** Age of its oldest message (AWS/SQS ApproximateAgeOfOldestMessage) and the datapoint's time. */
  readonly oldest?: { readonly seconds: number; readonly at: number };
}

/** A queue's depth from GetQueueAttributes, under the name the console shows it by. */
export async function readQueueDepth(sqs: SQSClient, name: string, url: string): Promise<QueueDepth> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  const n = (k: string) => Number(out.Attributes?.[k as keyof typeof out.Attributes] ?? 0);
  return {
    name,
    url,
    visible: n('ApproximateNumberOfMessages'),
    inFlight: n('ApproximateNumberOfMessagesNotVisible'),
    delayed: n('ApproximateNumberOfMessagesDelayed'),
  };
}

/** The queue's name: the last segment of its URL. */
export function queueNameOfUrl(url: string): string {
  return url.slice(url.lastIndexOf('/') + 1);
}
