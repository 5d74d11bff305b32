import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSRecord } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { onRecordOutcome, type RecordOutcome } from '../../src/worker/outcomes.js';
import { testClients, uniqueName } from '../support/aws.js';
import { copyWorker } from '../support/copyWorker.js';
import { createBucket, listKeys } from '../support/s3.js';

const NOW = Date.parse('2026-12-04T10:00:05.000Z');
const context = (): Context =>
  ({ awsRequestId: 'req-1', getRemainingTimeInMillis: () => 60_000 }) as unknown as Context;

describe("a removal's look again, against hostile delete events", () => {
  const clients = testClients();
  let input: string;
  let output: string;
  let queueUrl: string;
  let arn: string;
  let seen: RecordOutcome[];

  beforeEach(async () => {
    input = await createBucket(clients.s3, uniqueName('look-in'));
    output = await createBucket(clients.s3, uniqueName('look-out'));
    queueUrl = (await clients.sqs.send(new CreateQueueCommand({ QueueName: uniqueName('look-q') }))).QueueUrl ?? '';
    arn = `arn:aws:sqs:us-east-1:123456789012:${queueUrl.split('/').pop()}`;
    seen = [];
    return onRecordOutcome((o) => seen.push(o));
  });

  const handler = () =>
    createSqsBatchHandler({
      worker: copyWorker(output),
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
      now: () => NOW,
    });
  const message = (messageId: string, body: unknown): SQSRecord =>
    ({
      messageId,
      receiptHandle: `rh-${messageId}`,
      body: JSON.stringify(body),
      attributes: { ApproximateReceiveCount: '1' },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: arn,
      awsRegion: 'us-east-1',
    }) as unknown as SQSRecord;
  const deletes = (count: number, eventTime: string) => ({
    Records: Array.from({ length: count }, (_, i) => ({
      eventSource: 'aws:s3',
      eventTime,
      eventName: 'ObjectRemoved:Delete',
      s3: { bucket: { name: input }, object: { key: `gone-${i}.csv` } },
    })),
  });
  const delayed = async () =>
    (
      await clients.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessagesDelayed'] }),
      )
    ).Attributes?.ApproximateNumberOfMessagesDelayed;

  it('a message of 200 deletes dated far in the future removes what it names but sends no look again, each record saying why', async () => {
    // One output that the removal must still remove: it judges by the input, not by the event's time.
    await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: 'gone-0.csv', Body: 'a' }));
    const made = await handler()(
      {
        Records: [
          message('m-create', {
            Records: [
              {
                eventSource: 'aws:s3',
                eventName: 'ObjectCreated:Put',
                s3: { bucket: { name: input }, object: { key: 'gone-0.csv' } },
              },
            ],
          }),
        ],
      },
      context(),
    );
    expect(made).toEqual({ batchItemFailures: [] });
    expect(await listKeys(clients.s3, output)).toEqual([`out/${input}/gone-0.csv`]);
    await clients.s3.send(new DeleteObjectCommand({ Bucket: input, Key: 'gone-0.csv' }));

    const response = await handler()(
      { Records: [message('m-future', deletes(200, '2099-01-01T00:00:00.000Z'))] },
      context(),
    );
    expect(response).toEqual({ batchItemFailures: [] });
    expect(await listKeys(clients.s3, output)).toEqual([]);
    expect(await delayed()).toBe('0');
    const outcome = seen.find((o) => o.messageId === 'm-future');
    expect(outcome?.status).toBe('processed');
    // One reason per record, each saying why it does not look again; the message's reason names each
    // distinct one once with how many records gave it (joinReasons), so the counts add up to 200.
    const records = (outcome?.reason ?? '').split(/; (?=input deleted)/);
    for (const record of records)
      expect(record).toMatch(/; not looking again: its eventTime 2099-01-01T00:00:00.000Z is \d+ s ahead/);
    const counts = records.map((record) => Number(/ \(x(\d+)\)$/.exec(record)?.[1] ?? 1));
    expect(counts.reduce((a, n) => a + n, 0)).toBe(200);
  });

  it('a message of 200 young deletes sends its look agains as one delayed message, not 200', async () => {
    const response = await handler()(
      { Records: [message('m-young', deletes(200, '2026-12-04T10:00:00.000Z'))] },
      context(),
    );
    expect(response).toEqual({ batchItemFailures: [] });
    expect(await delayed()).toBe('1');
    expect(seen.find((o) => o.messageId === 'm-young')?.reason).toMatch(
      /its 200 look agains went as 1 message delayed 115 s \(the latest due of their records\)$/,
    );
  });
});
