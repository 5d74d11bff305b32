import { batchOperationsManifestKey, batchOperationsReportPrefix } from '../../src/batch/batchOperationsLayout.js';
import { type CliIo, CliUsageError } from '../common/command.js';
import type { PipelineTarget } from '../common/pipelineTarget.js';
import {
  existingManifest,
  followJob,
  type JobOutcome,
  type JobRunner,
  putManifest,
  type StoredManifest,
  type SubmittedJob,
  submitJob,
} from './batchOperationsEngine.js';
import {
  accountIdOfArn,
  ManifestBuilder,
  type ManifestGeneratorSpec,
  manifestFormatOf,
  ReprocessEngine,
} from './batchOperationsJob.js';
import { jobRunner } from './jobRunner.js';
import type { PlanningSetup } from './planningSetup.js';
import type { ReprocessArgs } from './reprocessArgs.js';
import type { ReprocessEvents } from './reprocessEvents.js';
import { reprocessExitCode } from './reprocessExitCode.js';
import { runReprocess } from './runReprocess.js';

/** Follows a job, each poll an event (a progress line: rewritten on a terminal, one per poll otherwise). */
async function follow(
  target: PipelineTarget,
  runner: JobRunner,
  jobId: string,
  report: { bucket: string; prefix: string },
  totalTasks: number | undefined,
  args: Pick<ReprocessArgs, 'timeoutSeconds' | 'pollIntervalMs'>,
  io: Pick<CliIo, 'signal'>,
  emit: ReprocessEvents,
): Promise<JobOutcome> {
  const { timeoutSeconds, pollIntervalMs } = args;
  const outcome = await followJob({
    s3: target.clients.s3,
    runner,
    jobId,
    ...(runner.kind === 'aws' ? { accountId: accountIdOfArn(runner.roleArn) } : {}),
    report,
    ...(totalTasks !== undefined ? { totalTasks } : {}),
    ...(pollIntervalMs !== undefined ? { pollIntervalMs } : {}),
    ...(timeoutSeconds !== undefined ? { timeoutMs: timeoutSeconds * 1000 } : {}),
    signal: io.signal,
    onProgress: (view, elapsedMs) => emit({ kind: 'job', view, elapsedMs }),
  });
  emit({ kind: 'phaseEnd' });
  return outcome;
}

function parseS3Url(url: string, option: string): { bucket: string; key: string } {
  const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(url);
  if (!match) throw new CliUsageError(`--${option} must be an s3://bucket/key URL (got "${url}").`);
  return { bucket: match[1] as string, key: match[2] as string };
}

/** `--job`, `--manifest` or `--generate-manifest`: a job over tasks nobody plans here. */
export async function runUnplannedJob(
  target: PipelineTarget,
  io: Pick<CliIo, 'signal'>,
  args: ReprocessArgs,
  emit: ReprocessEvents,
): Promise<number> {
  const { prefix, attachTo, jobManifestUrl, generator } = args;
  // No planning: a job that exists, or one over a manifest the operator already has.
  const runner = await jobRunner(target, args, (text) => emit({ kind: 'note', text }), args.stage);
  const report = { bucket: target.outputBucket, prefix: batchOperationsReportPrefix() };
  let job: SubmittedJob | undefined;
  if (!attachTo) {
    let manifest: StoredManifest | ManifestGeneratorSpec;
    if (generator) manifest = generator;
    else {
      const { bucket, key } = parseS3Url(jobManifestUrl as string, 'manifest');
      manifest = await existingManifest(target.clients.s3, bucket, key, manifestFormatOf(key));
    }
    job = await submitJob({
      s3: target.clients.s3,
      runner,
      manifest,
      report,
      description: (generator
        ? `rerun reprocess --generate-manifest --prefix ${prefix}`
        : `rerun reprocess --manifest ${jobManifestUrl}`
      ).slice(0, 256),
    });
    emit({ kind: 'jobSubmitted', job, runner: runner.kind });
  }
  const jobId = attachTo ?? (job as SubmittedJob).jobId;
  const waited = args.wait;
  const outcome =
    waited || runner.kind === 'local'
      ? await follow(target, runner, jobId, report, job?.totalTasks, args, io, emit)
      : undefined;
  emit({ kind: 'jobEnd', jobId, outcome, runner: runner.kind, waited });
  const code = reprocessExitCode(false, outcome && waited ? outcome.ended : undefined);
  emit({
    kind: 'end',
    code,
    parts: {
      engine: ReprocessEngine.BATCH_OPERATIONS,
      runner: runner.kind,
      job: { id: jobId, submitted: job, outcome, outputBucket: target.outputBucket },
      ...(outcome && waited ? { jobWait: outcome } : {}),
    },
  });
  return code;
}

/** The batch-operations engine: the plan as a manifest, one job over it, its report read back. */
export async function runPlannedJob(
  target: PipelineTarget,
  io: Pick<CliIo, 'signal'>,
  args: ReprocessArgs,
  setup: PlanningSetup,
  emit: ReprocessEvents,
): Promise<number> {
  const { prefix, mode, dryRun } = args;
  const { common, explain, cutoff } = setup;
  const engine = ReprocessEngine.BATCH_OPERATIONS;
  const note = (text: string) => emit({ kind: 'note', text });
  // A dry run writes no manifest and creates no job: it needs no function or role.
  const runner = dryRun ? undefined : await jobRunner(target, args, note, args.stage);
  if (!runner) note('engine: batch-operations (dry run: no manifest, no job)\n');
  const builder = new ManifestBuilder();
  const result = await runReprocess({
    ...common,
    sink: async (input) => builder.add(target.inputBucket, input.key),
    onProgress: (progress) => emit({ kind: 'progress', phase: 'planning', progress }),
  }).catch(explain);
  const report = { bucket: target.outputBucket, prefix: batchOperationsReportPrefix() };
  const waited = args.wait;
  let job: SubmittedJob | undefined;
  let outcome: JobOutcome | undefined;
  if (runner && !result.interrupted && result.planned > 0) {
    const manifest = await putManifest(
      target.clients.s3,
      target.outputBucket,
      batchOperationsManifestKey(builder.digest()),
      builder.text(),
    );
    note(`Manifest: s3://${manifest.bucket}/${manifest.key} (${builder.rows} input(s)).\n`);
    job = await submitJob({
      s3: target.clients.s3,
      runner,
      manifest,
      report,
      description: `rerun reprocess ${prefix} mode ${mode}`,
    });
    emit({ kind: 'jobSubmitted', job, runner: runner.kind });
    if (waited || runner.kind === 'local') {
      outcome = await follow(target, runner, job.jobId, report, job.totalTasks, args, io, emit);
    }
  }
  emit({ kind: 'plan', result, inputBucket: target.inputBucket, sent: 'put in the manifest' });
  if (job && runner) emit({ kind: 'jobEnd', jobId: job.jobId, outcome, runner: runner.kind, waited });
  const code = reprocessExitCode(result.interrupted, outcome && waited ? outcome.ended : undefined);
  emit({
    kind: 'end',
    code,
    parts: {
      plan: { result, prefix, mode, dryRun, cutoff },
      engine,
      ...(runner ? { runner: runner.kind } : {}),
      ...(job ? { job: { id: job.jobId, submitted: job, outcome, outputBucket: target.outputBucket } } : {}),
      ...(outcome && waited ? { jobWait: outcome } : {}),
    },
  });
  return code;
}
