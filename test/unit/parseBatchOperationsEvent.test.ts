import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { taskResult } from '../../src/batch/createBatchOperationsHandler.js';
import { encodeManifestKey, parseBatchOperationsEvent } from '../../src/intake/parseBatchOperationsEvent.js';
import { decodeS3EventKey } from '../../src/intake/parseS3Event.js';

// Event shapes from the S3 User Guide, "Invoke AWS Lambda function", "Example request and response".
const v1 = (task: Record<string, unknown>) => ({
  invocationSchemaVersion: '1.0',
  invocationId: 'YXNkbGZqYWRmaiBhc2RmdW9hZHNmZGpmaGFzbGtkaGZza2RmaAo',
  job: { id: 'f3cc4f60-61f6-4a2b-8a21-d07600c373ce' },
  tasks: [{ taskId: 'dGFza2lkZ29lc2hlcmUK', s3VersionId: '1', ...task }],
});

describe('parseBatchOperationsEvent', () => {
  it('reads schema 1.0 tasks by bucket ARN, global or regional, and decodes the URL-encoded key', () => {
    const parsed = parseBatchOperationsEvent(
      v1({ s3Key: 'in/caf%C3%A9%20m%2B1.csv', s3BucketArn: 'arn:aws:s3:us-east-1:0123456788:awsexamplebucket1' }),
    );
    expect(parsed).toMatchObject({
      ok: true,
      schema: '1.0',
      jobId: 'f3cc4f60-61f6-4a2b-8a21-d07600c373ce',
      tasks: [{ ok: true, bucket: 'awsexamplebucket1', key: 'in/café m+1.csv', versionId: '1' }],
    });
  });

  it('reads schema 2.0 tasks by bucket name, with the job userArguments', () => {
    const parsed = parseBatchOperationsEvent({
      invocationSchemaVersion: '2.0',
      invocationId: 'inv',
      job: { id: 'job-2', userArguments: { k1: 'v1', bad: 3 } },
      tasks: [{ taskId: 't', s3Key: 'a+b.csv', s3VersionId: null, s3Bucket: 'powertools-dataset' }],
    });
    expect(parsed).toEqual({
      ok: true,
      schema: '2.0',
      invocationId: 'inv',
      jobId: 'job-2',
      userArguments: { k1: 'v1' },
      tasks: [{ ok: true, taskId: 't', bucket: 'powertools-dataset', key: 'a b.csv' }],
    });
  });

  it('keeps a task that names no object as a failed task (never dropped), and refuses what is no invocation', () => {
    const parsed = parseBatchOperationsEvent(v1({ s3Key: 'k', s3Bucket: 'wrong-field-for-1.0' }));
    expect(parsed).toMatchObject({ ok: true, tasks: [{ ok: false, reason: expect.stringMatching(/s3BucketArn/) }] });
    const badKey = parseBatchOperationsEvent(v1({ s3Key: '%E0%A4%A', s3BucketArn: 'arn:aws:s3:::b' }));
    expect(badKey).toMatchObject({ ok: true, tasks: [{ ok: false, reason: expect.stringMatching(/URL-encoded/) }] });
    expect(parseBatchOperationsEvent({ Records: [] })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/invocationSchemaVersion/),
    });
    expect(parseBatchOperationsEvent({ ...v1({}), invocationSchemaVersion: '3.0' })).toMatchObject({ ok: false });
  });

  it('encodes manifest keys so that both a form decoder and a percent decoder read the same key back', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (key) => {
        const encoded = encodeManifestKey(key);
        expect(decodeS3EventKey(encoded)).toBe(key);
        expect(decodeURIComponent(encoded)).toBe(key);
        expect(encoded).not.toMatch(/[ +,"\n]/);
      }),
    );
  });
});

describe('taskResult', () => {
  it('maps processed and skipped to Succeeded, retryable failures to TemporaryFailure, others to PermanentFailure', () => {
    expect(taskResult({ messageId: 'a', status: 'processed', reason: 'output created' })).toEqual({
      taskId: 'a',
      resultCode: 'Succeeded',
      resultString: 'processed: output created',
    });
    expect(taskResult({ messageId: 'b', status: 'failed', retryable: true, reason: 'throttled' }).resultCode).toBe(
      'TemporaryFailure',
    );
    expect(taskResult({ messageId: 'c', status: 'failed', retryable: false, reason: 'x'.repeat(2000) })).toMatchObject({
      resultCode: 'PermanentFailure',
      resultString: expect.stringMatching(/^x{511}…$/),
    });
  });
});
