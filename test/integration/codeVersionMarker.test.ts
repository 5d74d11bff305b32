import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { defineWorker } from '../../src/worker/defineWorker.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';
import { copyWorker } from '../support/copyWorker.js';
import { createBucket, listKeys } from '../support/s3.js';

const context = { awsRequestId: 'r', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;
const event = (bucket: string, key: string): SQSEvent => ({
  Records: [
    {
      messageId: `m-${key}`,
      receiptHandle: 'rh',
      body: JSON.stringify({
        Records: [
          { eventSource: 'aws:s3', eventName: 'ObjectCreated:Put', s3: { bucket: { name: bucket }, object: { key } } },
        ],
      }),
      attributes: { ApproximateReceiveCount: '1' },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:q',
      awsRegion: 'us-east-1',
    } as unknown as SQSRecord,
  ],
});

describe('the code-version marker (a codeVersion bump made visible to listings)', () => {
  const log = new RequestLog();
  const clients = testClients(log);

  it('is created once, before the first output, by the first instance of a version; later instances get 412', async () => {
    const input = await createBucket(clients.s3, uniqueName('in'));
    const output = await createBucket(clients.s3, uniqueName('out'));
    await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: 'a.txt', Body: 'x' }));
    await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: 'b.txt', Body: 'y' }));
    const worker = copyWorker(output, { codeVersion: 'copy@2' });
    const instance = () =>
      createSqsBatchHandler({
        worker,
        store: new S3ObjectStore(clients.s3),
        sqs: clients.sqs,
        codeVersionMarker: { bucket: output, prefix: 'code-versions/' },
      });
    const first = instance();
    log.clear();
    expect(await first(event(input, 'a.txt'), context)).toEqual({ batchItemFailures: [] });
    const puts = log.requests.filter((r) => r.operation === 'PutObject').map((r) => [r.input.Key, r.input.IfNoneMatch]);
    expect(puts).toEqual([
      ['code-versions/copy/copy%402', '*'], // the marker comes first
      [`out/${input}/a.txt`, '*'],
    ]);
    log.clear();
    await first(event(input, 'b.txt'), context); // same instance: no second marker request
    expect(log.requests.filter((r) => r.input.Key === 'code-versions/copy/copy%402')).toEqual([]);
    log.clear();
    await instance()(event(input, 'a.txt'), context); // a new instance: 412, accepted
    expect(log.requests.filter((r) => r.input.Key === 'code-versions/copy/copy%402')).toHaveLength(1);
    expect(await listKeys(clients.s3, output, 'code-versions/')).toEqual(['code-versions/copy/copy%402']);
  });

  it('a marker that cannot be written fails the batch before any output is built', async () => {
    const input = await createBucket(clients.s3, uniqueName('in'));
    await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: 'a.txt', Body: 'x' }));
    const worker = defineWorker({
      name: 'copy',
      codeVersion: 'copy@2',
      outputBucket: input,
      outputKey: (s) => deterministicKey({ prefix: 'out/', source: s }),
      async transform() {
        return {};
      },
    });
    const handler = createSqsBatchHandler({
      worker,
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
      codeVersionMarker: { bucket: uniqueName('no-such-bucket'), prefix: 'code-versions/' },
    });
    log.clear();
    await expect(handler(event(input, 'a.txt'), context)).rejects.toThrow(/bucket/i);
    expect(log.operations('S3')).toEqual(['PutObject']);
  });
});
