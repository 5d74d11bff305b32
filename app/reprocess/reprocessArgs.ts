import { CliUsageError, integerOption, type OptionValues } from '../common/command.js';
import type { PlanningStage } from '../common/pipelineStage.js';
import { type PipelineTarget, stringOption } from '../common/pipelineTarget.js';
import { type ManifestGeneratorSpec, ReprocessEngine } from './batchOperationsJob.js';
import { parseReprocessMode, ReprocessMode } from './planReprocess.js';

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
export function reprocessArgs(values: OptionValues, target: PipelineTarget, stage: PlanningStage) {
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
    requested,
    attachTo,
    jobManifestUrl,
    generator,
  };
}

/** The options of `rerun reprocess`, parsed and checked. */
export type ReprocessArgs = ReturnType<typeof reprocessArgs>;
