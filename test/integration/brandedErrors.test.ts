import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Context, SQSRecord } from 'aws-lambda';
import { build } from 'esbuild';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createBatchOperationsHandler } from '../../src/batch/createBatchOperationsHandler.js';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { RerunError } from '../../src/errors.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { onRecordOutcome, type RecordOutcome } from '../../src/worker/outcomes.js';
import { testClients, uniqueName } from '../support/aws.js';
import { copyWorker } from '../support/copyWorker.js';
import { createBucket } from '../support/s3.js';

/** The error classes of a second copy of the package, as a worker bundled with its own rerun has them. */
type SecondCopy = typeof import('../../src/errors.js');

const context = (): Context =>
  ({ awsRequestId: 'req-1', memoryLimitInMB: '1024', getRemainingTimeInMillis: () => 60_000 }) as unknown as Context;

const sqsRecord = (messageId: string, bucket: string, key: string): SQSRecord =>
  ({
    messageId,
    receiptHandle: `rh-${messageId}`,
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
  }) as unknown as SQSRecord;

describe('errors of a second copy of the package (a bundle beside dist/)', () => {
  const clients = testClients();
  let dir: string;
  let copy: SecondCopy;
  let input: string;
  let output: string;

  beforeAll(async () => {
    // A real second copy: src/errors.ts bundled by esbuild into a module of its own, with its own classes.
    dir = mkdtempSync(join(tmpdir(), 'rerun-second-copy-'));
    const file = join(dir, 'errors.mjs');
    await build({ entryPoints: ['src/errors.ts'], bundle: true, format: 'esm', platform: 'node', outfile: file });
    copy = (await import(pathToFileURL(file).href)) as SecondCopy;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  beforeEach(async () => {
    input = await createBucket(clients.s3, uniqueName('brand-in'));
    output = await createBucket(clients.s3, uniqueName('brand-out'));
    await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: 'a.csv', Body: 'a' }));
  });

  it('are not instanceof this copy, yet RerunError.isRerunError recognises them with their retryable', () => {
    const error = new copy.InputTooLargeError('too large');
    expect(error).not.toBeInstanceOf(RerunError);
    expect(RerunError.isRerunError(error)).toBe(true);
    expect(error.retryable).toBe(false);
    expect(RerunError.isRerunError(Object.assign(new Error('x'), { retryable: false }))).toBe(false);
  });

  it('the SQS handler classifies a non-retryable error of the other copy as not retryable', async () => {
    const seen: RecordOutcome[] = [];
    const stop = onRecordOutcome((o) => seen.push(o));
    try {
      const handler = createSqsBatchHandler({
        worker: copyWorker(output, {
          before: () => {
            throw new copy.InputTooLargeError('s3://in/a.csv is larger than one invocation can read');
          },
        }),
        store: new S3ObjectStore(clients.s3),
        sqs: clients.sqs,
      });
      await handler({ Records: [sqsRecord('m1', input, 'a.csv')] }, context());
    } finally {
      stop();
    }
    expect(seen[0]).toMatchObject({
      status: 'failed',
      retryable: false,
      reason: expect.stringMatching(/^InputTooLargeError: /),
    });
  });

  it('the Batch Operations handler answers PermanentFailure, not a TemporaryFailure that S3 retries', async () => {
    const handler = createBatchOperationsHandler({
      worker: copyWorker(output, {
        before: () => {
          throw new copy.WorkerConfigurationError('the worker is misconfigured');
        },
      }),
      store: new S3ObjectStore(clients.s3),
    });
    const response = await handler(
      {
        invocationSchemaVersion: '2.0',
        invocationId: 'inv',
        job: { id: 'job-brand' },
        tasks: [{ taskId: 't0', s3Key: 'a.csv', s3VersionId: null, s3Bucket: input }],
      },
      context(),
    );
    expect(response.results[0]).toMatchObject({ resultCode: 'PermanentFailure' });
  });
});
