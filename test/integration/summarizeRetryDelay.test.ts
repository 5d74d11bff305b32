import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { createSummarizeHandler } from '../../app/partition/createSummarizeHandler.js';
import { ensureQueue } from '../../local/provision.js';
import { toSqsRecord } from '../../local/runner/sqsRecord.js';
import { RerunError } from '../../src/errors.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';
import { OFFLINE_CONTEXT } from '../support/offlineBatch.js';
import { createBucket } from '../support/s3.js';

const THROTTLED_DAY = '2026-12-03';
const CORRUPT_DAY = '2026-12-04';

/**
 * The reference summary stage's handler defers a failed task as a window stage's does: a task that
 * failed comes back in a minute (doubling per receive), one that cannot succeed in a second, instead of
 * after the summarize queue's 30-minute visibility timeout (5 receives: 2.5 hours to the DLQ).
 */
describe('createSummarizeHandler: how soon a failed summary task comes back, against the emulator', () => {
  const log = new RequestLog();
  const clients = testClients(log);
  let outputBucket: string;
  let inputBucket: string;
  let queue: { url: string; arn: string };

  /** The lake as the handler sees it: listing THROTTLED_DAY fails as a throttle would, CORRUPT_DAY for good. */
  const lake = {
    send(command: unknown) {
      if (command instanceof ListObjectsV2Command) {
        const prefix = String(command.input.Prefix ?? '');
        if (prefix.includes(`dt=${THROTTLED_DAY}`)) return Promise.reject(new Error('503 SlowDown'));
        if (prefix.includes(`dt=${CORRUPT_DAY}`)) {
          return Promise.reject(new RerunError(`the lineage of ${CORRUPT_DAY} is corrupt`, { retryable: false }));
        }
      }
      return clients.s3.send(command as ListObjectsV2Command);
    },
  } as unknown as S3Client;

  const handlerWith = (options: { retryDelay?: false } = {}) =>
    createSummarizeHandler({ clients: { s3: lake, sqs: clients.sqs }, outputBucket, inputBucket, ...options });

  async function deliver(
    day: string,
    receiveCount = 1,
    body = JSON.stringify({ type: 'summarize', partition: `dt=${day}` }),
  ): Promise<SQSEvent> {
    await clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: queue.url,
        MessageBody: body,
        // A group of its own: the earlier messages of the day are still in flight (FIFO holds their group).
        MessageGroupId: uniqueName(day),
        MessageDeduplicationId: uniqueName(day),
      }),
    );
    const received = await clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queue.url, MaxNumberOfMessages: 1, MessageSystemAttributeNames: ['All'] }),
    );
    const records = (received.Messages ?? []).map((m) => toSqsRecord(m, { queueArn: queue.arn, region: 'us-east-1' }));
    expect(records).toHaveLength(1);
    return {
      Records: records.map((r) => ({
        ...r,
        attributes: { ...r.attributes, ApproximateReceiveCount: `${receiveCount}` },
      })),
    };
  }
  const visibilities = () =>
    log.requests.filter((r) => r.operation === 'ChangeMessageVisibility').map((r) => r.input.VisibilityTimeout);

  beforeEach(async () => {
    outputBucket = await createBucket(clients.s3, uniqueName('srd-out'));
    inputBucket = await createBucket(clients.s3, uniqueName('srd-in'));
    const name = `${uniqueName('srd-q')}.fifo`;
    const dlq = await ensureQueue(clients, name.replace('.fifo', '-dlq.fifo'), { FifoQueue: 'true' });
    // The summarize queue's settings: 6 x the function's 300 s timeout, 5 receives.
    queue = await ensureQueue(clients, name, {
      FifoQueue: 'true',
      VisibilityTimeout: '1800',
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 5 }),
    });
  });

  it('a retryable failure comes back in 60 s, doubling per receive; one that is not in 1 s, as on the last receive', async () => {
    const handler = handlerWith();
    const throttled = await deliver(THROTTLED_DAY);
    log.clear();
    expect((await handler(throttled, OFFLINE_CONTEXT)).batchItemFailures).toHaveLength(1);
    expect(visibilities()).toEqual([60]);
    // A cold sandbox's first failure looks its queue up once: the failure recorder reads maxReceiveCount
    // from the retry delay's lookup.
    expect(log.requests.filter((r) => r.operation.startsWith('GetQueue')).map((r) => r.operation)).toEqual([
      'GetQueueUrl',
      'GetQueueAttributes',
    ]);

    log.clear();
    await handler(await deliver(THROTTLED_DAY, 3), OFFLINE_CONTEXT);
    expect(visibilities()).toEqual([240]);
    log.clear();
    await handler(await deliver(THROTTLED_DAY, 5), OFFLINE_CONTEXT);
    expect(visibilities()).toEqual([1]);
    log.clear();
    await handler(await deliver(CORRUPT_DAY), OFFLINE_CONTEXT);
    expect(visibilities()).toEqual([1]);
    // Nor is a message that is no task: every receive refuses it alike.
    log.clear();
    const junk = await deliver(CORRUPT_DAY, 1, '{"type":"summarise","partition":"dt=2026-12-04"}');
    expect((await handler(junk, OFFLINE_CONTEXT)).batchItemFailures).toHaveLength(1);
    expect(visibilities()).toEqual([1]);
    // Looked up once per queue and sandbox.
    expect(log.requests.filter((r) => r.operation.startsWith('GetQueue'))).toEqual([]);
  });

  it('retryDelay: false leaves it to the queue: the message comes back after its 30 minutes', async () => {
    const handler = handlerWith({ retryDelay: false });
    const throttled = await deliver(THROTTLED_DAY);
    log.clear();
    expect((await handler(throttled, OFFLINE_CONTEXT)).batchItemFailures).toHaveLength(1);
    expect(visibilities()).toEqual([]);
  });
});
