import { DeleteObjectCommand, PutBucketVersioningCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { Context, SQSRecord } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import type { WorkerDefinition } from '../../src/worker/defineWorker.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';
import { quarantiningWorker } from '../support/quarantiningWorker.js';
import { createBucket, listKeys } from '../support/s3.js';

/**
 * A message back from the DLQ: SQS delivers a redriven message as a new message, so its receive count
 * is 1 again, while its S3 event is as old as the upload. It must not be taken for S3's fresh first
 * delivery (src/batch/isFreshDelivery.ts: the event's age tells): an earlier receive of it may have died
 * part-way, and only the full done-check (the conditional GET and the sweep of side outputs the output
 * does not list) repairs what it left.
 */
describe('a redriven message (receive count 1, an event an hour old) runs the full done-check', () => {
  const log = new RequestLog();
  const clients = testClients(log);
  let input: string;
  let output: string;
  let worker: WorkerDefinition;
  const context = { awsRequestId: 'req', getRemainingTimeInMillis: () => 60_000 } as unknown as Context;

  /** An S3 event as S3 sends it from a versioned bucket: key, eTag, size, versionId, time. */
  const s3Event = (key: string, write: { eTag: string; versionId: string; size: number }, eventTime: string) =>
    JSON.stringify({
      Records: [
        {
          eventVersion: '2.1',
          eventSource: 'aws:s3',
          eventTime,
          eventName: 'ObjectCreated:Put',
          s3: { bucket: { name: input }, object: { key, ...write } },
        },
      ],
    });
  const record = (messageId: string, body: string): SQSRecord =>
    ({
      messageId,
      receiptHandle: `rh-${messageId}`,
      body,
      attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(Date.now()) },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:q',
      awsRegion: 'us-east-1',
    }) as unknown as SQSRecord;
  const upload = async (key: string, body: string) => {
    const out = await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: key, Body: body }));
    return { eTag: (out.ETag ?? '').replace(/"/g, ''), versionId: out.VersionId as string, size: body.length };
  };

  beforeEach(async () => {
    input = await createBucket(clients.s3, uniqueName('in'));
    await clients.s3.send(
      new PutBucketVersioningCommand({ Bucket: input, VersioningConfiguration: { Status: 'Enabled' } }),
    );
    output = await createBucket(clients.s3, uniqueName('out'));
    worker = quarantiningWorker(output);
  });

  it("removes the side output a killed attempt left, which S3's fresh delivery leaves alone", async () => {
    const handler = createSqsBatchHandler({ worker, store: new S3ObjectStore(clients.s3), sqs: clients.sqs });
    const write = await upload('a.txt', 'ok\n');
    const now = new Date().toISOString();
    expect(
      (await handler({ Records: [record('first', s3Event('a.txt', write, now))] }, context)).batchItemFailures,
    ).toEqual([]);
    // What a killed attempt leaves: the quarantine of a bad row, which the published output does not list.
    const debris = `quarantine/${input}/a.txt.txt`;
    await clients.s3.send(new PutObjectCommand({ Bucket: output, Key: debris, Body: '!bad\n' }));
    // S3's duplicate, fresh: this sandbox built the key, so it checks first (the adaptive first run), and
    // the event's eTag proves the output current from the HEAD alone; nothing is swept.
    log.clear();
    await handler({ Records: [record('duplicate', s3Event('a.txt', write, now))] }, context);
    expect(log.operations('S3')).toEqual(['HeadObject']);
    expect(await listKeys(clients.s3, output, 'quarantine/')).toEqual([debris]);
    // The same event an hour later, as a redrive delivers it: a new message, receive count 1.
    const anHourAgo = new Date(Date.now() - 3600_000).toISOString();
    log.clear();
    const response = await handler({ Records: [record('redriven', s3Event('a.txt', write, anHourAgo))] }, context);
    expect(response.batchItemFailures).toEqual([]);
    expect(log.operations('S3')).toContain('GetObject');
    expect(await listKeys(clients.s3, output, 'quarantine/')).toEqual([]);
    expect(await listKeys(clients.s3, output, 'out/')).toEqual([`out/${input}/a.txt.txt`]);
  });

  it('a redriven event of a deleted input writes nothing: the conditional GET finds it gone', async () => {
    const handler = createSqsBatchHandler({ worker, store: new S3ObjectStore(clients.s3), sqs: clients.sqs });
    const write = await upload('b.txt', 'ok\n');
    await handler({ Records: [record('first', s3Event('b.txt', write, new Date().toISOString()))] }, context);
    await clients.s3.send(new DeleteObjectCommand({ Bucket: input, Key: 'b.txt' }));
    const anHourAgo = new Date(Date.now() - 3600_000).toISOString();
    log.clear();
    await handler({ Records: [record('redriven', s3Event('b.txt', write, anHourAgo))] }, context);
    // It asked S3, which has no such input (a delete marker): acknowledged, nothing written.
    expect(log.operations('S3')).toContain('GetObject');
    expect(log.requests.filter((r) => ['PutObject', 'CompleteMultipartUpload'].includes(r.operation))).toEqual([]);
  });
});
