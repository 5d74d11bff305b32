import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Context, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureQueue } from '../../local/provision.js';
import { createAwsClients } from '../../src/aws/clients.js';
import { createSqsBatchHandler } from '../../src/batch/createSqsBatchHandler.js';
import { S3FailureRecorder } from '../../src/failures/S3FailureRecorder.js';
import { S3AccessDeniedError, S3BucketMissingError, S3BucketNameInvalidError } from '../../src/s3/errors.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { onRecordOutcome, type RecordOutcome } from '../../src/worker/outcomes.js';
import { processObject } from '../../src/worker/processObject.js';
import { awsEndpoint, testClients, uniqueName } from '../support/aws.js';
import { copyWorker } from '../support/copyWorker.js';
import { createBucket, listKeys } from '../support/s3.js';
import { type RefusalRule, S3DenyProxy } from '../support/s3DenyProxy.js';

const context = (): Context =>
  ({ awsRequestId: 'req-1', getRemainingTimeInMillis: () => 60_000 }) as unknown as Context;

const s3Record = (messageId: string, bucket: string, key: string, queueArn: string): SQSRecord =>
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
    eventSourceARN: queueArn,
    awsRegion: 'us-east-1',
  }) as unknown as SQSRecord;

/**
 * How the worker tells the read failures apart (docs/AWS-BEHAVIOUR.md, "404 or 403 for a missing key"):
 * only a missing key is "gone"; a refused or impossible bucket is a non-retryable failure whose
 * failure record names the cause. NoSuchBucket and NoSuchKey come from moto itself; 403 and
 * InvalidBucketName from S3DenyProxy in S3's wire format (moto enforces no IAM and answers
 * NoSuchBucket for invalid names).
 */
describe('S3 read failures, classified', () => {
  const clients = testClients();
  let input: string;
  let output: string;
  let queueArn: string;
  let queueName: string;
  let proxy: S3DenyProxy | undefined;
  let rule: RefusalRule = () => undefined;
  let seen: RecordOutcome[];

  beforeAll(async () => {
    proxy = await S3DenyProxy.start(awsEndpoint(), (request) => rule(request));
    queueName = uniqueName('rf-q');
    // The provisioning of rerun dev: a DLQ, and a queue whose redrive policy moves messages there.
    const dlq = await ensureQueue(clients, `${queueName}-dlq`, {});
    const redrive = { deadLetterTargetArn: dlq.arn, maxReceiveCount: 5 };
    queueArn = (await ensureQueue(clients, queueName, { RedrivePolicy: JSON.stringify(redrive) })).arn;
  });
  afterAll(async () => proxy?.stop());

  beforeEach(async () => {
    input = await createBucket(clients.s3, uniqueName('rf-in'));
    output = await createBucket(clients.s3, uniqueName('rf-out'));
    rule = () => undefined;
    seen = [];
    return onRecordOutcome((o) => seen.push(o));
  });

  /** The batch handler over the proxy, recording failures in the output bucket (through moto directly). */
  const run = async (bucket: string, key: string) => {
    const proxied = createAwsClients({ endpoint: proxy?.url as string, region: 'us-east-1', maxAttempts: 1 });
    const handler = createSqsBatchHandler({
      worker: copyWorker(output),
      store: new S3ObjectStore(proxied.s3),
      sqs: clients.sqs,
      failureRecorder: new S3FailureRecorder({
        store: new S3ObjectStore(clients.s3),
        sqs: clients.sqs,
        bucket: output,
      }),
    });
    const response = await handler({ Records: [s3Record('m-1', bucket, key, queueArn)] }, context());
    const recorder = new S3FailureRecorder({ store: new S3ObjectStore(clients.s3), sqs: clients.sqs, bucket: output });
    return { response, outcome: seen[0], failureRecord: await recorder.read(queueName, 'm-1') };
  };

  it('a 403 on the done-check HEAD is a non-retryable failure naming s3:ListBucket, never "missing"', async () => {
    await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: 'incoming/a.csv', Body: 'a' }));
    // What S3 answers for a key that does not exist to a caller without s3:ListBucket.
    rule = ({ method, bucket }) =>
      method === 'HEAD' && bucket === output ? { status: 403, code: 'AccessDenied' } : undefined;
    const { response, outcome, failureRecord } = await run(input, 'incoming/a.csv');
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'm-1' }]);
    expect(outcome).toMatchObject({ status: 'failed', retryable: false });
    expect(outcome?.reason).toMatch(/S3AccessDeniedError: HeadObject of s3:\/\/.+\/out\/.+ was denied \(403/);
    expect(outcome?.reason).toContain('s3:ListBucket');
    // Recorded at the first receive (non-retryable), so `rerun redrive` shows what to grant.
    expect(failureRecord).toMatchObject({ givenUp: 'non-retryable', retryable: false });
    expect(failureRecord?.reason).toContain('s3:ListBucket');
    expect(await listKeys(clients.s3, output, 'out/')).toEqual([]);
  });

  it('a 403 on the input GET is a non-retryable failure naming s3:GetObject', async () => {
    await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: 'incoming/b.csv', Body: 'b' }));
    rule = ({ method, bucket }) =>
      method === 'GET' && bucket === input ? { status: 403, code: 'AccessDenied' } : undefined;
    const { outcome, failureRecord } = await run(input, 'incoming/b.csv');
    expect(outcome).toMatchObject({ status: 'failed', retryable: false });
    expect(outcome?.reason).toMatch(/GetObject of s3:\/\/.+\/incoming\/b\.csv was denied/);
    expect(outcome?.reason).toContain('s3:GetObject');
    expect(failureRecord?.reason).toContain('s3:GetObject');
  });

  it("a 403 on the output's write is a non-retryable failure that names s3:PutObject and the KMS key as causes", async () => {
    await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: 'incoming/w.csv', Body: 'w' }));
    rule = ({ method, bucket }) =>
      method === 'PUT' && bucket === output ? { status: 403, code: 'AccessDenied' } : undefined;
    const { outcome, failureRecord } = await run(input, 'incoming/w.csv');
    expect(outcome).toMatchObject({ status: 'failed', retryable: false });
    expect(outcome?.reason).toMatch(/was denied \(403 AccessDenied\): the caller lacks s3:PutObject on the key/);
    // An SSE-KMS output bucket refuses a role without the key in the same words.
    expect(outcome?.reason).toContain(
      "kms:GenerateDataKey (and kms:Decrypt for a multipart upload) on the bucket's KMS key",
    );
    expect(failureRecord?.reason).toContain('kms:GenerateDataKey');
  });

  it('a 403 on a conditional delete is a non-retryable failure naming s3:DeleteObject, not a retry', async () => {
    await clients.s3.send(new PutObjectCommand({ Bucket: output, Key: 'out/gone.csv', Body: 'x' }));
    rule = ({ method, bucket }) =>
      method === 'DELETE' && bucket === output ? { status: 403, code: 'AccessDenied' } : undefined;
    const proxied = createAwsClients({ endpoint: proxy?.url as string, region: 'us-east-1', maxAttempts: 1 });
    const denied = new S3ObjectStore(proxied.s3).deleteIfMatch(output, 'out/gone.csv', 'any-etag');
    await expect(denied).rejects.toThrow(S3AccessDeniedError);
    await expect(denied).rejects.toMatchObject({
      retryable: false,
      missingPermission: expect.stringContaining('s3:DeleteObject'),
    });
  });

  it('an event for a bucket that does not exist is a non-retryable failure, not "input no longer exists"', async () => {
    const { outcome, failureRecord } = await run(uniqueName('rf-gone'), 'incoming/c.csv');
    expect(outcome).toMatchObject({ status: 'failed', retryable: false });
    expect(outcome?.reason).toMatch(/S3BucketMissingError: .*does not exist \(NoSuchBucket\)/);
    expect(failureRecord).toMatchObject({ givenUp: 'non-retryable' });
  });

  it('InvalidBucketName is a non-retryable failure', async () => {
    rule = ({ bucket }) => (bucket === 'Not_A_Bucket' ? { status: 400, code: 'InvalidBucketName' } : undefined);
    const { outcome } = await run('Not_A_Bucket', 'incoming/d.csv');
    expect(outcome).toMatchObject({ status: 'failed', retryable: false });
    expect(outcome?.reason).toMatch(/S3BucketNameInvalidError: .*not a valid bucket name \(InvalidBucketName\)/);
  });

  it('a deleted input (NoSuchKey) is skipped with its reason and writes nothing', async () => {
    const { response, outcome, failureRecord } = await run(input, 'incoming/deleted.csv');
    expect(response.batchItemFailures).toEqual([]);
    expect(outcome).toMatchObject({ status: 'skipped', reason: expect.stringMatching(/input no longer exists/) });
    expect(failureRecord).toBeUndefined();
  });

  it('a transient 503 stays retryable', async () => {
    await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: 'incoming/e.csv', Body: 'e' }));
    rule = ({ method, bucket }) =>
      method === 'GET' && bucket === input ? { status: 503, code: 'SlowDown' } : undefined;
    const { outcome, failureRecord } = await run(input, 'incoming/e.csv');
    expect(outcome).toMatchObject({ status: 'failed', retryable: true });
    // A first receive of a retryable failure is not a give-up.
    expect(failureRecord).toBeUndefined();
  });

  it('processObject throws the typed errors, with the permission and the object on them', async () => {
    await clients.s3.send(new PutObjectCommand({ Bucket: input, Key: 'incoming/f.csv', Body: 'f' }));
    const proxied = createAwsClients({ endpoint: proxy?.url as string, region: 'us-east-1', maxAttempts: 1 });
    const store = new S3ObjectStore(proxied.s3);
    const event = (bucket: string) => ({ bucket, key: 'incoming/f.csv', eventName: 'ObjectCreated:Put' });

    rule = ({ method }) => (method === 'HEAD' ? { status: 403, code: 'AccessDenied' } : undefined);
    const denied = await processObject(copyWorker(output), event(input), { store }).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(S3AccessDeniedError);
    expect(denied).toMatchObject({ operation: 'HeadObject', bucket: output, retryable: false });
    expect((denied as S3AccessDeniedError).missingPermission).toContain('s3:ListBucket');

    rule = () => undefined;
    const missingOutput = await processObject(copyWorker(uniqueName('rf-none')), event(input), { store }).catch(
      (e: unknown) => e,
    );
    // The output bucket is gone: the HEAD's bodiless 404 reads as "no output", the create-only PUT then says NoSuchBucket.
    expect(missingOutput).toBeInstanceOf(S3BucketMissingError);
    expect(missingOutput).toMatchObject({ retryable: false });

    rule = ({ bucket }) => (bucket === 'Bad_Name' ? { status: 400, code: 'InvalidBucketName' } : undefined);
    const invalid = await processObject(copyWorker(output), event('Bad_Name'), { store }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(S3BucketNameInvalidError);
  });
});
