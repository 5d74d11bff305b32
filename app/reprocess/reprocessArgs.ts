import { CliUsageError } from '../common/command.js';
import type { PlanningStage } from '../common/pipelineStage.js';
import type { PipelineTarget } from '../common/pipelineTarget.js';
import { type ManifestGeneratorSpec, ReprocessEngine } from './batchOperationsJob.js';
import type { ReprocessRequest } from './reprocessRequest.js';

/**
 * `--generate-manifest` (with `--created-after` / `--created-before`): the manifest generator's
 * filters over the input bucket, or undefined without the flag.
 */
function manifestGeneratorOption(
  request: ReprocessRequest,
  inputBucket: string,
  prefix: string,
): ManifestGeneratorSpec | undefined {
  const { createdAfter, createdBefore } = request;
  if (!request.generateManifest) {
    if (createdAfter || createdBefore) {
      throw new CliUsageError('--created-after and --created-before filter --generate-manifest: pass it too.');
    }
    return undefined;
  }
  if (request.engine !== ReprocessEngine.BATCH_OPERATIONS) {
    throw new CliUsageError("--generate-manifest is a Batch Operations job's: it goes with --engine batch-operations.");
  }
  if (request.manifest !== undefined || request.job !== undefined) {
    throw new CliUsageError("--generate-manifest, --manifest and --job each name the job's tasks: pass one.");
  }
  return { generator: { sourceBucket: inputBucket, prefix, createdAfter, createdBefore } };
}

/**
 * A reprocess request checked against its stage and target (a usage error is thrown before
 * anything runs), with the defaults they give.
 */
export function reprocessArgs(request: ReprocessRequest, target: PipelineTarget, stage: PlanningStage) {
  const topology = target.topology;
  const prefix = request.prefix ?? stage.inputPrefix;
  if (!prefix.startsWith(stage.inputPrefix)) {
    throw new CliUsageError(
      `--prefix must start with the input prefix ${stage.inputPrefix} of stage "${stage.name}" (got "${prefix}"): only keys there are processed.`,
    );
  }
  if (request.verify && !stage.codeVersion) {
    throw new CliUsageError(
      `--verify judges each output's code version, and stage "${stage.name}" of ${stage.from} declares none: add ` +
        "codeVersion (the worker's) to the stage in the pipeline and publish it again.",
    );
  }
  const requested = request.engine;
  const attachTo = request.job;
  if (attachTo && request.engineGiven && requested !== ReprocessEngine.BATCH_OPERATIONS) {
    throw new CliUsageError('--job attaches to a Batch Operations job: it goes with --engine batch-operations only.');
  }
  const jobManifestUrl = requested === ReprocessEngine.BATCH_OPERATIONS ? request.manifest : undefined;
  const generator = manifestGeneratorOption(request, target.inputBucket, prefix);
  return {
    ...request,
    topology,
    stage,
    prefix,
    overlapSeconds: request.codeOverlapSeconds ?? topology.normalize.functionTimeoutSeconds + 60,
    requested,
    attachTo,
    jobManifestUrl,
    generator,
  };
}

/** A reprocess request checked against its stage and target. */
export type ReprocessArgs = ReturnType<typeof reprocessArgs>;
