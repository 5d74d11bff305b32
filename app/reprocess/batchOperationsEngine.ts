import { setTimeout as sleep } from 'node:timers/promises';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  type BatchOperationsFunction,
  type LocalJobManifest,
  runLocalBatchOperationsJob,
} from '../../local/batchOperations/LocalBatchOperationsJob.js';
import { readManifestTasks } from '../../local/batchOperations/manifestTasks.js';
import { batchOperationsReportManifestKey } from '../../src/batch/batchOperationsLayout.js';
import {
  BatchOperationsManifestError,
  buildCreateJobRequest,
  isGeneratedManifest,
  localJobId,
  type ManifestFormat,
  type ManifestGeneratorSpec,
  type ReportedFailure,
  type RerunCreateJobRequest,
  reportResults,
  reportRows,
} from './batchOperationsJob.js';
import { ReprocessWaitEnd } from './reprocessResult.js';
import type { JobView, S3ControlJobs } from './s3ControlJobs.js';

/** Where a job runs: S3 Batch Operations through S3 Control, or the local stand-in in this process. */
export type JobRunner =
  | {
      readonly kind: 'aws';
      readonly jobs: S3ControlJobs;
      readonly functionArn: string;
      readonly roleArn: string;
    }
  | {
      readonly kind: 'local';
      /** The handler the stand-in invokes (createBatchOperationsHandler over the same worker). */
      readonly handler: BatchOperationsFunction;
    };

/**
 * The ARNs the local stand-in's request is built with: it invokes the handler in this process and
 * assumes no role, but the request (and so its token and job id) is built as for AWS.
 */
const LOCAL_FUNCTION_ARN = 'arn:aws:lambda:us-east-1:000000000000:function:rerun-batch-operations-local';
const LOCAL_ROLE_ARN = 'arn:aws:iam::000000000000:role/rerun-batch-operations-local';

/** A manifest in S3, ready for CreateJob. */
export interface StoredManifest {
  readonly bucket: string;
  readonly key: string;
  readonly etag: string;
  readonly format: ManifestFormat;
}

/**
 * Writes a manifest rerun built under its content-addressed key, create-only: a 412 means this
 * very plan was written before (the key is its SHA-256), which is kept as it is.
 *
 * @example
 * const manifest = await putManifest(s3, 'out', batchOperationsManifestKey(builder.digest()), builder.text());
 */
export async function putManifest(s3: S3Client, bucket: string, key: string, body: string): Promise<StoredManifest> {
  let etag: string | undefined;
  try {
    const out = await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: 'text/csv', IfNoneMatch: '*' }),
    );
    etag = out.ETag;
  } catch (error) {
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode !== 412) throw error;
  }
  etag ??= (await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }))).ETag;
  if (!etag) throw new BatchOperationsManifestError(`s3://${bucket}/${key} has no ETag: CreateJob needs one`);
  return { bucket, key, etag: etag.replace(/"/g, ''), format: 'S3BatchOperations_CSV_20180820' };
}

/**
 * An existing manifest (`--manifest s3://...`): its ETag, from one HEAD.
 *
 * @example
 * const manifest = await existingManifest(s3, 'inv', 'in/all/2026-12-01T00-00Z/manifest.json', 'S3InventoryReport_CSV_20161130');
 */
export async function existingManifest(
  s3: S3Client,
  bucket: string,
  key: string,
  format: ManifestFormat,
): Promise<StoredManifest> {
  const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
  if (!head.ETag) throw new BatchOperationsManifestError(`s3://${bucket}/${key} has no ETag: CreateJob needs one`);
  return { bucket, key, etag: head.ETag.replace(/"/g, ''), format };
}

/** A job submitted (or found again: the same request token). */
export interface SubmittedJob {
  readonly jobId: string;
  readonly request: RerunCreateJobRequest;
  /** Local stand-in only: the job of this token had run before; its report is read, nothing runs. */
  readonly ranBefore?: boolean;
  /** Local stand-in only: the tasks (the stand-in runs the whole job before returning). */
  readonly totalTasks?: number;
}

/**
 * Creates the job: CreateJob against AWS (a token it has seen returns that job), or, with the local
 * stand-in, runs the job at once (runLocalBatchOperationsJob, failed tasks only in the report, the
 * job id derived from the token, so the same plan is the same job there too: a second run finds
 * its report and runs nothing).
 *
 * @example
 * const job = await submitJob({ s3, runner, manifest, report: { bucket: 'out', prefix: 'batch-operations/reports' } });
 */
export async function submitJob(options: {
  readonly s3: S3Client;
  readonly runner: JobRunner;
  /** A manifest object, or the generator's filters (S3 lists the bucket itself). */
  readonly manifest: StoredManifest | ManifestGeneratorSpec;
  readonly report: { readonly bucket: string; readonly prefix: string };
  readonly description: string;
}): Promise<SubmittedJob> {
  const { runner } = options;
  const request = buildCreateJobRequest({
    functionArn: runner.kind === 'aws' ? runner.functionArn : LOCAL_FUNCTION_ARN,
    roleArn: runner.kind === 'aws' ? runner.roleArn : LOCAL_ROLE_ARN,
    manifest: options.manifest,
    report: options.report,
    description: options.description,
  });
  if (runner.kind === 'aws') return { jobId: await runner.jobs.createJob(request), request };

  // The stand-in reads each kind of manifest as S3 does: CSV, S3 Inventory report, or generated.
  const manifest: LocalJobManifest = isGeneratedManifest(options.manifest)
    ? { generator: options.manifest.generator }
    : { bucket: options.manifest.bucket, key: options.manifest.key, format: options.manifest.format };
  const jobId = localJobId(request.ClientRequestToken);
  const reportKey = batchOperationsReportManifestKey(options.report.prefix, jobId);
  if (await exists(options.s3, options.report.bucket, reportKey)) {
    const rows = await readManifestTasks(options.s3, manifest);
    return { jobId, request, ranBefore: true, totalTasks: rows.length };
  }
  const job = await runLocalBatchOperationsJob({
    s3: options.s3,
    handler: runner.handler,
    manifest,
    report: { ...options.report, scope: 'FailedTasksOnly' },
    jobId,
    invocationSchemaVersion: '2.0',
  });
  return { jobId, request, totalTasks: job.totalTasks };
}

/** How following a job ended, with the counts of its completion report. */
export interface JobOutcome {
  readonly jobId: string;
  /** The job's last status (`Complete`, `Failed`, `Cancelled`, or still running on a timeout). */
  readonly status: string;
  readonly ended: ReprocessWaitEnd;
  readonly total: number;
  readonly succeeded: number;
  readonly failed: number;
  /** The first failed tasks of the report (up to `sampleSize`). */
  readonly failures: readonly ReportedFailure[];
  /** Why the job failed, when it did (DescribeJob's FailureReasons). */
  readonly reasons: readonly string[];
  /** The report's manifest.json, when the job wrote one. */
  readonly reportKey?: string;
  readonly elapsedMs: number;
}

/** Statuses after which a job does nothing more (S3 User Guide, "Job statuses"). */
const TERMINAL = new Set(['Complete', 'Failed', 'Cancelled']);

/**
 * Follows a job until it ends (DescribeJob every `pollIntervalMs`), then reads its completion
 * report: the failed tasks and their result strings. The counts are the report's: `failed` is the
 * rows it lists (failed tasks only), `succeeded` the rest of the job's tasks. With the local
 * stand-in the job has already ended; its report is read the same way.
 *
 * @example
 * const outcome = await followJob({ s3, runner, jobId, accountId, report, onProgress: (v) => ... });
 */
export async function followJob(options: {
  readonly s3: S3Client;
  readonly runner: JobRunner;
  readonly jobId: string;
  /** AWS only: the job's account (from the role ARN). */
  readonly accountId?: string;
  /** Where the report was asked to go; DescribeJob's own Report wins when it has one. */
  readonly report: { readonly bucket: string; readonly prefix: string };
  /** Local stand-in: the job's task count (it does not answer DescribeJob). */
  readonly totalTasks?: number;
  /** @default 5000 */
  readonly pollIntervalMs?: number;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** @default 20 */
  readonly sampleSize?: number;
  readonly onProgress?: (view: JobView, elapsedMs: number) => void;
  /** @default Date.now */
  readonly now?: () => number;
}): Promise<JobOutcome> {
  const now = options.now ?? Date.now;
  const started = now();
  const sampleSize = options.sampleSize ?? 20;
  let view: JobView;
  let ended: ReprocessWaitEnd | undefined;
  if (options.runner.kind === 'local') {
    const reportKey = batchOperationsReportManifestKey(options.report.prefix, options.jobId);
    if (!(await exists(options.s3, options.report.bucket, reportKey))) {
      throw new BatchOperationsManifestError(
        `no local job ${options.jobId}: s3://${options.report.bucket}/${reportKey} does not exist ` +
          '(the local stand-in runs a job to its end at once, so an existing job always has its report).',
      );
    }
    view = {
      id: options.jobId,
      status: 'Complete',
      total: options.totalTasks ?? 0,
      succeeded: 0,
      failed: 0,
      reasons: [],
    };
  } else {
    const { jobs } = options.runner;
    const accountId = options.accountId as string;
    for (;;) {
      view = await jobs.describeJob(accountId, options.jobId);
      options.onProgress?.(view, now() - started);
      if (TERMINAL.has(view.status)) break;
      if (options.signal?.aborted) {
        ended = ReprocessWaitEnd.INTERRUPTED;
        break;
      }
      if (options.timeoutMs !== undefined && now() - started >= options.timeoutMs) {
        ended = ReprocessWaitEnd.TIMEOUT;
        break;
      }
      await sleep(options.pollIntervalMs ?? 5000, undefined, options.signal ? { signal: options.signal } : {}).catch(
        () => {},
      );
    }
  }
  const elapsedMs = now() - started;
  if (ended) {
    return {
      jobId: options.jobId,
      status: view.status,
      ended,
      total: view.total,
      succeeded: view.succeeded,
      failed: view.failed,
      failures: [],
      reasons: view.reasons,
      elapsedMs,
    };
  }
  const report = view.report ?? options.report;
  const reportKey = batchOperationsReportManifestKey(report.prefix, options.jobId);
  const read = (await exists(options.s3, report.bucket, reportKey))
    ? await readReport(options.s3, report.bucket, reportKey, sampleSize)
    : undefined;
  const failed = read ? read.failed : view.failed;
  const total = view.total;
  const succeeded = Math.max(0, total - failed);
  return {
    jobId: options.jobId,
    status: view.status,
    ended: view.status === 'Complete' && failed === 0 ? ReprocessWaitEnd.COMPLETE : ReprocessWaitEnd.INCOMPLETE,
    total,
    succeeded,
    failed,
    failures: read?.failures ?? [],
    reasons: view.reasons,
    ...(read ? { reportKey } : {}),
    elapsedMs,
  };
}

/**
 * Reads a completion report: every `failed` results CSV it lists, counted, and the first rows kept.
 *
 * @example
 * const { failed, failures } = await readReport(s3, 'out', 'batch-operations/reports/job-…/manifest.json', 20);
 */
export async function readReport(
  s3: S3Client,
  bucket: string,
  manifestKey: string,
  sampleSize: number,
): Promise<{ failed: number; failures: ReportedFailure[] }> {
  const results = reportResults(await readText(s3, bucket, manifestKey));
  let failed = 0;
  const failures: ReportedFailure[] = [];
  for (const result of results) {
    if (result.status !== 'failed') continue;
    for (const row of reportRows(await readText(s3, result.bucket || bucket, result.key))) {
      failed++;
      if (failures.length < sampleSize) failures.push(row);
    }
  }
  return { failed, failures };
}

async function exists(s3: S3Client, bucket: string, key: string): Promise<boolean> {
  try {
    await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch (error) {
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
    throw error;
  }
}

async function readText(s3: S3Client, bucket: string, key: string): Promise<string> {
  const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return (await out.Body?.transformToString('utf8')) ?? '';
}
