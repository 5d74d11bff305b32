import type { CliIo } from '../common/command.js';
import { requireBucket } from '../common/pipelineResources.js';
import type { PlanningStage } from '../common/pipelineStage.js';
import { type PipelineTarget, requireOutputBucket } from '../common/pipelineTarget.js';
import { type PublishedRun, withPublishedRun } from '../runs/runProgressFile.js';
import { ReprocessEngine } from './batchOperationsJob.js';
import { runPlannedJob, runUnplannedJob } from './batchOperationsRun.js';
import { chooseEngine } from './engineChoice.js';
import { planningSetup } from './planningSetup.js';
import { reprocessArgs } from './reprocessArgs.js';
import type { ReprocessEvents } from './reprocessEvents.js';
import type { ReprocessRequest } from './reprocessRequest.js';
import { runSqsEngine } from './sqsEngineRun.js';

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

/**
 * `rerun reprocess` of a stage: the request is checked against the stage and the target (a usage
 * error before anything runs, reprocessArgs.ts), both buckets must exist, then the run is published
 * for `rerun ui` (app/runs/runProgressFile.ts) and goes to its engine: a job over tasks nobody plans
 * here (`--job`, `--manifest`, `--generate-manifest`), or a plan run on the SQS or the Batch
 * Operations engine. `events` makes the sink of the run's events once the run is published. Returns
 * the exit code.
 */
export async function reprocessWithEngine(
  target: PipelineTarget,
  request: ReprocessRequest,
  stage: PlanningStage,
  io: Pick<CliIo, 'env' | 'signal'>,
  events: (run: PublishedRun) => ReprocessEvents,
): Promise<number> {
  const args = reprocessArgs(request, target, stage);
  await requireInputBucket(target);
  await requireOutputBucket(target);
  const label = `reprocess ${args.prefix} (mode ${args.mode}${args.dryRun ? ', dry run' : ''})`;
  return await withPublishedRun({ command: 'reprocess', label, target }, async (run) => {
    const emit = events(run);
    if (args.attachTo || args.jobManifestUrl || args.generator) return await runUnplannedJob(target, io, args, emit);
    const setup = await planningSetup(target, io, args, emit);
    const engine = await chooseEngine(args, setup, emit);
    if (engine === ReprocessEngine.BATCH_OPERATIONS) return await runPlannedJob(target, io, args, setup, emit);
    return await runSqsEngine(target, args, setup, engine, emit);
  });
}
