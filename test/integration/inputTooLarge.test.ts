import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Context, SQSRecord } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { InputTooLargeError } from '../../src/errors.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { onRecordOutcome, type RecordOutcome } from '../../src/worker/outcomes.js';
import { processObject } from '../../src/worker/processObject.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';
import { copyWorker } from '../support/copyWorker.js';
import { createBucket, listKeys } from '../support/s3.js';

describe('an input too large for one invocation is refused up front, never retried into a timeout loop', () => {
  const log = new RequestLog();
  const clients = testClients(log);
  const store = new S3ObjectStore(clients.s3);
  let input: string;
  let output: string;
  const worker = () => copyWorker(output);

  beforeEach(async () => {
    input = await createBucket(clients.s3, uniqueName('in'));
    output = await createBucket(clients.s3, uniqueName('out'));
    await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: 'big.csv', Body: 'x'.repeat(2048) }));
    log.clear();
  });

  it("from the event's size: after the done-check's HEAD, before any GET, naming the limit and the setting", async () => {
    const event = { bucket: input, key: 'big.csv', eventName: 'ObjectCreated:Put', size: 2048 };
    const refusal = processObject(worker(), event, { store, maxInputBytes: 1024 });
    await expect(refusal).rejects.toThrow(InputTooLargeError);
    await expect(processObject(worker(), event, { store, maxInputBytes: 1024 })).rejects.toThrow(
      /is 2\.0 KiB \(2048 bytes\), above the worker.s limit of 1\.0 KiB .*MAX_INPUT_BYTES 1024.*raise the function memory and timeout/,
    );
    expect(log.operations('S3')).toEqual(['HeadObject', 'HeadObject']);
    expect(await listKeys(clients.s3, output)).toEqual([]);
  });

  it("from the GET's ContentLength when the event has no size: the body is not read", async () => {
    const event = { bucket: input, key: 'big.csv', eventName: 'ObjectCreated:Put' };
    await expect(processObject(worker(), event, { store, maxInputBytes: 1024 })).rejects.toThrow(InputTooLargeError);
    expect(log.operations('S3')).toEqual(['HeadObject', 'GetObject']);
    expect(await listKeys(clients.s3, output)).toEqual([]);
  });

  it('through the batch handler: a non-retryable failure with the reason; an input at the limit is processed', async () => {
    const seen: RecordOutcome[] = [];
    const stop = onRecordOutcome((o) => seen.push(o));
    try {
      const handler = createSqsBatchHandler({ worker: worker(), store, sqs: clients.sqs, maxInputBytes: 2048 });
      const record = (id: string, size: number) =>
        ({
          messageId: id,
          receiptHandle: `rh-${id}`,
          body: JSON.stringify({
            Records: [
              {
                eventSource: 'aws:s3',
                eventName: 'ObjectCreated:Put',
                s3: { bucket: { name: input }, object: { key: 'big.csv', size } },
              },
            ],
          }),
          attributes: { ApproximateReceiveCount: '1' },
          eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:q',
        }) as unknown as SQSRecord;
      const context = {
        awsRequestId: 'r',
        memoryLimitInMB: '512',
        getRemainingTimeInMillis: () => 60_000,
      } as unknown as Context;
      const refused = await handler({ Records: [record('too-big', 4096)] }, context);
      expect(refused.batchItemFailures).toEqual([{ itemIdentifier: 'too-big' }]);
      expect(seen[0]).toMatchObject({
        status: 'failed',
        retryable: false,
        reason: expect.stringMatching(/InputTooLargeError: .*MAX_INPUT_BYTES 2048/),
      });
      const fits = await handler({ Records: [record('fits', 2048)] }, context);
      expect(fits.batchItemFailures).toEqual([]);
    } finally {
      stop();
    }
  });
});
