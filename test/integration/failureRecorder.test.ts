import { PutObjectCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSRecord } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import type { FailedDelivery, FailureRecorder } from '../../src/redrive/FailureRecorder.js';
import { S3FailureRecorder } from '../../src/redrive/S3FailureRecorder.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { defineWorker } from '../../src/worker/defineWorker.js';
import type { RecordOutcome } from '../../src/worker/outcomes.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';
import { createBucket, listKeys } from '../support/s3.js';

const failed = (o: Partial<RecordOutcome>): RecordOutcome => ({
  messageId: 'm-1',
  status: 'failed',
  reason: 'Error: boom',
  retryable: true,
  receiveCount: 1,
  ...o,
});

describe('S3FailureRecorder', () => {
  const log = new RequestLog();
  const clients = testClients(log);
  let bucket: string;
  let queueArn: string;
  const queueName = uniqueName('fr-q');

  beforeAll(async () => {
    bucket = await createBucket(clients.s3, uniqueName('fr'));
    const dlq = await clients.sqs.send(new CreateQueueCommand({ QueueName: `${queueName}-dlq` }));
    const dlqArn = (
      await clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }))
    ).Attributes?.QueueArn;
    const queue = await clients.sqs.send(
      new CreateQueueCommand({
        QueueName: queueName,
        Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 3 }) },
      }),
    );
    queueArn = (
      await clients.sqs.send(new GetQueueAttributesCommand({ QueueUrl: queue.QueueUrl, AttributeNames: ['QueueArn'] }))
    ).Attributes?.QueueArn as string;
  });

  const recorder = () =>
    new S3FailureRecorder({
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
      bucket,
      now: () => Date.parse('2026-01-06T01:15:00Z'),
    });
  const delivery = (o: Partial<FailedDelivery> & { outcome: RecordOutcome }): FailedDelivery => ({
    queueArn,
    messageId: o.outcome.messageId,
    receiveCount: o.outcome.receiveCount ?? 1,
    ...o,
  });

  it("records the last receive the queue's redrive policy allows (read from the queue), not earlier retryable ones", async () => {
    const r = recorder();
    log.clear();
    expect(await r.record(delivery({ outcome: failed({ messageId: 'a', receiveCount: 2 }) }))).toBeUndefined();
    const key = await r.record(
      delivery({ outcome: failed({ messageId: 'a', receiveCount: 3 }), subject: 's3://in/incoming/a.csv' }),
    );
    expect(key).toBe(`failures/${queueName}/a.json`);
    expect(await r.read(queueName, 'a')).toEqual({
      schema: 'rerun.failure/1',
      queueName,
      queueArn,
      messageId: 'a',
      receiveCount: 3,
      maxReceiveCount: 3,
      givenUp: 'last-receive',
      retryable: true,
      reason: 'Error: boom',
      subject: 's3://in/incoming/a.csv',
      failedAt: '2026-01-06T01:15:00.000Z',
    });
    // The redrive policy was read once for both records (cached per queue).
    expect(log.count({ operation: 'GetQueueAttributes' })).toBe(1);
    expect(log.count({ operation: 'GetQueueUrl' })).toBe(1);
  });

  it('records a non-retryable failure at once, and replaces it with If-Match on a later give-up', async () => {
    const r = recorder();
    await r.record(delivery({ outcome: failed({ messageId: 'b', retryable: false, reason: 'EventParseError: x' }) }));
    expect(await r.read(queueName, 'b')).toMatchObject({ givenUp: 'non-retryable', receiveCount: 1 });
    log.clear();
    await r.record(
      delivery({
        outcome: failed({ messageId: 'b', retryable: false, receiveCount: 3, reason: 'EventParseError: y' }),
      }),
    );
    expect(await r.read(queueName, 'b')).toMatchObject({ receiveCount: 3, reason: 'EventParseError: y' });
    const puts = log.requests.filter((q) => q.operation === 'PutObject').map((q) => q.input);
    expect(puts.map((p) => [p.IfNoneMatch, typeof p.IfMatch])).toEqual([
      ['*', 'undefined'],
      [undefined, 'string'],
    ]);
  });

  it('never throws: a recording error is logged and the batch result stays as it was', async () => {
    const broken = new S3FailureRecorder({
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
      bucket: 'no-such-bucket-rerun',
    });
    await expect(broken.record(delivery({ outcome: failed({ retryable: false }) }))).resolves.toBeUndefined();
    expect(await recorder().read(queueName, 'never-failed')).toBeUndefined();
  });

  it('createSqsBatchHandler hands every failed record to the recorder, with its subject and receive count', async () => {
    const seen: FailedDelivery[] = [];
    const spy: FailureRecorder = {
      record: async (f) => {
        seen.push(f);
        return undefined;
      },
    };
    const worker = defineWorker({
      name: 'probe',
      codeVersion: '1',
      outputBucket: bucket,
      outputKey: (s) => `out/${s.key}`,
      async transform() {
        throw new Error('transform failed');
      },
    });
    const handler = createSqsBatchHandler({
      worker,
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
      failureRecorder: spy,
    });
    const record = (id: string, body: string, receives: string): SQSRecord =>
      ({
        messageId: id,
        receiptHandle: 'r',
        body,
        attributes: { ApproximateReceiveCount: receives },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: queueArn,
        awsRegion: 'us-east-1',
      }) as unknown as SQSRecord;
    const s3Event = JSON.stringify({
      Records: [
        {
          eventVersion: '2.1',
          eventSource: 'aws:s3',
          eventName: 'ObjectCreated:Put',
          s3: { bucket: { name: bucket }, object: { key: 'in/a.csv' } },
        },
      ],
    });
    await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'in/a.csv', Body: 'x' }));
    const context = { getRemainingTimeInMillis: () => 60_000, awsRequestId: 'req' } as unknown as Context;
    const response = await handler(
      {
        Records: [
          record('ok', '{"Event":"s3:TestEvent"}', '1'),
          record('bad', s3Event, '3'),
          record('junk', 'nope', '1'),
        ],
      },
      context,
    );
    expect(response.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['bad', 'junk']);
    expect(seen.map((f) => [f.messageId, f.receiveCount, f.subject, f.outcome.retryable]).sort()).toEqual([
      ['bad', 3, `s3://${bucket}/in/a.csv`, true],
      ['junk', 1, undefined, false],
    ]);
    expect(await listKeys(clients.s3, bucket, 'failures/')).toEqual([
      `failures/${queueName}/a.json`,
      `failures/${queueName}/b.json`,
    ]);
  });
});
