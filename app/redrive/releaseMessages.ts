import { ChangeMessageVisibilityBatchCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';

/** Makes messages visible again at once (ChangeMessageVisibilityBatch, 10 per call). */
export async function releaseMessages(
  sqs: Pick<SQSClient, 'send'>,
  queueUrl: string,
  messages: readonly Message[],
): Promise<void> {
  for (let i = 0; i < messages.length; i += 10) {
    await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages
          .slice(i, i + 10)
          .map((m, j) => ({ Id: `m${j}`, ReceiptHandle: m.ReceiptHandle as string, VisibilityTimeout: 0 })),
      }),
    );
  }
}
