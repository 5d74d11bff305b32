import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Context } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  BatchOperationsEventError,
  batchOperationsFailureSource,
  createBatchOperationsHandler,
  failureMessageId,
} from '../../src/batch/createBatchOperationsHandler.js';
import { S3FailureRecorder } from '../../src/failures/S3FailureRecorder.js';
import { encodeManifestKey } from '../../src/intake/parseBatchOperationsEvent.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { defineWorker } from '../../src/worker/defineWorker.js';
import { RequestLog, testClients, uniqueName } from '../support/aws.js';
import { copyWorker } from '../support/copyWorker.js';
import { createBucket, listKeys, readText } from '../support/s3.js';

const context = (remainingMs = 60_000): Context =>
  ({
    awsRequestId: 'req-1',
    memoryLimitInMB: '1024',
    getRemainingTimeInMillis: () => remainingMs,
  }) as unknown as Context;

/** Events as in the S3 User Guide, "Invoke AWS Lambda function", "Example request and response". */
const eventV1 = (bucket: string, keys: readonly string[], jobId = 'job-1') => ({
  invocationSchemaVersion: '1.0',
  invocationId: `inv-${keys.length}`,
  job: { id: jobId },
  tasks: keys.map((key, i) => ({
    taskId: `task+${i}/=`,
    s3Key: encodeManifestKey(key),
    s3VersionId: null,
    s3BucketArn: `arn:aws:s3:::${bucket}`,
  })),
});
const eventV2 = (bucket: string, keys: readonly string[], jobId = 'job-2') => ({
  invocationSchemaVersion: '2.0',
  invocationId: 'inv-v2',
  job: { id: jobId, userArguments: { reason: 'code version 2' } },
  tasks: keys.map((key, i) => ({
    taskId: `t${i}`,
    s3Key: encodeManifestKey(key),
    s3VersionId: null,
    s3Bucket: bucket,
  })),
});

describe('createBatchOperationsHandler', () => {
  const log = new RequestLog();
  const clients = testClients(log);
  let input: string;
  let output: string;
  const worker = (options: { fail?: () => Error } = {}) => {
    const { fail } = options;
    return copyWorker(
      output,
      fail
        ? {
            before: () => {
              throw fail();
            },
          }
        : {},
    );
  };
  const put = (key: string, body: string) =>
    clients.s3.send(new PutObjectCommand({ Bucket: input, Key: key, Body: body }));

  beforeEach(async () => {
    input = await createBucket(clients.s3, uniqueName('bo-in'));
    output = await createBucket(clients.s3, uniqueName('bo-out'));
    log.clear();
  });

  it('schema 1.0: processes a key with spaces, a plus and unicode, and echoes the invocation', async () => {
    const key = 'incoming/café münchen+1 (copy).csv';
    await put(key, 'hello');
    const handler = createBatchOperationsHandler({ worker: worker(), store: new S3ObjectStore(clients.s3) });
    const response = await handler(eventV1(input, [key]), context());
    expect(response).toEqual({
      invocationSchemaVersion: '1.0',
      treatMissingKeysAs: 'PermanentFailure',
      invocationId: 'inv-1',
      results: [
        {
          taskId: 'task+0/=',
          resultCode: 'Succeeded',
          resultString: expect.stringMatching(/^processed: output created/),
        },
      ],
    });
    expect(await readText(clients.s3, output, `out/${input}/${key}`)).toBe('hello');
  });

  it('schema 2.0: reads tasks by bucket name with userArguments; a job run twice is all skips the second time', async () => {
    const keys = ['a.csv', 'dir/b c.csv', 'dir/ü+.csv'];
    for (const key of keys) await put(key, key);
    const handler = createBatchOperationsHandler({ worker: worker(), store: new S3ObjectStore(clients.s3) });
    const first = await Promise.all(keys.map((key) => handler(eventV2(input, [key]), context())));
    expect(first.map((r) => r.results[0]?.resultCode)).toEqual(['Succeeded', 'Succeeded', 'Succeeded']);
    expect(first[0]?.invocationSchemaVersion).toBe('2.0');
    log.clear();
    const second = await handler(eventV2(input, keys), context());
    expect(second.results.map((r) => r.resultString)).toEqual(
      keys.map(() => expect.stringMatching(/^skipped: already done: output is valid and current/)),
    );
    // A done-check and a 304 conditional GET per task, nothing written.
    expect(log.count({ operation: 'PutObject' })).toBe(0);
    expect(log.count({ operation: 'HeadObject' })).toBe(3);
    expect(log.count({ operation: 'GetObject' })).toBe(3);
  });

  it('never trusts an event eTag: an output built from other content is rebuilt', async () => {
    await put('k.csv', 'v1');
    const handler = createBatchOperationsHandler({ worker: worker(), store: new S3ObjectStore(clients.s3) });
    await handler(eventV1(input, ['k.csv']), context());
    await put('k.csv', 'v2');
    const again = await handler(eventV1(input, ['k.csv']), context());
    expect(again.results[0]?.resultString).toMatch(/^processed: output replaced \(stale/);
    expect(await readText(clients.s3, output, `out/${input}/k.csv`)).toBe('v2');
  });

  it('a retryable failure is a TemporaryFailure and writes no failure record', async () => {
    await put('t.csv', 'x');
    const handler = createBatchOperationsHandler({
      worker: worker({ fail: () => new Error('socket hang up') }),
      store: new S3ObjectStore(clients.s3),
      failureRecorder: new S3FailureRecorder({
        store: new S3ObjectStore(clients.s3),
        sqs: clients.sqs,
        bucket: output,
      }),
    });
    const response = await handler(eventV1(input, ['t.csv']), context());
    expect(response.results).toEqual([
      { taskId: 'task+0/=', resultCode: 'TemporaryFailure', resultString: 'Error: socket hang up' },
    ]);
    expect(await listKeys(clients.s3, output, 'failures/')).toEqual([]);
  });

  it('a task that cannot start before the deadline is a TemporaryFailure saying so, and reads nothing', async () => {
    const handler = createBatchOperationsHandler({
      worker: worker(),
      store: new S3ObjectStore(clients.s3),
      deadlineMarginMs: 5000,
    });
    const response = await handler(eventV1(input, ['late.csv']), context(4000));
    expect(response.results[0]).toMatchObject({
      resultCode: 'TemporaryFailure',
      resultString: 'not started: function deadline is near (less than 5000 ms left)',
    });
    expect(log.count({ service: 'S3' })).toBe(0);
  });

  it('a read that runs short of time stops before the timeout: a TemporaryFailure, nothing written', async () => {
    await put('long.csv', 'x'.repeat(1024 * 1024));
    let remaining = 60_000;
    // The first chunk uses up the function's time: the read guard stops at the next one.
    const slow = defineWorker({
      name: 'slow',
      codeVersion: '1',
      outputBucket: output,
      outputKey: (s) => deterministicKey({ prefix: 'out/', source: s }),
      async transform({ body }, { output: out }) {
        for await (const chunk of body) {
          await out.write(chunk as Uint8Array);
          remaining = 1_000;
        }
        return {};
      },
    });
    const handler = createBatchOperationsHandler({
      worker: slow,
      store: new S3ObjectStore(clients.s3),
      deadlineMarginMs: 5000,
    });
    const ctx = { ...context(), getRemainingTimeInMillis: () => remaining } as Context;
    const response = await handler(eventV1(input, ['long.csv']), ctx);
    expect(response.results[0]).toMatchObject({
      resultCode: 'TemporaryFailure',
      resultString: expect.stringMatching(
        /^DeadlineNearError: stopped: the function deadline came near \(less than 5000 ms left\)/,
      ),
    });
    expect(await listKeys(clients.s3, output, 'out/')).toEqual([]);
  });

  it('a permanent failure is a PermanentFailure with a failure record filed under the job and the task', async () => {
    await put('big file.csv', 'x'.repeat(64));
    const jobId = 'f3cc4f60-61f6-4a2b-8a21-d07600c373ce';
    const recorder = new S3FailureRecorder({
      store: new S3ObjectStore(clients.s3),
      sqs: clients.sqs,
      bucket: output,
      now: () => Date.parse('2026-12-02T10:00:00Z'),
    });
    const handler = createBatchOperationsHandler({
      worker: worker(),
      store: new S3ObjectStore(clients.s3),
      maxInputBytes: 10,
      failureRecorder: recorder,
    });
    const response = await handler(eventV1(input, ['big file.csv'], jobId), context());
    expect(response.results[0]).toMatchObject({
      resultCode: 'PermanentFailure',
      resultString: expect.stringMatching(/^InputTooLargeError: .*big file\.csv is .* \(64 bytes\)/),
    });
    const source = batchOperationsFailureSource(jobId);
    const record = await recorder.read(source.name, failureMessageId('task+0/='));
    expect(record).toMatchObject({
      queueName: `s3-batch-job-${jobId}`,
      givenUp: 'non-retryable',
      retryable: false,
      subject: `s3://${input}/big file.csv`,
      reason: expect.stringMatching(/^InputTooLargeError/),
      failedAt: '2026-12-02T10:00:00.000Z',
    });
    // Indexed by input, as the SQS path's records are, so `rerun status` finds it.
    expect((await listKeys(clients.s3, output, 'failures/.by-input/')).length).toBe(1);
    // No SQS lookup for a job's pseudo-queue.
    expect(log.count({ service: 'SQS' })).toBe(0);
  });

  it('a task naming no object is a PermanentFailure; a missing input succeeds with nothing written', async () => {
    const handler = createBatchOperationsHandler({ worker: worker(), store: new S3ObjectStore(clients.s3) });
    const event = eventV1(input, ['gone.csv']);
    const response = await handler(
      { ...event, tasks: [...event.tasks, { taskId: 'no-bucket', s3Key: 'x', s3VersionId: null }] },
      context(),
    );
    expect(response.results).toEqual([
      { taskId: 'task+0/=', resultCode: 'Succeeded', resultString: expect.stringMatching(/input no longer exists/) },
      { taskId: 'no-bucket', resultCode: 'PermanentFailure', resultString: expect.stringMatching(/names no bucket/) },
    ]);
  });

  it('throws on an event that is no Batch Operations invocation (S3 then fails its tasks with the message)', async () => {
    const handler = createBatchOperationsHandler({ worker: worker(), store: new S3ObjectStore(clients.s3) });
    await expect(handler({ Records: [] }, context())).rejects.toBeInstanceOf(BatchOperationsEventError);
  });
});
