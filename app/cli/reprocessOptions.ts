import { CliUsageError, integerOption, type OptionValues } from '../common/command.js';
import { stringOption } from '../common/pipelineTarget.js';
import { ReprocessEngine } from '../reprocess/batchOperationsJob.js';
import { parseReprocessMode, ReprocessMode } from '../reprocess/planReprocess.js';
import type { ReprocessRequest } from '../reprocess/reprocessRequest.js';

/** `--created-after` / `--created-before`: an ISO 8601 time, or a usage error. */
function timeOption(values: OptionValues, name: string): Date | undefined {
  const text = stringOption(values, name);
  if (text === undefined) return undefined;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new CliUsageError(`--${name} must be an ISO 8601 time (got "${text}").`);
  return new Date(ms);
}

/**
 * The options of `rerun reprocess` (app/cli/commands/reprocess.ts) turned into its request: each
 * parsed and bounded, a usage error thrown for one that is not. What depends on the stage or the
 * target (the prefix, --verify, --job with --engine) the wing checks (app/reprocess/reprocessArgs.ts).
 *
 * @example
 * reprocessRequest({ prefix: 'incoming/2026/', mode: 'all', 'dry-run': true }).mode; // 'all'
 */
export function reprocessRequest(values: OptionValues): ReprocessRequest {
  const modeText = stringOption(values, 'mode') ?? ReprocessMode.STALE;
  const mode = parseReprocessMode(modeText);
  if (!mode) throw new CliUsageError(`--mode must be missing, stale or all (got "${modeText}").`);
  const rate = integerOption(values, 'rate', { min: 1, max: 3000 });
  const timeoutSeconds = integerOption(values, 'timeout', { min: 1, max: 7 * 86_400 });
  const pollIntervalMs = integerOption(values, 'poll-interval', { min: 50, max: 600_000 });
  const verifyConcurrency = integerOption(values, 'verify-concurrency', { min: 1, max: 256 });
  const listShards = integerOption(values, 'shards', { min: 1, max: 64 });
  const codeOverlapSeconds = integerOption(values, 'code-overlap', { min: 0, max: 86_400 });
  const engineText = stringOption(values, 'engine') ?? ReprocessEngine.SQS;
  const engine = Object.values(ReprocessEngine).find((e) => e === engineText);
  if (!engine) throw new CliUsageError(`--engine must be sqs, batch-operations or auto (got "${engineText}").`);
  return {
    prefix: stringOption(values, 'prefix'),
    mode,
    engine,
    engineGiven: stringOption(values, 'engine') !== undefined,
    rate,
    timeoutSeconds,
    pollIntervalMs,
    verifyConcurrency,
    listShards,
    codeOverlapSeconds,
    dryRun: values['dry-run'] === true,
    wait: values.wait === true,
    verify: values.verify === true,
    prune: values.prune === true,
    json: values.json === true,
    job: stringOption(values, 'job'),
    manifest: stringOption(values, 'manifest'),
    outputManifest: stringOption(values, 'output-manifest'),
    generateManifest: values['generate-manifest'] === true,
    createdAfter: timeOption(values, 'created-after'),
    createdBefore: timeOption(values, 'created-before'),
    queueUrl: stringOption(values, 'queue-url'),
    dlqUrl: stringOption(values, 'dlq-url'),
    functionArn: stringOption(values, 'function-arn'),
    roleArn: stringOption(values, 'role-arn'),
  };
}
