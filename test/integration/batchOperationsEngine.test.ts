import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { beforeEach, describe, expect, it } from 'vitest';
import { followJob, type JobRunner, putManifest, submitJob } from '../../app/reprocess/batchOperationsEngine.js';
import { ManifestBuilder, type RerunCreateJobRequest } from '../../app/reprocess/batchOperationsJob.js';
import type { JobView, S3ControlJobs } from '../../app/reprocess/s3ControlJobs.js';
import { batchOperationsManifestKey } from '../../src/batch/batchOperationsLayout.js';
import { testClients, uniqueName } from '../support/aws.js';
import { createBucket, readText } from '../support/s3.js';

const ROLE = 'arn:aws:iam::123456789012:role/rerun-batch-operations-job';
const FUNCTION = 'arn:aws:lambda:us-east-1:123456789012:function:rerun-batch-operations';

/** S3 Control as data: CreateJob answers one job per token (as its idempotency does), DescribeJob a script. */
function scriptedJobs(views: Omit<JobView, 'id' | 'reasons'>[]) {
  const created: RerunCreateJobRequest[] = [];
  const byToken = new Map<string, string>();
  const described: string[] = [];
  let i = 0;
  const jobs: S3ControlJobs = {
    async createJob(request) {
      created.push(request);
      const id = byToken.get(request.ClientRequestToken) ?? `job-${byToken.size + 1}`;
      byToken.set(request.ClientRequestToken, id);
      return id;
    },
    async describeJob(accountId, jobId) {
      described.push(`${accountId}/${jobId}`);
      const view = views[Math.min(i++, views.length - 1)] as Omit<JobView, 'id' | 'reasons'>;
      return { id: jobId, reasons: [], ...view };
    },
  };
  return { jobs, created, described };
}

describe('the Batch Operations engine against AWS (S3 Control scripted, S3 the emulator)', () => {
  const clients = testClients();
  let bucket: string;
  beforeEach(async () => {
    bucket = await createBucket(clients.s3, uniqueName('boe'));
  });

  it('writes the manifest create-only, names it by ETag in CreateJob, and the same plan again is the same job', async () => {
    const { jobs, created } = scriptedJobs([]);
    const runner: JobRunner = { kind: 'aws', jobs, functionArn: FUNCTION, roleArn: ROLE };
    const build = () => {
      const m = new ManifestBuilder();
      m.add('in', 'incoming/a b.csv');
      m.add('in', 'incoming/c.csv');
      return m;
    };
    const report = { bucket, prefix: 'batch-operations/reports' };
    const submit = async () => {
      const m = build();
      const manifest = await putManifest(clients.s3, bucket, batchOperationsManifestKey(m.digest()), m.text());
      return submitJob({
        s3: clients.s3,
        runner,
        manifest,
        report,
        description: 'rerun reprocess incoming/ mode stale',
      });
    };
    const first = await submit();
    // Written again: 412 on the create-only put, the existing object (same bytes, same ETag) is used.
    const second = await submit();
    expect(second.jobId).toBe(first.jobId);
    expect(created).toHaveLength(2);
    expect(created[1]).toEqual(created[0]);
    const key = batchOperationsManifestKey(build().digest());
    const head = await clients.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    expect(created[0]?.Manifest?.Location).toEqual({
      ObjectArn: `arn:aws:s3:::${bucket}/${key}`,
      ETag: head.ETag?.replace(/"/g, ''),
    });
    expect(await readText(clients.s3, bucket, key)).toBe('in,incoming/a%20b.csv\nin,incoming/c.csv\n');
  });

  it('follows the job until it completes, then counts and lists the failed tasks from its report', async () => {
    const { jobs, described } = scriptedJobs([
      { status: 'Preparing', total: 0, succeeded: 0, failed: 0 },
      { status: 'Active', total: 3, succeeded: 1, failed: 0 },
      {
        status: 'Complete',
        total: 3,
        succeeded: 2,
        failed: 1,
        report: { bucket, prefix: 'batch-operations/reports' },
      },
    ]);
    // The report as S3 writes it (User Guide example rows: HTTP status fifth, result code sixth).
    const failedCsv = 'in,incoming/big%20one.csv,,failed,200,PermanentFailure,"input too large (limit 1 MiB)"\n';
    await clients.s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'batch-operations/reports/job-j1/results/f.csv', Body: failedCsv }),
    );
    await clients.s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: 'batch-operations/reports/job-j1/manifest.json',
        Body: JSON.stringify({
          Format: 'Report_CSV_20180820',
          ReportCreationDate: '2026-12-03T10:00:00.000Z',
          Results: [
            {
              TaskExecutionStatus: 'failed',
              Bucket: bucket,
              MD5Checksum: '0',
              Key: 'batch-operations/reports/job-j1/results/f.csv',
            },
          ],
          ReportSchema: 'Bucket, Key, VersionId, TaskStatus, ErrorCode, HTTPStatusCode, ResultMessage',
        }),
      }),
    );
    const seen: string[] = [];
    const outcome = await followJob({
      s3: clients.s3,
      runner: { kind: 'aws', jobs, functionArn: FUNCTION, roleArn: ROLE },
      jobId: 'j1',
      accountId: '123456789012',
      report: { bucket, prefix: 'batch-operations/reports' },
      pollIntervalMs: 1,
      onProgress: (view) => seen.push(view.status),
    });
    expect(seen).toEqual(['Preparing', 'Active', 'Complete']);
    expect(described).toEqual(['123456789012/j1', '123456789012/j1', '123456789012/j1']);
    expect(outcome).toMatchObject({
      status: 'Complete',
      ended: 'incomplete',
      total: 3,
      succeeded: 2,
      failed: 1,
      failures: [
        {
          bucket: 'in',
          key: 'incoming/big one.csv',
          resultCode: 'PermanentFailure',
          resultString: 'input too large (limit 1 MiB)',
        },
      ],
      reportKey: 'batch-operations/reports/job-j1/manifest.json',
    });
  });

  it('stops following at the timeout and leaves the job running', async () => {
    const { jobs } = scriptedJobs([{ status: 'Active', total: 10, succeeded: 4, failed: 0 }]);
    let clock = 0;
    const outcome = await followJob({
      s3: clients.s3,
      runner: { kind: 'aws', jobs, functionArn: FUNCTION, roleArn: ROLE },
      jobId: 'j2',
      accountId: '123456789012',
      report: { bucket, prefix: 'batch-operations/reports' },
      pollIntervalMs: 1,
      timeoutMs: 3000,
      now: () => (clock += 1000),
    });
    expect(outcome).toMatchObject({ ended: 'timeout', status: 'Active', total: 10, succeeded: 4 });
  });
});
