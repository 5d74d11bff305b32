import { PutObjectCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSRecord } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { createBatchOperationsHandler } from '../../src/batch/createBatchOperationsHandler.js';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { createNormalizeWorker } from '../../src/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { onRecordOutcome, type RecordOutcome } from '../../src/worker/outcomes.js';
import { testClients, uniqueName } from '../support/aws.js';
import { createBucket, listKeys } from '../support/s3.js';

const context = (): Context =>
  ({ awsRequestId: 'req-1', memoryLimitInMB: '1024', getRemainingTimeInMillis: () => 60_000 }) as unknown as Context;
const CSV = 'id,name\n1,Ada\n';

describe('an input outside the buckets the pipeline reads is refused by name', () => {
  const clients = testClients();
  let input: string;
  let output: string;
  let other: string;
  let queueUrl: string;
  let arn: string;
  let seen: RecordOutcome[];
  const worker = () => createNormalizeWorker({ outputBucket: output, inputBuckets: [input] });
  const message = (messageId: string, bucket: string, key: string, eventName = 'ObjectCreated:Put'): SQSRecord =>
    ({
      messageId,
      receiptHandle: `rh-${messageId}`,
      body: JSON.stringify({
        Records: [
          {
            eventSource: 'aws:s3',
            eventTime: new Date().toISOString(),
            eventName,
            s3: { bucket: { name: bucket }, object: { key } },
          },
        ],
      }),
      attributes: { ApproximateReceiveCount: '1' },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: arn,
      awsRegion: 'us-east-1',
    }) as unknown as SQSRecord;

  beforeEach(async () => {
    input = await createBucket(clients.s3, uniqueName('scope-in'));
    output = await createBucket(clients.s3, uniqueName('scope-out'));
    other = await createBucket(clients.s3, uniqueName('scope-other'));
    queueUrl = (await clients.sqs.send(new CreateQueueCommand({ QueueName: uniqueName('scope-q') }))).QueueUrl ?? '';
    arn = `arn:aws:sqs:us-east-1:123456789012:${queueUrl.split('/').pop()}`;
    for (const bucket of [input, output, other]) {
      await clients.s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'incoming/a.csv', Body: CSV }));
    }
    seen = [];
    return onRecordOutcome((o) => seen.push(o));
  });

  it('the SQS handler skips an event naming the output bucket or another bucket, writes nothing for it, and processes the input', async () => {
    const handler = createSqsBatchHandler({ worker: worker(), store: new S3ObjectStore(clients.s3), sqs: clients.sqs });
    const response = await handler(
      {
        Records: [
          message('m-output', output, 'incoming/a.csv'),
          message('m-other', other, 'incoming/a.csv'),
          // A delete naming the output bucket removes nothing and sends no look again.
          message('m-delete', output, 'incoming/a.csv', 'ObjectRemoved:Delete'),
          message('m-input', input, 'incoming/a.csv'),
        ],
      },
      context(),
    );
    expect(response).toEqual({ batchItemFailures: [] });
    const byId = Object.fromEntries(seen.map((o) => [o.messageId, o]));
    expect(byId['m-output']).toMatchObject({
      status: 'skipped',
      reason: `s3://${output}/incoming/a.csv is in the worker's output bucket, which is never one of its inputs (it reads ${input})`,
    });
    expect(byId['m-other']).toMatchObject({
      status: 'skipped',
      reason: `s3://${other}/incoming/a.csv is in a bucket this pipeline does not read (it reads ${input}): refused, not read`,
    });
    expect(byId['m-delete']).toMatchObject({ status: 'skipped', reason: expect.stringContaining('output bucket') });
    expect(byId['m-input']).toMatchObject({ status: 'processed' });
    expect((await listKeys(clients.s3, output)).sort()).toEqual(['incoming/a.csv', `normalized/${input}/a.csv.ndjson`]);
    const delayed = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessagesDelayed'] }),
    );
    expect(delayed.Attributes?.ApproximateNumberOfMessagesDelayed).toBe('0');
  });

  it('the Batch Operations handler answers a task naming the output bucket as skipped with its reason, and writes nothing', async () => {
    const handler = createBatchOperationsHandler({ worker: worker(), store: new S3ObjectStore(clients.s3) });
    const response = await handler(
      {
        invocationSchemaVersion: '2.0',
        invocationId: 'inv',
        job: { id: 'job-scope' },
        tasks: [
          { taskId: 't-output', s3Key: 'incoming/a.csv', s3VersionId: null, s3Bucket: output },
          { taskId: 't-other', s3Key: 'incoming/a.csv', s3VersionId: null, s3Bucket: other },
        ],
      },
      context(),
    );
    expect(response.results).toEqual([
      {
        taskId: 't-output',
        resultCode: 'Succeeded',
        resultString: `skipped: s3://${output}/incoming/a.csv is in the worker's output bucket, which is never one of its inputs (it reads ${input})`,
      },
      {
        taskId: 't-other',
        resultCode: 'Succeeded',
        resultString: `skipped: s3://${other}/incoming/a.csv is in a bucket this pipeline does not read (it reads ${input}): refused, not read`,
      },
    ]);
    expect(await listKeys(clients.s3, output)).toEqual(['incoming/a.csv']);
  });
});
