import { createHash, randomUUID } from 'node:crypto';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Context } from 'aws-lambda';
import { mapWithConcurrency } from '../../src/batch/mapWithConcurrency.js';
import type {
  BatchOperationsResponse,
  BatchOperationsResultCode,
  BatchOperationsSchema,
} from '../../src/intake/parseBatchOperationsEvent.js';
import { checkOptions, type OptionNames } from '../../src/options/checkOptions.js';
import { LocalSetupError } from '../errors.js';
import { createLambdaContext } from '../runner/lambdaContext.js';
import { type LocalJobManifest, type ManifestRow, readManifestTasks } from './manifestTasks.js';

export { type LocalJobManifest, type ManifestRow, parseManifestCsv } from './manifestTasks.js';

/** A function as a `LambdaInvoke` job calls it. */
export type BatchOperationsFunction = (event: unknown, context: Context) => Promise<BatchOperationsResponse>;

/** Options of {@link runLocalBatchOperationsJob}. */
export interface LocalBatchOperationsJobOptions {
  readonly s3: S3Client;
  /** The handler the job invokes (createBatchOperationsHandler), called in this process. */
  readonly handler: BatchOperationsFunction;
  /**
   * Where the tasks come from: a CSV manifest (`S3BatchOperations_CSV_20180820`:
   * `bucket,key[,versionId]`, keys URL-encoded), an S3 Inventory report's manifest.json, or the
   * manifest generator's filters over a bucket (local/batchOperations/manifestTasks.ts).
   */
  readonly manifest: LocalJobManifest;
  /** Where the completion report goes (`{prefix}/job-{jobId}/...`), and which tasks it lists. */
  readonly report: {
    readonly bucket: string;
    readonly prefix: string;
    readonly scope?: 'AllTasks' | 'FailedTasksOnly';
  };
  /** @default a random UUID, as S3 assigns */
  readonly jobId?: string;
  /** @default '1.0' */
  readonly invocationSchemaVersion?: BatchOperationsSchema;
  /** Schema 2.0 only, as in LambdaInvokeOperation. @default none */
  readonly userArguments?: Readonly<Record<string, string>>;
  /**
   * Invocations of one task at most: a `TemporaryFailure` is redriven until then, and reported
   * failed after the last (S3 User Guide, "Response and result codes": "will be redriven before
   * the job completes ... If this is the final redrive, the error message is included").
   * @default 3
   */
  readonly maxAttempts?: number;
  /** Tasks invoked at once (S3 sends one task per invocation). @default 4 */
  readonly concurrency?: number;
  /** Each invocation's time budget (the function timeout). @default 60000 */
  readonly functionTimeoutMs?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

/** The names of {@link LocalBatchOperationsJobOptions}, checked by checkOptions (tsc fails when this list and the type differ). */
export const LOCAL_BATCH_OPERATIONS_JOB_OPTION_NAMES = {
  concurrency: true,
  functionTimeoutMs: true,
  handler: true,
  invocationSchemaVersion: true,
  jobId: true,
  manifest: true,
  maxAttempts: true,
  now: true,
  report: true,
  s3: true,
  userArguments: true,
} as const satisfies OptionNames<LocalBatchOperationsJobOptions>;

/** How one task of a job ended. */
export interface LocalTaskOutcome {
  readonly bucket: string;
  /** As in the manifest (URL-encoded), as the report writes it. */
  readonly key: string;
  readonly versionId?: string;
  readonly status: 'succeeded' | 'failed';
  /** The last result code, or `PermanentFailure` for a function error. */
  readonly resultCode: BatchOperationsResultCode;
  readonly resultString: string;
  readonly attempts: number;
}

/** What a job did, and where its completion report is. */
export interface LocalBatchOperationsJobResult {
  readonly jobId: string;
  /** `Complete`, as DescribeJob would say of a job that ran every task. */
  readonly status: 'Complete';
  readonly totalTasks: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly tasks: readonly LocalTaskOutcome[];
  /** The report's top-level manifest, `{prefix}/job-{jobId}/manifest.json`. */
  readonly reportManifestKey: string;
}

/**
 * A stand-in for S3 Batch Operations running a `LambdaInvoke` job, for `rerun dev` and the tests
 * (no emulator implements S3 Control jobs: docs/EMULATORS.md). It reads the CSV manifest, invokes
 * the handler once per task with the documented event (S3 User Guide, "Invoke AWS Lambda
 * function", schema 1.0 or 2.0, one task per invocation as S3 sends), redrives `TemporaryFailure`
 * up to `maxAttempts`, and writes the completion report in the documented format (S3 User Guide,
 * "Examples: S3 Batch Operations completion reports"): `manifest.json` (Format
 * `Report_CSV_20180820`, one Results entry per CSV with its MD5) and the CSV files under `results/`.
 *
 * @example
 * const job = await runLocalBatchOperationsJob({ s3, handler, manifest: { bucket: 'ops', key: 'm.csv' }, report: { bucket: 'ops', prefix: 'reports' } });
 */
export async function runLocalBatchOperationsJob(
  options: LocalBatchOperationsJobOptions,
): Promise<LocalBatchOperationsJobResult> {
  checkOptions(
    'runLocalBatchOperationsJob',
    options,
    LOCAL_BATCH_OPERATIONS_JOB_OPTION_NAMES,
    (m) => new LocalSetupError(m),
  );
  const jobId = options.jobId ?? randomUUID();
  const schema = options.invocationSchemaVersion ?? '1.0';
  if (options.userArguments && schema !== '2.0') {
    throw new LocalSetupError('userArguments need invocationSchemaVersion 2.0 (LambdaInvokeOperation.UserArguments)');
  }
  const maxAttempts = options.maxAttempts ?? 3;
  const timeoutMs = options.functionTimeoutMs ?? 60_000;
  const now = options.now ?? Date.now;
  const rows = await readManifestTasks(options.s3, options.manifest);

  let invocations = 0;
  const invoke = async (row: ManifestRow, index: number): Promise<LocalTaskOutcome> => {
    const taskId = Buffer.from(`${jobId}:${index}`).toString('base64');
    let last: { resultCode: BatchOperationsResultCode; resultString: string } | undefined;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const invocationId = Buffer.from(`${jobId}:${index}:${attempt}:${++invocations}`).toString('base64');
      const task =
        schema === '1.0'
          ? { taskId, s3Key: row.key, s3VersionId: row.versionId ?? null, s3BucketArn: `arn:aws:s3:::${row.bucket}` }
          : { taskId, s3Key: row.key, s3VersionId: row.versionId ?? null, s3Bucket: row.bucket };
      const event = {
        invocationSchemaVersion: schema,
        invocationId,
        job: { id: jobId, ...(schema === '2.0' ? { userArguments: options.userArguments ?? {} } : {}) },
        tasks: [task],
      };
      const start = now();
      const context = createLambdaContext({
        functionName: 'rerun-batch-operations',
        region: 'us-east-1',
        accountId: '000000000000',
        memoryLimitInMB: 1024,
        awsRequestId: randomUUID(),
        logStreamName: `local/[$LATEST]${jobId}`,
        deadline: start + timeoutMs,
        now,
      });
      try {
        const response = await options.handler(event, context);
        const result = response?.results?.find((r) => r.taskId === taskId);
        last = result
          ? { resultCode: result.resultCode, resultString: result.resultString ?? '' }
          : {
              resultCode: response?.treatMissingKeysAs ?? 'PermanentFailure',
              resultString: 'the function returned no result for the task',
            };
      } catch (error) {
        // A function error fails the task (the report's example: "Lambda returned function error").
        const message = error instanceof Error ? error.message : String(error);
        last = {
          resultCode: 'PermanentFailure',
          resultString: `Lambda returned function error: ${JSON.stringify({ errorMessage: message })}`,
        };
      }
      if (last.resultCode !== 'TemporaryFailure') {
        return { ...row, status: last.resultCode === 'Succeeded' ? 'succeeded' : 'failed', ...last, attempts: attempt };
      }
    }
    return { ...row, status: 'failed', ...(last as NonNullable<typeof last>), attempts: maxAttempts };
  };
  const tasks = await mapWithConcurrency(rows, options.concurrency ?? 4, invoke);
  const reportManifestKey = await writeCompletionReport(options.s3, options.report, jobId, tasks, now());
  const succeeded = tasks.filter((t) => t.status === 'succeeded').length;
  return {
    jobId,
    status: 'Complete',
    totalTasks: tasks.length,
    succeeded,
    failed: tasks.length - succeeded,
    tasks,
    reportManifestKey,
  };
}

/**
 * Writes the completion report: the succeeded and the failed tasks in one CSV each (only the
 * failed with `FailedTasksOnly`), named by their SHA-1, and the top-level manifest.json. Rows are
 * `Bucket, Key, VersionId, TaskStatus, ErrorCode, HTTPStatusCode, ResultMessage` as the
 * manifest's ReportSchema names them; the User Guide's example rows put the HTTP status (200) in
 * the fifth column and the result code in the sixth (`...,failed,200,PermanentFailure,"..."`), and
 * so does this writer, since readers of real reports expect what S3 writes.
 */
async function writeCompletionReport(
  s3: S3Client,
  report: LocalBatchOperationsJobOptions['report'],
  jobId: string,
  tasks: readonly LocalTaskOutcome[],
  at: number,
): Promise<string> {
  const base = `${report.prefix.replace(/\/+$/, '')}/job-${jobId}`;
  const results: { TaskExecutionStatus: string; Bucket: string; MD5Checksum: string; Key: string }[] = [];
  const groups = [
    {
      status: 'succeeded',
      rows: report.scope === 'FailedTasksOnly' ? [] : tasks.filter((t) => t.status === 'succeeded'),
    },
    { status: 'failed', rows: tasks.filter((t) => t.status === 'failed') },
  ];
  for (const group of groups) {
    if (group.rows.length === 0) continue;
    const csv = group.rows
      .map((t) =>
        [t.bucket, t.key, t.versionId ?? '', t.status, '200', t.status === 'failed' ? t.resultCode : '', t.resultString]
          .map(csvField)
          .join(','),
      )
      .join('\n')
      .concat('\n');
    const key = `${base}/results/${createHash('sha1').update(csv).digest('hex')}.csv`;
    await putOnce(s3, report.bucket, key, csv, 'text/csv');
    results.push({
      TaskExecutionStatus: group.status,
      Bucket: report.bucket,
      MD5Checksum: createHash('md5').update(csv).digest('hex'),
      Key: key,
    });
  }
  const manifest = {
    Format: 'Report_CSV_20180820',
    ReportCreationDate: new Date(at).toISOString(),
    Results: results,
    ReportSchema: 'Bucket, Key, VersionId, TaskStatus, ErrorCode, HTTPStatusCode, ResultMessage',
  };
  const manifestKey = `${base}/manifest.json`;
  await putOnce(s3, report.bucket, manifestKey, `${JSON.stringify(manifest, null, 2)}\n`, 'application/json');
  return manifestKey;
}

/** Create-only, like every write of rerun: a job's report is written once. */
async function putOnce(s3: S3Client, bucket: string, key: string, body: string, contentType: string): Promise<void> {
  try {
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType, IfNoneMatch: '*' }),
    );
  } catch (error) {
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 412) {
      throw new LocalSetupError(`s3://${bucket}/${key} exists: this job id has a completion report already`);
    }
    throw error;
  }
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}
