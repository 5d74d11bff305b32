import { PutObjectCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSRecord } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { failureRecordKey } from '../../src/failures/failureRecord.js';
import type { RecordOutcome } from '../../src/worker/outcomes.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import { copyWorker } from '../support/copyWorker.js';
import { createBucket, listKeys } from '../support/s3.js';

/**
 * `createSqsBatchHandler({ worker })` under the environment RerunPipeline and rerun dev set: the
 * clients at AWS_ENDPOINT_URL, MAX_INPUT_BYTES and the failure recorder in OUTPUT_BUCKET, all taken
 * from it, against the emulator (the README's first worker is built so).
 */
describe('a handler given only its worker wires itself from the environment', () => {
  const clients = testClients();
  const saved = { ...process.env };
  let input: string;
  let output: string;
  let queueArn: string;
  let queueName: string;

  beforeEach(async () => {
    input = await createBucket(clients.s3, uniqueName('in'));
    output = await createBucket(clients.s3, uniqueName('out'));
    await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: 'small.csv', Body: 'a,b\n' }));
    await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: 'big.csv', Body: 'x'.repeat(2048) }));
    queueName = uniqueName('work');
    const { QueueUrl } = await clients.sqs.send(new CreateQueueCommand({ QueueName: queueName }));
    const attributes = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    queueArn = attributes.Attributes?.QueueArn ?? '';
    // What RerunPipeline sets (OUTPUT_BUCKET, MAX_INPUT_BYTES, LOG_LEVEL), and rerun dev's endpoint.
    Object.assign(process.env, {
      AWS_ENDPOINT_URL: awsEndpoint(),
      OUTPUT_BUCKET: output,
      MAX_INPUT_BYTES: '1024',
      LOG_LEVEL: 'error',
    });
  });
  afterEach(() => {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  });

  const record = (id: string, key: string, size: number) =>
    ({
      messageId: id,
      receiptHandle: `rh-${id}`,
      body: JSON.stringify({
        Records: [
          {
            eventSource: 'aws:s3',
            eventName: 'ObjectCreated:Put',
            s3: { bucket: { name: input }, object: { key, size } },
          },
        ],
      }),
      attributes: { ApproximateReceiveCount: '1' },
      eventSourceARN: queueArn,
    }) as unknown as SQSRecord;
  const context = {
    awsRequestId: 'r',
    memoryLimitInMB: '512',
    getRemainingTimeInMillis: () => 60_000,
  } as unknown as Context;

  it('processes an input through the emulator at AWS_ENDPOINT_URL; refuses one above MAX_INPUT_BYTES and records why in OUTPUT_BUCKET', async () => {
    const seen: RecordOutcome[] = [];
    const handler = createSqsBatchHandler({ worker: copyWorker(output), onOutcome: (o) => void seen.push(o) });
    const response = await handler(
      { Records: [record('fits', 'small.csv', 4), record('too-big', 'big.csv', 2048)] },
      context,
    );
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'too-big' }]);
    const byId = Object.fromEntries(seen.map((o) => [o.messageId, o]));
    expect(byId.fits).toMatchObject({ status: 'processed' });
    expect(byId['too-big']).toMatchObject({
      status: 'failed',
      retryable: false,
      reason: expect.stringMatching(/InputTooLargeError: .*MAX_INPUT_BYTES 1024/),
    });
    // The failure recorder it made from OUTPUT_BUCKET wrote why, under failures/ (rerun redrive reads it).
    const failures = (await listKeys(clients.s3, output)).filter((k) => k.startsWith('failures/'));
    expect(failures).toContain(failureRecordKey('failures/', queueName, 'too-big'));
    expect(failures.filter((k) => k.includes('fits'))).toEqual([]);
  });

  it('an explicit maxInputBytes wins over MAX_INPUT_BYTES', async () => {
    const seen: RecordOutcome[] = [];
    const handler = createSqsBatchHandler({
      worker: copyWorker(output),
      maxInputBytes: 4096,
      onOutcome: (o) => void seen.push(o),
    });
    const response = await handler({ Records: [record('big-ok', 'big.csv', 2048)] }, context);
    expect(response.batchItemFailures).toEqual([]);
    expect(seen[0]).toMatchObject({ status: 'processed' });
  });
});
