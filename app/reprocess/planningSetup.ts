import { RerunError } from '../../src/errors.js';
import { createNormalizeWorker } from '../../src/normalize/normalizeWorker.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import type { CliIo } from '../common/command.js';
import { explainAwsError } from '../common/pipelineResources.js';
import { type PlanningStage, planningWorker } from '../common/pipelineStage.js';
import { type PipelineTarget, workerQueueUrl } from '../common/pipelineTarget.js';
import { ReprocessEngine } from './batchOperationsJob.js';
import { readCodeVersionCutoff } from './codeVersionCutoff.js';
import { inventoryListings } from './inventorySources.js';
import { deterministicKeyMapping } from './outputKeyMapping.js';
import type { ReprocessArgs } from './reprocessArgs.js';
import type { ReprocessEvents } from './reprocessEvents.js';
import type { RunReprocessOptions } from './runReprocessOptions.js';
import { S3ListingReader } from './S3ListingReader.js';

/** What planning needs: the queues, the code-version cutoff, the listings and the options shared by every engine. */
export async function planningSetup(
  target: PipelineTarget,
  io: Pick<CliIo, 'env' | 'signal'>,
  args: ReprocessArgs,
  emit: ReprocessEvents,
) {
  const { topology, prefix, mode, rate, verifyConcurrency, listShards, overlapSeconds, dryRun, requested } = args;
  const note = (text: string) => emit({ kind: 'note', text });
  const normalize = topology.normalize;
  // The batch-operations engine sends no message (only --prune's rebuild of an input that came back does).
  const needsQueue = requested !== ReprocessEngine.BATCH_OPERATIONS || args.prune;
  const queueUrl = needsQueue ? await workerQueueUrl(target, normalize, 'queue', args.queueUrl, io.env) : '';
  const dlqUrl =
    args.wait && requested !== ReprocessEngine.BATCH_OPERATIONS
      ? await workerQueueUrl(target, normalize, 'dlq', args.dlqUrl, io.env)
      : undefined;
  // Planning streams (the plan's total is known only when the listings end): say what runs first.
  note(
    `Planning stage "${args.stage.name}" (${args.stage.from}): ${prefix} of ${target.inputBucket} (mode ${mode}${args.verify ? ', verify' : ''})` +
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
  note(
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
  const listings = await inventoryListings(target, args, prefix, mapping, note);
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
    verify: args.verify,
    ...(verifyConcurrency !== undefined ? { verifyConcurrency } : {}),
    ...(listShards !== undefined ? { listShards } : {}),
    dryRun,
    prune: args.prune,
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

/** What planning needs, as {@link planningSetup} found it. */
export type PlanningSetup = Awaited<ReturnType<typeof planningSetup>>;
