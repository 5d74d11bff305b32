import type { Readable } from 'node:stream';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { batchOperationsManifestKey, batchOperationsReportPrefix } from '../../../src/batch/batchOperationsLayout.js';
import { createBatchOperationsHandler } from '../../../src/batch/createBatchOperationsHandler.js';
import { RerunError } from '../../../src/errors.js';
import { S3FailureRecorder } from '../../../src/failures/S3FailureRecorder.js';
import { boundedText } from '../../../src/intake/manifestLines.js';
import { createNormalizeWorker } from '../../../src/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../../../src/s3/S3ObjectStore.js';
import {
  existingManifest,
  followJob,
  type JobOutcome,
  type JobRunner,
  putManifest,
  type StoredManifest,
  type SubmittedJob,
  submitJob,
} from '../../reprocess/batchOperationsEngine.js';
import {
  AUTO_BATCH_OPERATIONS_THRESHOLD,
  accountIdOfArn,
  autoEngine,
  ManifestBuilder,
  type ManifestGeneratorSpec,
  manifestFormatOf,
  ReprocessEngine,
} from '../../reprocess/batchOperationsJob.js';
import { type CodeVersionCutoff, readCodeVersionCutoff } from '../../reprocess/codeVersionCutoff.js';
import { InventoryManifestError, inventoryListing, parseInventoryManifest } from '../../reprocess/inventoryListing.js';
import { deterministicKeyMapping, type OutputKeyMapping } from '../../reprocess/outputKeyMapping.js';
import {
  type ListedObject,
  parseReprocessMode,
  ReprocessMode,
  type ReprocessVerdict,
} from '../../reprocess/planReprocess.js';
import { type ReprocessProgress, type ReprocessResult, ReprocessWaitEnd } from '../../reprocess/reprocessResult.js';
import { runReprocess } from '../../reprocess/runReprocess.js';
import type { RunReprocessOptions } from '../../reprocess/runReprocessOptions.js';
import { S3ListingReader } from '../../reprocess/S3ListingReader.js';
import { type PublishedRun, type RunProgress, withPublishedRun } from '../../runs/runProgressFile.js';
import { type CliCommand, type CliIo, CliUsageError, integerOption, type OptionValues } from '../../shared/command.js';
import { explainAwsError, requireBucket } from '../../shared/pipelineResources.js';
import { type PlanningStage, planningWorker, resolvePlanningStage, stageOptions } from '../../shared/pipelineStage.js';
import {
  type PipelineTarget,
  reportCommandError,
  requireOutputBucket,
  stringOption,
  targetOptions,
  targetOrExit,
  workerQueueUrl,
} from '../../shared/pipelineTarget.js';
import { isProgressStep, renderProgressBar } from '../../shared/progressBar.js';
import { liveLine } from '../liveLine.js';

/** `rerun reprocess`: rerun the main stage over a prefix of the input bucket. */
export const command: CliCommand = {
  name: 'reprocess',
  summary: 'Rerun the main stage over a prefix: enqueue what is missing or stale',
  usage: 'rerun reprocess [--prefix P] [--mode MODE] [--engine E] [options]',
  options: {
    prefix: {
      type: 'string',
      valueName: 'P',
      description: 'Input key prefix (default: incoming/)',
    },
    mode: {
      type: 'string',
      valueName: 'MODE',
      description: 'missing | stale (default: also outdated) | all',
    },
    verify: {
      type: 'boolean',
      description: 'HEAD each current-looking output: corrupt, old code',
    },
    prune: { type: 'boolean', description: 'Remove outputs of gone inputs (If-Match deletes)' },
    'dry-run': { type: 'boolean', description: 'Print the plan, send and delete nothing' },
    rate: { type: 'string', valueName: 'N', description: 'At most N messages (and deletes) per second' },
    wait: { type: 'boolean', description: 'Follow the planned inputs to their outcomes' },
    timeout: { type: 'string', valueName: 'SECONDS', description: 'With --wait, give up after this long' },
    // Hidden (no description): tuning for tests and slow links.
    'poll-interval': { type: 'string', valueName: 'MS' },
    'verify-concurrency': { type: 'string', valueName: 'N' },
    shards: {
      type: 'string',
      valueName: 'N',
      description: 'List N key ranges at once while planning (default: 1)',
    },
    'code-overlap': {
      type: 'string',
      valueName: 'SECONDS',
      description: 'Code rollout window (default: fn timeout + 60)',
    },
    engine: {
      type: 'string',
      valueName: 'E',
      description: 'sqs (default) | batch-operations | auto',
    },
    job: {
      type: 'string',
      valueName: 'ID',
      description: 'Attach to the Batch Operations job ID',
    },
    'role-arn': {
      type: 'string',
      valueName: 'ARN',
      description: "A job's role (default: a --stack output)",
    },
    'function-arn': {
      type: 'string',
      valueName: 'ARN',
      description: 'Function a job invokes (default: a --stack output)',
    },
    manifest: {
      type: 'string',
      valueName: 'S3URL',
      description: 'Inputs from an S3 Inventory manifest.json (CSV)',
    },
    'generate-manifest': {
      type: 'boolean',
      description: 'Let the job list the prefix itself (no planning)',
    },
    'created-after': {
      type: 'string',
      valueName: 'TIME',
      description: 'With --generate-manifest: objects created after',
    },
    'created-before': {
      type: 'string',
      valueName: 'TIME',
      description: 'With --generate-manifest: objects created before',
    },
    'output-manifest': {
      type: 'string',
      valueName: 'S3URL',
      description: "Outputs from the output bucket's inventory",
    },
    'queue-url': {
      type: 'string',
      valueName: 'URL',
      description: 'Work queue (default: $RERUN_QUEUE_URL or by name)',
    },
    'dlq-url': {
      type: 'string',
      valueName: 'URL',
      description: 'DLQ watched by --wait (default: $RERUN_DLQ_URL)',
    },
    ...targetOptions,
    ...stageOptions,
  },
  details: `Planning lists the inputs under the prefix and their outputs together, page
by page (a merge-join: memory does not grow with the object count), and
judges each input from the listings: missing (no output) or current, and each
output whose input is gone (orphan). An output older than its input is only a
candidate: one HEAD reads the input ETag it was built from, and it is stale
only when that is not the input's ETag (identical bytes uploaded again, as by
s5cmd sync or a copy onto itself, leave it current, as the worker finds).
--verify adds the worker's exact done-check for each output that looks current
(one HEAD: stored checksum, code version, the input ETag it was built from).
After a codeVersion bump the deployed worker's marker makes older outputs
old-code from the listing alone.

Each selected input becomes one S3-event-shaped message on the work queue (10
per batch); the worker's done-check absorbs repeats. An interrupted reprocess,
run again, plans only what is still to do; once it completed, the same
reprocess plans nothing (except --mode all).

--engine batch-operations runs the plan as one S3 Batch Operations job instead:
rerun writes the planned inputs as a CSV manifest to the output bucket
(batch-operations/manifests/<sha256>.csv), then calls CreateJob (LambdaInvoke
on the stack's Batch Operations function, schema 2.0, a report of failed tasks
only under batch-operations/reports/). The request token is a hash of the
request, so the same plan twice is one job. With --manifest S3URL the job runs
over that manifest as it is (an S3 Inventory manifest.json, or a bucket,key
CSV): nothing is planned. With --generate-manifest the job's own manifest
generator lists the input bucket under --prefix (--created-after and
--created-before filter by creation time, ISO 8601): nothing is listed on
this machine, and every matching input is a task (the worker's done-check
skips what is current). --wait follows the job (DescribeJob) and prints the
SQS engine's summary, read from the completion report; --job ID attaches to a
job. --engine auto plans first, then uses batch-operations from 1,000,000
planned inputs, sqs below. Against an emulator (AWS_ENDPOINT_URL, as under
rerun dev) a local stand-in runs the job in this process: no emulator has S3
Control. The job's function and role come from --function-arn and --role-arn,
or the outputs of --stack.

The stage's input prefix and output key rule come from the pipeline's
description: the PipelineDescription output of --stack (RerunPipeline with a
pipeline or outputKey prop and outputs: true), or --pipeline FILE; --stage
chooses among several. Without --stack, the reference pipeline. A stack that
publishes no description (and is not rerun's own), or a custom key rule, is
refused: the tool never plans with a key rule it does not know.

Exit: 0 done (or planned, without --wait); 1 when --wait ends with inputs not
done (see rerun redrive) or times out; 130 when interrupted.

Examples:
  rerun reprocess --prefix incoming/dt=2026-11- --dry-run
  rerun reprocess --mode stale --verify --rate 50 --wait
  rerun reprocess --prune --dry-run
  rerun reprocess --stack rerun --engine batch-operations --wait
  rerun reprocess --engine batch-operations --job 0b7c... --wait`,
  async run({ values }, io) {
    const target = await targetOrExit(values, io, 'reprocess');
    if (typeof target === 'number') return target;
    let stage: PlanningStage;
    try {
      stage = await resolvePlanningStage(target, values);
    } catch (error) {
      return reportCommandError(error, io, 'reprocess', values.json === true);
    }
    const args = reprocessArgs(values, target, io, stage);
    try {
      await requireInputBucket(target);
      await requireOutputBucket(target);
      const label = `reprocess ${args.prefix} (mode ${args.mode}${args.dryRun ? ', dry run' : ''})`;
      return await withPublishedRun({ command: 'reprocess', label, target }, async (run) => {
        const runArgs = { ...args, run };
        if (args.attachTo || args.jobManifestUrl || args.generator)
          return await runUnplannedJob(target, values, io, runArgs);
        const setup = await planningSetup(target, values, io, args);
        const engine = await chooseEngine(values, args, setup);
        if (engine === ReprocessEngine.BATCH_OPERATIONS) return await runPlannedJob(target, values, io, runArgs, setup);
        return await runSqsEngine(target, values, io, runArgs, setup, engine);
      });
    } catch (error) {
      return reportCommandError(error, io, 'reprocess', args.json);
    }
  },
};

/**
 * `--manifest` / `--output-manifest`: the inputs (and outputs) from S3 Inventory reports instead
 * of ListObjectsV2. Each manifest must describe the bucket it stands for.
 */
async function inventoryListings(
  target: PipelineTarget,
  values: Record<string, unknown>,
  prefix: string,
  mapping: OutputKeyMapping,
  human: (text: string) => void,
): Promise<{ inputs?: () => AsyncIterable<ListedObject>; outputs?: () => AsyncIterable<ListedObject> } | undefined> {
  const s3 = target.clients.s3;
  const open = async (option: string, bucket: string, keyPrefix: string) => {
    const url = stringOption(values as Parameters<typeof stringOption>[0], option);
    if (!url) return undefined;
    const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(url);
    if (!match)
      throw new CliUsageError(`--${option} must be an s3://bucket/key URL of a manifest.json (got "${url}").`);
    const [, manifestBucket, manifestKey] = match as unknown as [string, string, string];
    const out = await s3.send(new GetObjectCommand({ Bucket: manifestBucket, Key: manifestKey }));
    // Bounded: a manifest.json lists data files; an object of any size at that URL is not held whole.
    const manifest = parseInventoryManifest(await boundedText(out.Body as AsyncIterable<Uint8Array>, { file: url }));
    if (manifest.sourceBucket !== bucket) {
      throw new InventoryManifestError(
        `--${option} ${url} is an inventory of ${manifest.sourceBucket}, not of ${bucket}: pass that bucket's inventory.`,
      );
    }
    human(
      `${option}: inventory of ${bucket} from ${new Date(manifest.creationTimestamp).toISOString()} ` +
        `(${manifest.files.length} data file(s)); objects changed since are not in it.\n`,
    );
    return () =>
      inventoryListing({
        manifest,
        prefix: keyPrefix,
        read: async (b, k) => (await s3.send(new GetObjectCommand({ Bucket: b, Key: k }))).Body as Readable,
      });
  };
  const inputs = await open('manifest', target.inputBucket, prefix);
  const outputs = await open(
    'output-manifest',
    target.outputBucket,
    `${mapping.outputRoot}${prefix.slice(mapping.inputPrefix.length)}`,
  );
  if (!inputs && !outputs) return undefined;
  return { ...(inputs ? { inputs } : {}), ...(outputs ? { outputs } : {}) };
}

/**
 * The stack outputs naming the Batch Operations function and job role (RerunPipeline with
 * `batchOperations: true` and `outputs: true` writes them).
 */
export const BATCH_OUTPUTS = {
  FUNCTION_ARN: 'BatchOperationsFunctionArn',
  ROLE_ARN: 'BatchOperationsRoleArn',
} as const;

/**
 * Where the job runs, said on stderr. Against an emulator endpoint (AWS_ENDPOINT_URL: `rerun dev`
 * and the local stack tell commands where they run by it), the local stand-in runs it, since neither
 * moto nor MiniStack implements S3 Control jobs (docs/EMULATORS.md); against AWS, CreateJob.
 */
async function jobRunner(
  target: PipelineTarget,
  values: Record<string, unknown>,
  human: (text: string) => void,
  stage: PlanningStage,
): Promise<JobRunner> {
  const option = (name: string) => stringOption(values as Parameters<typeof stringOption>[0], name);
  if (target.endpoint) {
    if (!stage.reference) {
      // The stand-in runs rerun's normalizer in this process: it is not this stage's worker.
      throw new CliUsageError(
        `--engine batch-operations against an emulator runs rerun's reference normalizer in this process, and stage ` +
          `"${stage.name}" runs another worker: use --engine sqs (the default) here.`,
      );
    }
    human(
      `engine: batch-operations (local stand-in: AWS_ENDPOINT_URL=${target.endpoint} is an emulator, ` +
        'which has no S3 Control jobs; the job runs in this process, same manifest and report)\n',
    );
    const store = new S3ObjectStore(target.clients.s3);
    return {
      kind: 'local',
      handler: createBatchOperationsHandler({
        worker: createNormalizeWorker({ outputBucket: target.outputBucket, prefixes: target.topology }),
        store,
        failureRecorder: new S3FailureRecorder({ store, sqs: target.clients.sqs, bucket: target.outputBucket }),
      }),
    };
  }
  const outputs = target.stack?.outputs ?? {};
  const functionArn = option('function-arn') ?? outputs[BATCH_OUTPUTS.FUNCTION_ARN];
  const roleArn = option('role-arn') ?? outputs[BATCH_OUTPUTS.ROLE_ARN];
  if (!functionArn || !roleArn) {
    throw new CliUsageError(
      `--engine batch-operations needs ${functionArn ? '' : 'the function the job invokes (--function-arn)'}` +
        `${!functionArn && !roleArn ? ' and ' : ''}${roleArn ? '' : "the job's role (--role-arn)"}, or --stack NAME ` +
        `of a stack with the outputs ${BATCH_OUTPUTS.FUNCTION_ARN} and ${BATCH_OUTPUTS.ROLE_ARN} ` +
        '(RerunPipeline with batchOperations: true and outputs: true).',
    );
  }
  accountIdOfArn(roleArn);
  let adapter: typeof import('../../reprocess/s3ControlJobs.js');
  try {
    adapter = await import('../../reprocess/s3ControlJobs.js');
  } catch (error) {
    throw new CliUsageError(
      '--engine batch-operations against AWS needs @aws-sdk/client-s3-control (an optional peer dependency): ' +
        `npm install @aws-sdk/client-s3-control (${error instanceof Error ? error.message : String(error)}).`,
    );
  }
  human(`engine: batch-operations (S3 Batch Operations in ${target.region}, role ${roleArn})\n`);
  return {
    kind: 'aws',
    jobs: adapter.s3ControlJobs(adapter.createS3ControlClient(target.region)),
    functionArn,
    roleArn,
  };
}

/** Follows a job with a progress line (rewritten on a terminal, one per poll otherwise). */
async function follow(
  target: PipelineTarget,
  runner: JobRunner,
  jobId: string,
  report: { bucket: string; prefix: string },
  totalTasks: number | undefined,
  values: Record<string, unknown>,
  io: Parameters<CliCommand['run']>[1],
  human: (text: string) => void,
  run: PublishedRun,
): Promise<JobOutcome> {
  const v = values as Parameters<typeof integerOption>[0];
  const timeoutSeconds = integerOption(v, 'timeout', { min: 1, max: 7 * 86_400 });
  const pollIntervalMs = integerOption(v, 'poll-interval', { min: 50, max: 600_000 });
  let lineOpen = false;
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
    onProgress: (view, elapsedMs) => {
      const done = view.succeeded + view.failed;
      run.progress({
        phase: `job ${view.status}`,
        done,
        total: view.total,
        unit: 'tasks',
        figures: { failed: view.failed },
      });
      const line =
        `job ${view.status.padEnd(10)} ${renderProgressBar(done, view.total, 20)} ` +
        `| failed ${view.failed} | ${Math.round(elapsedMs / 1000)} s`;
      if (io.isTTY) {
        human(liveLine(line, io.stderrColumns));
        lineOpen = true;
      } else human(`${line}\n`);
    },
  });
  if (lineOpen) human('\n');
  return outcome;
}

function parseS3Url(url: string, option: string): { bucket: string; key: string } {
  const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(url);
  if (!match) throw new CliUsageError(`--${option} must be an s3://bucket/key URL (got "${url}").`);
  return { bucket: match[1] as string, key: match[2] as string };
}

function jobLine(job: SubmittedJob, runner: JobRunner): string {
  if (runner.kind === 'aws') {
    return `Job ${job.jobId} (CreateJob, token ${job.request.ClientRequestToken.slice(0, 12)}...; the same plan is the same job).`;
  }
  return job.ranBefore
    ? `Job ${job.jobId} (local stand-in) ran before for this very plan: its report is read, nothing runs again.`
    : `Job ${job.jobId} (local stand-in) ran ${job.totalTasks ?? 0} task(s).`;
}

function jobSummary(
  jobId: string,
  job: SubmittedJob | undefined,
  outcome: JobOutcome | undefined,
  target: PipelineTarget,
) {
  return {
    id: jobId,
    ...(job
      ? {
          token: job.request.ClientRequestToken,
          manifest: manifestOfJob(job.request),
          ...(job.ranBefore ? { ranBefore: true } : {}),
        }
      : {}),
    ...(outcome
      ? {
          status: outcome.status,
          tasks: outcome.total,
          succeeded: outcome.succeeded,
          failed: outcome.failed,
          ...(outcome.reportKey ? { report: `s3://${target.outputBucket}/${outcome.reportKey}` } : {}),
          failures: outcome.failures.map((f) => ({ key: f.key, resultCode: f.resultCode, reason: f.resultString })),
          ...(outcome.reasons.length > 0 ? { reasons: outcome.reasons } : {}),
        }
      : {}),
  };
}

/** The SQS engine's wait fields, from a job: done = succeeded tasks, remaining = the rest. */
function waitSummary(outcome: JobOutcome) {
  return {
    waited: outcome.ended,
    done: outcome.succeeded,
    remaining: Math.max(0, outcome.total - outcome.succeeded),
    gone: 0,
    deadLettered: 0,
    seconds: Math.round(outcome.elapsedMs / 1000),
  };
}

function planSummary(
  result: ReprocessResult,
  prefix: string,
  mode: string,
  dryRun: boolean,
  cutoff: CodeVersionCutoff,
) {
  return {
    prefix,
    mode,
    verify: result.verify,
    dryRun,
    planned: result.planned,
    enqueued: result.enqueued,
    pruned: result.pruned,
    alreadyGone: result.alreadyGone,
    kept: result.kept,
    sideOrphans: result.sideOrphans,
    interrupted: result.interrupted,
    counts: result.counts,
    requests: result.requests,
    // Outputs older than their input by the listings, each judged by one HEAD of its recorded source.
    sourceChecks: result.plan.sourceChecks,
    codeVersion:
      cutoff.state === 'known'
        ? { version: cutoff.codeVersion, firstRan: new Date(cutoff.since).toISOString() }
        : { version: cutoff.codeVersion, unknown: cutoff.reason },
  };
}

function describeJob(jobId: string, outcome: JobOutcome | undefined, runner: JobRunner, waited: boolean): string {
  if (!outcome) {
    return `Job ${jobId} created. Follow it: rerun reprocess --engine batch-operations --job ${jobId} --wait\n`;
  }
  const s = Math.round(outcome.elapsedMs / 1000);
  const lines: string[] = [];
  if (outcome.ended === ReprocessWaitEnd.COMPLETE) {
    lines.push(
      `All ${outcome.succeeded} task(s) of job ${jobId} succeeded${runner.kind === 'aws' ? ` in ${s} s` : ''}.`,
    );
  } else if (outcome.ended === ReprocessWaitEnd.INCOMPLETE) {
    lines.push(
      `Job ${jobId} ended ${outcome.status}: ${outcome.succeeded} succeeded, ${outcome.failed} failed ` +
        '(its completion report lists them; a permanent failure also has a record under failures/s3-batch-job-<id>/).',
    );
    for (const f of outcome.failures.slice(0, 10))
      lines.push(`  ${f.resultCode.padEnd(16)} ${f.key}: ${f.resultString}`);
    if (outcome.failed > 10) lines.push('  ... (--json lists the first 20)');
    for (const r of outcome.reasons) lines.push(`  job: ${r}`);
  } else if (outcome.ended === ReprocessWaitEnd.TIMEOUT) {
    lines.push(`Timed out with job ${jobId} ${outcome.status}; it keeps running (attach again with --job ${jobId}).`);
  } else lines.push(`Stopped following job ${jobId} (${outcome.status}); it keeps running.`);
  if (!waited && runner.kind === 'local') lines.push('(the local stand-in runs a job to its end at once.)');
  return `${lines.join('\n')}\n`;
}

function exitCode(interrupted: boolean, ended: ReprocessWaitEnd | undefined): number {
  if (interrupted || ended === ReprocessWaitEnd.INTERRUPTED) return 130;
  return ended === ReprocessWaitEnd.INCOMPLETE || ended === ReprocessWaitEnd.TIMEOUT ? 1 : 0;
}

async function requireInputBucket(target: PipelineTarget): Promise<void> {
  await requireBucket(target.clients.s3, {
    role: 'input bucket',
    name: target.inputBucket,
    where: target.where,
    hint:
      'Pass --input-bucket or set RERUN_INPUT_BUCKET (the stack output InputBucketName; see docs/DEPLOY.md), ' +
      `or start the local stack with rerun dev --app-name ${target.appName}.`,
  });
}

function brief(v: ReprocessVerdict) {
  return { state: v.state, inputKey: v.inputKey, outputKey: v.outputKey, reason: v.reason };
}

function describeResult(result: ReprocessResult, target: PipelineTarget, sent = 'enqueue'): string {
  const c = result.counts;
  const lines = [
    `Prefix ${result.prefix} of ${target.inputBucket}: ${result.plan.inputs} input(s), ${result.plan.outputs} output(s).`,
    `  requests: ${result.requests.list} listing pages, ${result.requests.lookup} key lookups` +
      `${result.verify || result.requests.head > 0 ? `, ${result.requests.head} HEADs` : ''}` +
      `${result.plan.sourceChecks > 0 ? ` (${result.plan.sourceChecks} of outputs older than their input: their recorded source decides)` : ''}`,
    `  current ${c.current}, missing ${c.missing}, stale ${c.stale}` +
      `${result.verify ? `, invalid ${c.invalid}, old-code ${c['old-code']}` : ''}, orphan ${c.orphan}, skipped ${c.skipped}.`,
  ];
  const shown = result.sample.slice(0, 10);
  for (const v of shown) lines.push(`  ${v.state.padEnd(8)} ${v.inputKey ?? v.outputKey}: ${v.reason}`);
  if (result.planned + c.orphan > shown.length) lines.push('  ... (--json lists the first 20)');
  const planned = `Mode ${result.mode}: ${result.planned} input(s) to ${sent}`;
  if (result.dryRun) {
    lines.push(`${planned} (dry run: nothing is sent${c.orphan > 0 ? ', nothing is pruned' : ''}).`);
    return `${lines.join('\n')}\n`;
  }
  if (result.interrupted) {
    lines.push(`Interrupted after enqueueing ${result.enqueued}: run the same reprocess again to resume.`);
    return `${lines.join('\n')}\n`;
  }
  if (result.planned === 0) lines.push('Nothing to do: every input under the prefix is up to date for this mode.');
  else if (sent === 'enqueue') lines.push(`${planned}: enqueued ${result.enqueued}.`);
  else lines.push(`${planned}: ${result.enqueued} in it.`);
  if (result.sideOrphans > 0) lines.push(`  ${result.sideOrphans} side object(s) of gone inputs had no main output.`);
  if (result.pruned > 0) lines.push(`Pruned ${result.pruned} orphan output(s) (conditional deletes).`);
  if (result.alreadyGone > 0)
    lines.push(
      `${result.alreadyGone} orphan(s) were already gone when pruned (their input's delete event removed them).`,
    );
  if (!result.prune && c.orphan > 0) lines.push(`${c.orphan} orphan output(s) kept: remove them with --prune.`);
  if (result.kept.count > 0) {
    lines.push(`Kept ${result.kept.count} orphan(s) --prune does not remove, each for its reason:`);
    for (const k of result.kept.first.slice(0, 10)) lines.push(`  ${k.inputKey}: ${k.reason}`);
    if (result.kept.count > 10) lines.push('  ... (--json lists the first 20)');
  }
  const w = result.wait;
  if (w) {
    const s = Math.round(w.elapsedMs / 1000);
    if (w.ended === ReprocessWaitEnd.COMPLETE) lines.push(`All ${w.done} planned input(s) done in ${s} s.`);
    else if (w.ended === ReprocessWaitEnd.INCOMPLETE) {
      lines.push(
        `The queue is drained but ${w.remaining} planned input(s) are not done` +
          (w.deadLettered > 0
            ? `: ${w.deadLettered} message(s) reached the DLQ (rerun redrive --dry-run shows why).`
            : ': their inputs changed again, or the worker failed; run the same reprocess again.'),
      );
    } else if (w.ended === ReprocessWaitEnd.TIMEOUT) {
      lines.push(`Timed out with ${w.done}/${result.planned} done; the messages keep being processed.`);
    } else lines.push(`Stopped waiting (${w.done}/${result.planned} done); the messages keep being processed.`);
    if (w.gone > 0) lines.push(`${w.gone} planned input(s) were deleted meanwhile.`);
  }
  return `${lines.join('\n')}\n`;
}

/** Where a job's tasks come from, as the summary names it. */
function manifestOfJob(request: SubmittedJob['request']): string {
  if (request.Manifest) return request.Manifest.Location.ObjectArn.replace(/^arn:aws:s3:::/, 's3://');
  const generator = request.ManifestGenerator?.S3JobManifestGenerator;
  const prefix = generator?.Filter.KeyNameConstraint?.MatchAnyPrefix[0] ?? '';
  return `generated from ${generator?.SourceBucket.replace(/^arn:aws:s3:::/, 's3://')}/${prefix}`;
}

/**
 * `--generate-manifest` (with `--created-after` / `--created-before`): the manifest generator's
 * filters over the input bucket, or undefined without the flag.
 */
function manifestGeneratorOption(
  values: OptionValues,
  engine: ReprocessEngine,
  inputBucket: string,
  prefix: string,
): ManifestGeneratorSpec | undefined {
  const time = (name: string): Date | undefined => {
    const text = stringOption(values, name);
    if (text === undefined) return undefined;
    const ms = Date.parse(text);
    if (Number.isNaN(ms)) throw new CliUsageError(`--${name} must be an ISO 8601 time (got "${text}").`);
    return new Date(ms);
  };
  const createdAfter = time('created-after');
  const createdBefore = time('created-before');
  if (values['generate-manifest'] !== true) {
    if (createdAfter || createdBefore) {
      throw new CliUsageError('--created-after and --created-before filter --generate-manifest: pass it too.');
    }
    return undefined;
  }
  if (engine !== ReprocessEngine.BATCH_OPERATIONS) {
    throw new CliUsageError("--generate-manifest is a Batch Operations job's: it goes with --engine batch-operations.");
  }
  if (values.manifest !== undefined || values.job !== undefined) {
    throw new CliUsageError("--generate-manifest, --manifest and --job each name the job's tasks: pass one.");
  }
  return { generator: { sourceBucket: inputBucket, prefix, createdAfter, createdBefore } };
}

/** The options of `rerun reprocess`, parsed and checked (a usage error is thrown before anything runs). */
function reprocessArgs(values: OptionValues, target: PipelineTarget, io: CliIo, stage: PlanningStage) {
  const topology = target.topology;
  const prefix = stringOption(values, 'prefix') ?? stage.inputPrefix;
  if (!prefix.startsWith(stage.inputPrefix)) {
    throw new CliUsageError(
      `--prefix must start with the input prefix ${stage.inputPrefix} of stage "${stage.name}" (got "${prefix}"): only keys there are processed.`,
    );
  }
  if (values.verify === true && !stage.codeVersion) {
    throw new CliUsageError(
      `--verify judges each output's code version, and stage "${stage.name}" of ${stage.from} declares none: add ` +
        "codeVersion (the worker's) to the stage in the pipeline and publish it again.",
    );
  }
  const modeText = stringOption(values, 'mode') ?? ReprocessMode.STALE;
  const mode = parseReprocessMode(modeText);
  if (!mode) throw new CliUsageError(`--mode must be missing, stale or all (got "${modeText}").`);
  const rate = integerOption(values, 'rate', { min: 1, max: 3000 });
  const timeoutSeconds = integerOption(values, 'timeout', { min: 1, max: 7 * 86_400 });
  const pollIntervalMs = integerOption(values, 'poll-interval', { min: 50, max: 600_000 });
  const verifyConcurrency = integerOption(values, 'verify-concurrency', { min: 1, max: 256 });
  const listShards = integerOption(values, 'shards', { min: 1, max: 64 });
  const overlapSeconds =
    integerOption(values, 'code-overlap', { min: 0, max: 86_400 }) ?? topology.normalize.functionTimeoutSeconds + 60;
  const json = values.json === true;
  const dryRun = values['dry-run'] === true;
  // Progress and notes go to stderr; the result (the plan's table, what was done, the job's end) to
  // stdout before its SUMMARY line, so `rerun reprocess ... | less` shows it. `--json` prints neither.
  const human = (text: string) => {
    if (!json) io.stderr(text);
  };
  const result = (text: string) => {
    if (!json) io.stdout(text.replace(/\n$/, ''));
  };

  const engineText = stringOption(values, 'engine') ?? ReprocessEngine.SQS;
  const requested = Object.values(ReprocessEngine).find((e) => e === engineText);
  if (!requested) {
    throw new CliUsageError(`--engine must be sqs, batch-operations or auto (got "${engineText}").`);
  }
  const attachTo = stringOption(values, 'job');
  if (attachTo && stringOption(values, 'engine') && requested !== ReprocessEngine.BATCH_OPERATIONS) {
    throw new CliUsageError('--job attaches to a Batch Operations job: it goes with --engine batch-operations only.');
  }
  const jobManifestUrl = requested === ReprocessEngine.BATCH_OPERATIONS ? stringOption(values, 'manifest') : undefined;
  const generator = manifestGeneratorOption(values, requested, target.inputBucket, prefix);
  return {
    topology,
    stage,
    prefix,
    mode,
    rate,
    timeoutSeconds,
    pollIntervalMs,
    verifyConcurrency,
    listShards,
    overlapSeconds,
    json,
    dryRun,
    human,
    result,
    requested,
    attachTo,
    jobManifestUrl,
    generator,
  };
}

type ReprocessArgs = ReturnType<typeof reprocessArgs>;
/** The arguments of a run published for `rerun ui` (app/runs/runProgressFile.ts). */
type RunArgs = ReprocessArgs & { readonly run: PublishedRun };

/** A planning step's progress, as a run file says it. */
function planningProgress(p: ReprocessProgress): RunProgress {
  return { phase: 'planning', done: p.listedInputs, unit: 'inputs listed', figures: { planned: p.planned } };
}

/** `--job`, `--manifest` or `--generate-manifest`: a job over tasks nobody plans here. */
async function runUnplannedJob(
  target: PipelineTarget,
  values: OptionValues,
  io: CliIo,
  args: RunArgs,
): Promise<number> {
  const { prefix, json, human, attachTo, jobManifestUrl, generator } = args;
  // No planning: a job that exists, or one over a manifest the operator already has.
  const runner = await jobRunner(target, values, human, args.stage);
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
    human(`${jobLine(job, runner)}\n`);
  }
  const jobId = attachTo ?? (job as SubmittedJob).jobId;
  const outcome =
    values.wait === true || runner.kind === 'local'
      ? await follow(target, runner, jobId, report, job?.totalTasks, values, io, human, args.run)
      : undefined;
  const summary = {
    engine: ReprocessEngine.BATCH_OPERATIONS,
    runner: runner.kind,
    job: jobSummary(jobId, job, outcome, target),
    ...(outcome && values.wait === true ? waitSummary(outcome) : {}),
  };
  args.result(describeJob(jobId, outcome, runner, values.wait === true));
  io.stdout(json ? JSON.stringify(summary) : `SUMMARY ${JSON.stringify(summary)}`);
  return exitCode(false, outcome && values.wait === true ? outcome.ended : undefined);
}

/** What planning needs: the queues, the code-version cutoff, the listings and the options shared by every engine. */
async function planningSetup(target: PipelineTarget, values: OptionValues, io: CliIo, args: ReprocessArgs) {
  const { topology, prefix, mode, rate, verifyConcurrency, listShards, overlapSeconds, dryRun, human, requested } =
    args;
  const normalize = topology.normalize;
  // The batch-operations engine sends no message (only --prune's rebuild of an input that came back does).
  const needsQueue = requested !== ReprocessEngine.BATCH_OPERATIONS || values.prune === true;
  const queueUrl = needsQueue
    ? await workerQueueUrl(target, normalize, 'queue', stringOption(values, 'queue-url'), io.env)
    : '';
  const dlqUrl =
    values.wait && requested !== ReprocessEngine.BATCH_OPERATIONS
      ? await workerQueueUrl(target, normalize, 'dlq', stringOption(values, 'dlq-url'), io.env)
      : undefined;
  // Planning streams (the plan's total is known only when the listings end): say what runs first.
  human(
    `Planning stage "${args.stage.name}" (${args.stage.from}): ${prefix} of ${target.inputBucket} (mode ${mode}${values.verify ? ', verify' : ''})` +
      `${dryRun ? ': dry run, nothing is sent' : requested === ReprocessEngine.SQS ? ', enqueueing as it goes' : ''}...\n`,
  );
  const reader = new S3ListingReader(target.clients.s3);
  const { stage } = args;
  // The stage's own worker as planning sees it: its keys from the description, and the reference
  // normalizer's skip rules only when the stage is the reference normalizer.
  const worker = planningWorker(stage, target.outputBucket, () =>
    createNormalizeWorker({ outputBucket: target.outputBucket, prefixes: topology }),
  );
  // A code-version bump, from the markers the deployed worker writes (one listing request).
  const cutoff = await readCodeVersionCutoff(
    reader,
    target.outputBucket,
    {
      prefix: topology.codeVersionPrefix,
      worker: worker.name,
      codeVersion: worker.codeVersion,
      overlapMs: overlapSeconds * 1000,
    },
    `stage "${stage.name}" declares no codeVersion: old-code outputs cannot be told`,
  );
  human(
    cutoff.state === 'known'
      ? `Code version ${cutoff.codeVersion} first ran at ${new Date(cutoff.since).toISOString()}: older outputs are old-code.\n`
      : `note: ${cutoff.reason}.\n`,
  );
  const mappingOf = (rule: PlanningStage['outputKey']) =>
    deterministicKeyMapping({
      inputBucket: target.inputBucket,
      inputPrefix: stage.inputPrefix,
      outputPrefix: rule.prefix,
      suffix: rule.suffix ?? '',
      stripPrefix: rule.stripPrefix ?? '',
    });
  const mapping = mappingOf(stage.outputKey);
  const listings = await inventoryListings(target, values, prefix, mapping, human);
  const common: RunReprocessOptions = {
    reader,
    ...(listings ? { listings } : {}),
    ...(cutoff.state === 'known' ? { codeCutoff: cutoff } : {}),
    store: new S3ObjectStore(target.clients.s3),
    sqs: target.clients.sqs,
    inputBucket: target.inputBucket,
    worker,
    mapping,
    // The side outputs (the normalizer's quarantine), so --prune also finds side objects whose main output is gone.
    sideMappings: Object.values(stage.sideOutputs).map(mappingOf),
    prefix,
    mode,
    verify: values.verify === true,
    ...(verifyConcurrency !== undefined ? { verifyConcurrency } : {}),
    ...(listShards !== undefined ? { listShards } : {}),
    dryRun,
    prune: values.prune === true,
    queueUrl,
    ...(rate !== undefined ? { ratePerSecond: rate } : {}),
    signal: io.signal,
  };
  const explain = (error: unknown): never => {
    if (RerunError.isRerunError(error)) throw error;
    throw explainAwsError(error, {
      role: 'input bucket, output bucket or normalize queue',
      name: `${target.inputBucket} / ${target.outputBucket} / ${queueUrl || '(no queue)'}`,
      where: target.where,
      hint: 'Check the names and your permissions (ListBucket on both buckets, SendMessage on the queue).',
    });
  };

  return { queueUrl, dlqUrl, cutoff, common, explain };
}

type PlanningSetup = Awaited<ReturnType<typeof planningSetup>>;

/** The engine a planned reprocess runs on (`auto`: a dry-run pass sizes the plan first). */
async function chooseEngine(values: OptionValues, args: ReprocessArgs, setup: PlanningSetup) {
  const { human, requested } = args;
  const { common, explain, queueUrl } = setup;
  let engine: typeof ReprocessEngine.SQS | typeof ReprocessEngine.BATCH_OPERATIONS =
    requested === ReprocessEngine.AUTO ? ReprocessEngine.SQS : requested;
  if (requested === ReprocessEngine.AUTO) {
    // The plan's size is known only once it is listed: one dry-run pass first (a LIST per 1,000 keys).
    const sized = await runReprocess({ ...common, dryRun: true, prune: false }).catch(explain);
    engine = autoEngine(sized.planned);
    human(
      `engine: auto chose ${engine} for ${sized.planned} planned input(s) ` +
        `(batch-operations from ${AUTO_BATCH_OPERATIONS_THRESHOLD.toLocaleString('en-US')}).\n`,
    );
    if (engine === ReprocessEngine.BATCH_OPERATIONS && values.prune === true && !queueUrl) {
      throw new CliUsageError('--prune needs the work queue; pass --queue-url.');
    }
  }

  return engine;
}

/** The batch-operations engine: the plan as a manifest, one job over it, its report read back. */
async function runPlannedJob(
  target: PipelineTarget,
  values: OptionValues,
  io: CliIo,
  args: RunArgs,
  setup: PlanningSetup,
): Promise<number> {
  const { prefix, mode, json, dryRun, human } = args;
  const { common, explain, cutoff } = setup;
  const engine = ReprocessEngine.BATCH_OPERATIONS;
  // A dry run writes no manifest and creates no job: it needs no function or role.
  const runner = dryRun ? undefined : await jobRunner(target, values, human, args.stage);
  if (!runner) human('engine: batch-operations (dry run: no manifest, no job)\n');
  const builder = new ManifestBuilder();
  const result = await runReprocess({
    ...common,
    sink: async (input) => builder.add(target.inputBucket, input.key),
    onProgress: (p) => args.run.progress(planningProgress(p)),
  }).catch(explain);
  const report = { bucket: target.outputBucket, prefix: batchOperationsReportPrefix() };
  let job: SubmittedJob | undefined;
  let outcome: JobOutcome | undefined;
  if (runner && !result.interrupted && result.planned > 0) {
    const manifest = await putManifest(
      target.clients.s3,
      target.outputBucket,
      batchOperationsManifestKey(builder.digest()),
      builder.text(),
    );
    human(`Manifest: s3://${manifest.bucket}/${manifest.key} (${builder.rows} input(s)).\n`);
    job = await submitJob({
      s3: target.clients.s3,
      runner,
      manifest,
      report,
      description: `rerun reprocess ${prefix} mode ${mode}`,
    });
    human(`${jobLine(job, runner)}\n`);
    if (values.wait === true || runner.kind === 'local') {
      outcome = await follow(target, runner, job.jobId, report, job.totalTasks, values, io, human, args.run);
    }
  }
  const summary = {
    ...planSummary(result, prefix, mode, dryRun, cutoff),
    engine,
    ...(runner ? { runner: runner.kind } : {}),
    ...(job ? { job: jobSummary(job.jobId, job, outcome, target) } : {}),
    ...(outcome && values.wait === true ? waitSummary(outcome) : {}),
  };
  args.result(describeResult(result, target, 'put in the manifest'));
  if (job && runner) args.result(describeJob(job.jobId, outcome, runner, values.wait === true));
  if (json) io.stdout(JSON.stringify({ ...summary, plan: result.plan, sample: result.sample.map(brief) }));
  else io.stdout(`SUMMARY ${JSON.stringify(summary)}`);
  return exitCode(result.interrupted, outcome && values.wait === true ? outcome.ended : undefined);
}

/** The SQS engine: one message per planned input, and `--wait` follows them to their outcomes. */
async function runSqsEngine(
  target: PipelineTarget,
  values: OptionValues,
  io: CliIo,
  args: RunArgs,
  setup: PlanningSetup,
  engine: ReprocessEngine,
): Promise<number> {
  const { prefix, mode, timeoutSeconds, pollIntervalMs, json, dryRun, human, requested } = args;
  const { common, explain, cutoff, dlqUrl } = setup;
  let lineOpen = false;
  let lastLogged = -1;
  if (requested !== ReprocessEngine.SQS) human('engine: sqs (one message per input on the work queue).\n');
  const result = await runReprocess({
    ...common,
    ...(dlqUrl ? { dlqUrl } : {}),
    wait: values.wait === true,
    ...(pollIntervalMs !== undefined ? { pollIntervalMs } : {}),
    ...(timeoutSeconds !== undefined ? { timeoutMs: timeoutSeconds * 1000 } : {}),
    onProgress: (p) => {
      args.run.progress(
        dryRun || !p.planComplete
          ? planningProgress(p)
          : { phase: 'enqueueing', done: p.enqueued, total: p.planned, unit: 'inputs', figures: { pruned: p.pruned } },
      );
      if (dryRun) return;
      // The total is known once the listings end: until then, the bar is against what is planned so far.
      const line =
        `enqueued ${renderProgressBar(p.enqueued, p.planned, 20)}` +
        `${p.planComplete ? '' : ` | listing: ${p.listedInputs} inputs`}${p.pruned > 0 ? ` | pruned ${p.pruned}` : ''}`;
      if (io.isTTY) {
        human(liveLine(line, io.stderrColumns));
        lineOpen = true;
      } else if (p.planComplete || (p.enqueued !== lastLogged && isProgressStep(p.enqueued, 10_000))) {
        lastLogged = p.enqueued;
        human(`${line}\n`);
      }
    },
    onWait: (p) => {
      const { queued, inFlight, deadLettered } = p;
      args.run.progress({
        phase: 'waiting',
        done: p.done,
        total: p.total,
        unit: 'inputs done',
        figures: { queued, inFlight, deadLettered },
      });
      const line =
        `${renderProgressBar(p.done, p.total, 20)} done | queued ${p.queued}, in flight ${p.inFlight}` +
        `${p.deadLettered > 0 ? `, dead-lettered ${p.deadLettered}` : ''} | ${Math.round(p.elapsedMs / 1000)} s`;
      if (io.isTTY) {
        human(liveLine(line, io.stderrColumns));
        lineOpen = true;
      } else {
        human(`${line}\n`);
      }
    },
  }).catch(explain);
  if (lineOpen) human('\n');

  const summary = {
    ...planSummary(result, prefix, mode, dryRun, cutoff),
    ...(requested !== ReprocessEngine.SQS ? { engine } : {}),
    ...(result.wait
      ? {
          waited: result.wait.ended,
          done: result.wait.done,
          remaining: result.wait.remaining,
          gone: result.wait.gone,
          deadLettered: result.wait.deadLettered,
          seconds: Math.round(result.wait.elapsedMs / 1000),
        }
      : {}),
  };
  args.result(describeResult(result, target));
  if (json) io.stdout(JSON.stringify({ ...summary, plan: result.plan, sample: result.sample.map(brief) }));
  else io.stdout(`SUMMARY ${JSON.stringify(summary)}`);
  return exitCode(result.interrupted, result.wait?.ended);
}
