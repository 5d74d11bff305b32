import { CreateJobCommand, type DescribeJobCommand } from '@aws-sdk/client-s3-control';
import { describe, expect, it } from 'vitest';
import {
  AUTO_BATCH_OPERATIONS_THRESHOLD,
  autoEngine,
  BatchOperationsManifestError,
  buildCreateJobRequest,
  type CreateJobInput,
  localJobId,
  ManifestBuilder,
  manifestFormatOf,
  reportRows,
} from '../../app/reprocess/batchOperationsJob.js';
import { s3ControlJobs } from '../../app/reprocess/s3ControlJobs.js';

const input: CreateJobInput = {
  functionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:rerun-batch-operations',
  roleArn: 'arn:aws:iam::123456789012:role/rerun-batch-operations-job',
  manifest: {
    bucket: 'rerun-output',
    key: 'batch-operations/manifests/abc.csv',
    etag: '"0f343b0931126a20f133d67c2b018a3b"',
    format: 'S3BatchOperations_CSV_20180820',
  },
  report: { bucket: 'rerun-output', prefix: 'batch-operations/reports' },
  description: 'rerun reprocess incoming/ mode stale',
};

/** An S3 Control client that records what it is sent. */
function recordingClient(answer: Record<string, unknown>) {
  const sent: unknown[] = [];
  return {
    sent,
    client: {
      send: async (command: unknown) => {
        sent.push(command);
        return answer;
      },
    } as never,
  };
}

describe('the CreateJob request of rerun reprocess --engine batch-operations', () => {
  it('sends LambdaInvoke (schema 2.0) over the CSV manifest by ARN and ETag, a failed-tasks report, the role, no confirmation', async () => {
    const { sent, client } = recordingClient({ JobId: 'job-1' });
    const request = buildCreateJobRequest(input);
    expect(await s3ControlJobs(client).createJob(request)).toBe('job-1');
    expect(sent).toHaveLength(1);
    expect(sent[0]).toBeInstanceOf(CreateJobCommand);
    expect((sent[0] as CreateJobCommand).input).toEqual({
      AccountId: '123456789012',
      ConfirmationRequired: false,
      Operation: {
        LambdaInvoke: {
          FunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:rerun-batch-operations',
          InvocationSchemaVersion: '2.0',
        },
      },
      Manifest: {
        Spec: { Format: 'S3BatchOperations_CSV_20180820', Fields: ['Bucket', 'Key'] },
        Location: {
          ObjectArn: 'arn:aws:s3:::rerun-output/batch-operations/manifests/abc.csv',
          ETag: '0f343b0931126a20f133d67c2b018a3b',
        },
      },
      Report: {
        Enabled: true,
        Bucket: 'arn:aws:s3:::rerun-output',
        Prefix: 'batch-operations/reports',
        Format: 'Report_CSV_20180820',
        ReportScope: 'FailedTasksOnly',
      },
      Priority: 10,
      RoleArn: 'arn:aws:iam::123456789012:role/rerun-batch-operations-job',
      Description: 'rerun reprocess incoming/ mode stale',
      ClientRequestToken: request.ClientRequestToken,
    });
  });

  it('derives the ClientRequestToken from the request: the same plan is the same token, another manifest another', () => {
    const token = buildCreateJobRequest(input).ClientRequestToken;
    // 64 hex digits: the token's maximum length (S3 API Reference, CreateJob).
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(buildCreateJobRequest({ ...input, manifest: { ...input.manifest } }).ClientRequestToken).toBe(token);
    // The same content rewritten gives the same ETag; other content, another ETag and another job.
    expect(
      buildCreateJobRequest({ ...input, manifest: { ...input.manifest, etag: 'ffffffffffffffffffffffffffffffff' } })
        .ClientRequestToken,
    ).not.toBe(token);
    expect(
      buildCreateJobRequest({ ...input, roleArn: input.roleArn.replace('job', 'other') }).ClientRequestToken,
    ).not.toBe(token);
    // Quotes around the ETag, as S3 returns it, do not change the job.
    expect(
      buildCreateJobRequest({ ...input, manifest: { ...input.manifest, etag: '0f343b0931126a20f133d67c2b018a3b' } })
        .ClientRequestToken,
    ).toBe(token);
    expect(localJobId(token)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it('names an S3 Inventory manifest.json by its format and lets the report describe its columns', () => {
    const key = 'inventory/rerun-input/all/2026-12-01T00-00Z/manifest.json';
    expect(manifestFormatOf(key)).toBe('S3InventoryReport_CSV_20161130');
    expect(manifestFormatOf('ops/manual.csv')).toBe('S3BatchOperations_CSV_20180820');
    const request = buildCreateJobRequest({
      ...input,
      manifest: { ...input.manifest, key, format: manifestFormatOf(key) },
    });
    expect(request.Manifest?.Spec).toEqual({ Format: 'S3InventoryReport_CSV_20161130' });
  });

  it('refuses a role ARN without an account id, naming what to pass', () => {
    expect(() => buildCreateJobRequest({ ...input, roleArn: 'rerun-job-role' })).toThrow(BatchOperationsManifestError);
    expect(() => buildCreateJobRequest({ ...input, roleArn: 'rerun-job-role' })).toThrow(/job role's ARN/);
  });

  it("reads DescribeJob's status, progress and report location", async () => {
    const { sent, client } = recordingClient({
      Job: {
        JobId: 'job-1',
        Status: 'Active',
        ProgressSummary: { TotalNumberOfTasks: 10, NumberOfTasksSucceeded: 6, NumberOfTasksFailed: 1 },
        Report: { Bucket: 'arn:aws:s3:::rerun-output', Prefix: 'batch-operations/reports' },
      },
    });
    expect(await s3ControlJobs(client).describeJob('123456789012', 'job-1')).toEqual({
      id: 'job-1',
      status: 'Active',
      total: 10,
      succeeded: 6,
      failed: 1,
      report: { bucket: 'rerun-output', prefix: 'batch-operations/reports' },
      reasons: [],
    });
    expect((sent[0] as DescribeJobCommand).input).toEqual({ AccountId: '123456789012', JobId: 'job-1' });
  });
});

describe('the manifest rerun writes from its plan', () => {
  it('is one bucket,key line per input, keys URL-encoded, and the same plan gives the same digest', () => {
    const a = new ManifestBuilder();
    const b = new ManifestBuilder();
    for (const m of [a, b]) {
      m.add('in', 'incoming/a b+c.csv');
      m.add('in', 'incoming/é.csv');
    }
    expect(a.text()).toBe('in,incoming/a%20b%2Bc.csv\nin,incoming/%C3%A9.csv\n');
    expect(a.digest()).toBe(b.digest());
    b.add('in', 'incoming/d.csv');
    expect(b.digest()).not.toBe(a.digest());
  });

  it('refuses to grow past its row limit, pointing at --manifest', () => {
    const m = new ManifestBuilder(1);
    m.add('in', 'incoming/a.csv');
    expect(() => m.add('in', 'incoming/b.csv')).toThrow(/--manifest/);
  });
});

describe('--engine auto', () => {
  it(`runs a job from ${AUTO_BATCH_OPERATIONS_THRESHOLD} planned inputs and SQS messages below`, () => {
    expect(autoEngine(0)).toBe('sqs');
    expect(autoEngine(AUTO_BATCH_OPERATIONS_THRESHOLD - 1)).toBe('sqs');
    expect(autoEngine(AUTO_BATCH_OPERATIONS_THRESHOLD)).toBe('batch-operations');
  });
});

describe('the completion report', () => {
  it("reads the result code from whichever of S3's two status columns is not a number, and decodes keys", () => {
    const csv =
      'in,incoming/a%20b.csv,,failed,200,PermanentFailure,"input too large, 12 MB"\n' +
      'in,incoming/c.csv,,failed,TemporaryFailure,500,throttled\n';
    expect(reportRows(csv)).toEqual([
      { bucket: 'in', key: 'incoming/a b.csv', resultCode: 'PermanentFailure', resultString: 'input too large, 12 MB' },
      { bucket: 'in', key: 'incoming/c.csv', resultCode: 'TemporaryFailure', resultString: 'throttled' },
    ]);
  });

  it('builds a job whose manifest S3 generates: the source bucket by ARN, the prefix and creation-time filters, no manifest object', () => {
    const generated = (createdAfter?: Date) =>
      buildCreateJobRequest({
        ...input,
        manifest: {
          generator: {
            sourceBucket: 'rerun-input',
            prefix: 'incoming/dt=2026-11-',
            createdAfter,
            createdBefore: new Date('2026-12-01T00:00:00Z'),
          },
        },
      });
    const request = generated(new Date('2026-11-01T00:00:00Z'));
    expect(request.Manifest).toBeUndefined();
    expect(request.ManifestGenerator).toEqual({
      S3JobManifestGenerator: {
        SourceBucket: 'arn:aws:s3:::rerun-input',
        EnableManifestOutput: false,
        Filter: {
          KeyNameConstraint: { MatchAnyPrefix: ['incoming/dt=2026-11-'] },
          CreatedAfter: new Date('2026-11-01T00:00:00Z'),
          CreatedBefore: new Date('2026-12-01T00:00:00Z'),
        },
      },
    });
    // The dates are part of the token: the same filters are one job, other dates another.
    expect(generated(new Date('2026-11-01T00:00:00Z')).ClientRequestToken).toBe(request.ClientRequestToken);
    expect(generated(new Date('2026-11-02T00:00:00Z')).ClientRequestToken).not.toBe(request.ClientRequestToken);
    expect(generated(undefined).ManifestGenerator?.S3JobManifestGenerator.Filter).not.toHaveProperty('CreatedAfter');
  });
});
