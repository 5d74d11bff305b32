import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { deterministicKey } from '../../src/keys/deterministicKey.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { defineWorker } from '../../src/worker/defineWorker.js';
import { awsEndpoint, RequestLog, testClients, uniqueName } from '../support/aws.js';
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

describe('the code-version marker of a handler wired from the environment (RerunPipeline, rerun dev)', () => {
  const clients = testClients();
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  /** Stubs what RerunPipeline sets (CODE_VERSION_PREFIX only when `prefix` is given), and uploads a.txt. */
  async function pipelineEnvironment(prefix?: string) {
    const input = await createBucket(clients.s3, uniqueName('in'));
    const output = await createBucket(clients.s3, uniqueName('out'));
    await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: 'a.txt', Body: 'x' }));
    vi.stubEnv('AWS_ENDPOINT_URL', awsEndpoint());
    vi.stubEnv('AWS_REGION', 'us-east-1');
    vi.stubEnv('OUTPUT_BUCKET', output);
    vi.stubEnv('LOG_LEVEL', 'error');
    if (prefix !== undefined) vi.stubEnv('CODE_VERSION_PREFIX', prefix);
    // What the markers' prefix holds when the transform starts, i.e. before the output is written.
    const seenByTransform: string[][] = [];
    const worker = copyWorker(output, {
      codeVersion: 'copy@3',
      before: async () => {
        seenByTransform.push(await listKeys(clients.s3, output, 'code-versions/'));
      },
    });
    return { input, output, worker, seenByTransform };
  }

  it('with CODE_VERSION_PREFIX set, `{ worker }` alone writes the marker in its output bucket before its first output', async () => {
    const { input, output, worker, seenByTransform } = await pipelineEnvironment('code-versions/');
    const handler = createSqsBatchHandler({ worker });
    expect(await handler(event(input, 'a.txt'), context)).toEqual({ batchItemFailures: [] });
    expect(seenByTransform).toEqual([['code-versions/copy/copy%403']]);
    expect(await listKeys(clients.s3, output, 'out/')).toEqual([`out/${input}/a.txt`]);
  });

  it('without CODE_VERSION_PREFIX, or with codeVersionMarker: false, no marker is written', async () => {
    const unset = await pipelineEnvironment();
    expect(await createSqsBatchHandler({ worker: unset.worker })(event(unset.input, 'a.txt'), context)).toEqual({
      batchItemFailures: [],
    });
    expect(await listKeys(clients.s3, unset.output, 'out/')).toEqual([`out/${unset.input}/a.txt`]);
    expect(await listKeys(clients.s3, unset.output, 'code-versions/')).toEqual([]);

    const off = await pipelineEnvironment('code-versions/');
    const handler = createSqsBatchHandler({ worker: off.worker, codeVersionMarker: false });
    expect(await handler(event(off.input, 'a.txt'), context)).toEqual({ batchItemFailures: [] });
    expect(await listKeys(clients.s3, off.output, 'out/')).toEqual([`out/${off.input}/a.txt`]);
    expect(await listKeys(clients.s3, off.output, 'code-versions/')).toEqual([]);
  });

  it('an explicit codeVersionMarker wins over CODE_VERSION_PREFIX', async () => {
    const { input, output, worker } = await pipelineEnvironment('code-versions/');
    const handler = createSqsBatchHandler({ worker, codeVersionMarker: { bucket: output, prefix: 'versions/' } });
    expect(await handler(event(input, 'a.txt'), context)).toEqual({ batchItemFailures: [] });
    expect(await listKeys(clients.s3, output, 'versions/')).toEqual(['versions/copy/copy%403']);
    expect(await listKeys(clients.s3, output, 'code-versions/')).toEqual([]);
  });
});
