import { PutBucketVersioningCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { Context, SQSRecord } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';
import { copyWorker } from '../support/copyWorker.js';
import { createBucket, readText } from '../support/s3.js';

const context = (): Context =>
  ({ awsRequestId: 'req-1', getRemainingTimeInMillis: () => 60_000 }) as unknown as Context;

describe("createSqsBatchHandler keeps one AdaptiveFirstRun per handler (a sandbox's memory across invocations)", () => {
  const log = new RequestLog();
  const clients = testClients(log);
  const uploads = testClients();
  let input: string;
  let output: string;
  let messages = 0;

  beforeEach(async () => {
    input = await createBucket(uploads.s3, uniqueName('in'));
    await uploads.s3.send(
      new PutBucketVersioningCommand({ Bucket: input, VersioningConfiguration: { Status: 'Enabled' } }),
    );
    output = await createBucket(uploads.s3, uniqueName('out'));
  });

  /** Uploads `body` to `key` and returns S3's fresh event for it (first receive, event time now, eTag, size, version). */
  const uploaded = async (key: string, body: string): Promise<SQSRecord> => {
    const out = await uploads.s3.send(new PutObjectCommand({ Bucket: input, Key: key, Body: body }));
    const object = {
      key,
      size: Buffer.byteLength(body),
      eTag: (out.ETag ?? '').replace(/"/g, ''),
      ...(out.VersionId ? { versionId: out.VersionId } : {}),
    };
    const messageId = `m${++messages}`;
    return {
      messageId,
      receiptHandle: `rh-${messageId}`,
      body: JSON.stringify({
        Records: [
          {
            eventSource: 'aws:s3',
            eventName: 'ObjectCreated:Put',
            eventTime: new Date().toISOString(),
            s3: { bucket: { name: input }, object },
          },
        ],
      }),
      attributes: { ApproximateReceiveCount: '1' },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:q',
      awsRegion: 'us-east-1',
    } as unknown as SQSRecord;
  };

  it('a new object is created first (GET, PUT); the re-upload of its bytes, in a later invocation, costs the HEAD alone', async () => {
    const handler = createSqsBatchHandler({
      worker: copyWorker(output),
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
    });
    const first = await uploaded('daily/a.csv', 'x\n');
    log.clear();
    expect(await handler({ Records: [first] }, context())).toEqual({ batchItemFailures: [] });
    expect(log.operations('S3')).toEqual(['GetObject', 'PutObject']);
    const again = await uploaded('daily/a.csv', 'x\n');
    log.clear();
    expect(await handler({ Records: [again] }, context())).toEqual({ batchItemFailures: [] });
    expect(log.operations('S3')).toEqual(['HeadObject']);
    // Another handler (a new sandbox) knows nothing: it creates first and loses the create (412).
    const cold = createSqsBatchHandler({
      worker: copyWorker(output),
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
    });
    const third = await uploaded('daily/a.csv', 'x\n');
    log.clear();
    await cold({ Records: [third] }, context());
    expect(log.operations('S3')).toEqual(['GetObject', 'PutObject', 'HeadObject']);
    expect(await readText(uploads.s3, output, `out/${input}/daily/a.csv`)).toBe('x\n');
  });
});
