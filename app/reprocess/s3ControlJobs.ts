import { CreateJobCommand, DescribeJobCommand, S3ControlClient } from '@aws-sdk/client-s3-control';
import type { RerunCreateJobRequest } from './batchOperationsJob.js';

/** A job as DescribeJob tells it, in the fields the engine reads. */
export interface JobView {
  readonly id: string;
  /** `New`, `Preparing`, `Ready`, `Active`, ..., `Complete`, `Failed`, `Cancelled`. */
  readonly status: string;
  readonly total: number;
  readonly succeeded: number;
  readonly failed: number;
  /** Where the completion report goes (bucket by name), as the job was created. */
  readonly report?: { readonly bucket: string; readonly prefix: string };
  /** Why a job failed (FailureReasons) or was suspended. */
  readonly reasons: readonly string[];
}

/** The two S3 Control calls of the engine (a small interface: tests give their own). */
export interface S3ControlJobs {
  /** CreateJob; returns the job id (the existing job's for a token it has seen). */
  createJob(request: RerunCreateJobRequest): Promise<string>;
  describeJob(accountId: string, jobId: string): Promise<JobView>;
}

/**
 * The S3 Control adapter. This module is the only one importing `@aws-sdk/client-s3-control` (an
 * optional peer dependency): the CLI loads it only for a job against AWS.
 *
 * @example
 * const jobs = s3ControlJobs(new S3ControlClient({ region: 'eu-west-1' }));
 */
export function s3ControlJobs(client: Pick<S3ControlClient, 'send'>): S3ControlJobs {
  return {
    async createJob(request) {
      const { Manifest: _manifest, ManifestGenerator: _generator, ...rest } = request;
      const out = await client.send(
        new CreateJobCommand({
          ...rest,
          // The SDK's input types are mutable: copy the request's readonly arrays.
          ...(request.Manifest
            ? {
                Manifest: {
                  Location: { ...request.Manifest.Location },
                  Spec: {
                    Format: request.Manifest.Spec.Format,
                    ...(request.Manifest.Spec.Fields ? { Fields: [...request.Manifest.Spec.Fields] } : {}),
                  },
                },
              }
            : {}),
          ...(request.ManifestGenerator ? { ManifestGenerator: generatorInput(request.ManifestGenerator) } : {}),
        }),
      );
      if (!out.JobId) throw new Error('CreateJob answered without a JobId');
      return out.JobId;
    },
    async describeJob(accountId, jobId) {
      const out = await client.send(new DescribeJobCommand({ AccountId: accountId, JobId: jobId }));
      const job = out.Job ?? {};
      const p = job.ProgressSummary ?? {};
      return {
        id: job.JobId ?? jobId,
        status: job.Status ?? 'unknown',
        total: p.TotalNumberOfTasks ?? 0,
        succeeded: p.NumberOfTasksSucceeded ?? 0,
        failed: p.NumberOfTasksFailed ?? 0,
        ...(job.Report?.Bucket
          ? { report: { bucket: job.Report.Bucket.replace(/^arn:aws:s3:::/, ''), prefix: job.Report.Prefix ?? '' } }
          : {}),
        reasons: [
          ...(job.FailureReasons ?? []).map((f) => `${f.FailureCode ?? 'failure'}: ${f.FailureReason ?? ''}`),
          ...(job.SuspendedCause ? [`suspended: ${job.SuspendedCause}`] : []),
          ...(job.StatusUpdateReason ? [job.StatusUpdateReason] : []),
        ],
      };
    },
  };
}

/**
 * An S3 Control client for the region. S3 Control endpoints are per account
 * (`{account}.s3-control.{region}.amazonaws.com`), which the client builds from `AccountId`.
 *
 * @example
 * const jobs = s3ControlJobs(createS3ControlClient('us-east-1'));
 */
export function createS3ControlClient(region: string): S3ControlClient {
  return new S3ControlClient({ region });
}

function generatorInput(generator: NonNullable<RerunCreateJobRequest['ManifestGenerator']>) {
  const { Filter, ...rest } = generator.S3JobManifestGenerator;
  const { KeyNameConstraint, ...dates } = Filter;
  return {
    S3JobManifestGenerator: {
      ...rest,
      Filter: {
        ...dates,
        ...(KeyNameConstraint ? { KeyNameConstraint: { MatchAnyPrefix: [...KeyNameConstraint.MatchAnyPrefix] } } : {}),
      },
    },
  };
}
