import { CreateQueueCommand, ReceiveMessageCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { awsEndpoint, uniqueName } from '../support/aws.js';

/**
 * The emulator's SQS receives are atomic, as AWS's are (local/emulator/atomicMotoServer.py). moto
 * 5.2.1's receive_message walks a queue's in-flight set without a lock: two receives at once could
 * fail with a 500 after marking messages received, so a message's ApproximateReceiveCount grew by
 * receives no client was handed, and a healthy message reached its DLQ early (the chaos suite's
 * everything-at-once scenario at load 20+). Many clients receive at once from one queue whose
 * messages become visible again every second; every receive moto counted must be one a client got.
 */
describe('the emulator counts only the SQS receives it hands out', () => {
  it('32 clients receiving at once from one queue for 8 s: no 500, and each message counted exactly as handed', async () => {
    const clients = Array.from(
      { length: 32 },
      () =>
        new SQSClient({
          endpoint: awsEndpoint(),
          region: 'us-east-1',
          credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
          // No retry: a 500 must show, not be hidden by a second try whose messages would also count.
          maxAttempts: 1,
        }),
    );
    const [first] = clients as [SQSClient];
    const queueUrl = (
      await first.send(
        new CreateQueueCommand({ QueueName: uniqueName('receive-race'), Attributes: { VisibilityTimeout: '1' } }),
      )
    ).QueueUrl as string;
    for (let batch = 0; batch < 4; batch++) {
      await first.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: Array.from({ length: 10 }, (_, i) => ({ Id: `m${i}`, MessageBody: `${batch}-${i}` })),
        }),
      );
    }
    const handed = new Map<string, number>();
    const failures: string[] = [];
    const until = Date.now() + 8_000;
    await Promise.all(
      clients.map(async (sqs) => {
        while (Date.now() < until) {
          try {
            const answer = await sqs.send(
              new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 2, WaitTimeSeconds: 0 }),
            );
            for (const m of answer.Messages ?? []) handed.set(m.Body ?? '', (handed.get(m.Body ?? '') ?? 0) + 1);
          } catch (error) {
            failures.push(String(error));
          }
        }
      }),
    );
    // Let every message become visible, then read moto's own counts with one last receive of each.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const counted = new Map<string, number>();
    while (counted.size < 40) {
      const answer = await first.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          VisibilityTimeout: 60,
          MessageSystemAttributeNames: ['ApproximateReceiveCount'],
        }),
      );
      for (const m of answer.Messages ?? []) {
        // This receive is counted too: one less is what the racing clients caused.
        counted.set(m.Body ?? '', Number(m.Attributes?.ApproximateReceiveCount) - 1);
      }
    }
    expect(failures).toEqual([]);
    expect([...handed.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(40);
    for (const [body, count] of counted) expect(count, body).toBe(handed.get(body) ?? 0);
    for (const sqs of clients) sqs.destroy();
  }, 60_000);
});
