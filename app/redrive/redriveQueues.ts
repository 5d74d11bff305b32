import { partitionScheme } from '../../src/partitions/partitionScheme.js';
import type { PartitionSpec } from '../../src/partitions/partitionSpec.js';
import { parsePipelineDescription } from '../../src/pipeline/parsePipelineDescription.js';
import type { DescribedStage } from '../../src/pipeline/pipelineDescription.js';
import { windowStageOutputKeys } from '../../src/window/windowStageOutputKeys.js';
import { parseWindowTaskMessage } from '../../src/window/windowTaskMessage.js';
import { CliUsageError } from '../common/command.js';
import { requireQueueUrl } from '../common/pipelineResources.js';
import { readDescription } from '../common/pipelineStage.js';
import { type PipelineTarget, workerQueueUrl } from '../common/pipelineTarget.js';
import { StackOutput } from '../stackOutputs.js';
import type { WorkerTopology } from '../topology.js';
import type { DeadLetterRecheck } from './recheckDeadLetter.js';

/**
 * Whether the `--stack` target has the worker's DLQ among its outputs (a RerunPipeline stack has no
 * summary stage); without `--stack` every worker is looked for.
 */
function stackHas(target: PipelineTarget, worker: WorkerTopology): boolean {
  if (!target.stack) return true;
  const output = worker.name === target.topology.summarize.name ? StackOutput.SUMMARY_DLQ_URL : StackOutput.DLQ_URL;
  return Boolean(target.stack.outputs[output]);
}

/**
 * The workers `--queue` picks (all the target has without it), and their DLQs' labels. The object stage
 * of a running rerun dev's pipeline is the worker the session runs with --handler (its queues are the
 * session's normalize pair): `--queue` takes the stage's name, and its DLQ is named by it.
 */
export function chooseWorkers(
  target: PipelineTarget,
  workers: readonly WorkerTopology[],
  queue: string | undefined,
): { chosen: WorkerTopology[]; labels: Readonly<Record<string, string>> } {
  const devObject = target.stack ? undefined : devObjectStage(target.devPipeline?.pipeline);
  const workerOf = (name: string) => (name === devObject ? target.topology.normalize.name : name);
  return {
    chosen: queue ? workers.filter((w) => w.name === workerOf(queue)) : workers.filter((w) => stackHas(target, w)),
    labels: devObject ? { [target.topology.normalize.name]: `${devObject} DLQ (object stage)` } : {},
  };
}

/**
 * The object stage a running `rerun dev --pipeline` runs with `--handler`: the pipeline's only object
 * stage over an input prefix (rerun dev refuses one over another prefix). Undefined without a
 * session pipeline, or when it has none or several such stages (then the worker keeps its own name).
 */
function devObjectStage(pipeline: unknown): string | undefined {
  if (pipeline === undefined) return undefined;
  let description: ReturnType<typeof parsePipelineDescription>;
  try {
    description = parsePipelineDescription(pipeline);
  } catch {
    return undefined; // the tools that judge the pipeline report why it does not parse
  }
  const names = Object.entries(description.stages)
    .filter(([, stage]) => stage.kind === 'object' && 'prefix' in stage.input)
    .map(([name]) => name);
  return names.length === 1 ? names[0] : undefined;
}

/** A DLQ to redrive, with what tells its messages' fate. */
export interface RedriveQueue {
  readonly label: string;
  readonly dlqUrl: string;
  readonly sourceQueueUrl?: string;
  /** rerun's own worker whose recheck and log group apply. */
  readonly stage?: 'normalize' | 'summarize';
  /** A user's window stage's recheck. */
  readonly recheck?: DeadLetterRecheck;
}

/**
 * The DLQs of a user's stack, from the pipeline description it publishes (RerunPipeline and
 * RerunWindowStage with `outputs: true`): the object stage its worker runs (PipelineStage) by
 * QueueUrl and DeadLetterQueueUrl, each window stage by `<Stage>WindowQueueUrl` and
 * `<Stage>WindowDeadLetterQueueUrl`, each named by its stage. A stage without those outputs is
 * named in a note. `--queue NAME` picks a stage by name. Undefined when the target is not such a
 * stack (no --stack, rerun's own stack, no description) or `--queue` is a DLQ's name or URL.
 */
export async function describedQueues(
  target: PipelineTarget,
  queue: string | undefined,
  sourceOverride: string | undefined,
): Promise<{ queues: RedriveQueue[]; notes: string[] } | undefined> {
  const outputs = target.stack?.outputs;
  if (!outputs || outputs[StackOutput.PIPELINE_DESCRIPTION] === undefined) return undefined;
  // rerun's own stack: its normalize and summarize workers, as before descriptions.
  if (outputs[StackOutput.FUNCTION_NAME] || outputs[StackOutput.SUMMARY_QUEUE_URL]) return undefined;
  const { description, from } = await readDescription(target, {});
  const names = Object.keys(description.stages);
  if (queue !== undefined && !names.includes(queue)) {
    if (/^https?:\/\//.test(queue) || /dlq|dead/i.test(queue)) return undefined;
    throw new CliUsageError(
      `--queue "${queue}" is neither a stage of ${from} (${names.join(', ')}) nor a DLQ name or URL (expected a name with "dlq").`,
    );
  }
  const queues: RedriveQueue[] = [];
  const notes: string[] = [];
  for (const name of queue === undefined ? names : [queue]) {
    const stage = description.stages[name] as DescribedStage;
    let urls: { queue?: string | undefined; dlq?: string | undefined; outputs: string };
    if (stage.kind === 'window') {
      const keys = windowStageOutputKeys(name);
      urls = { queue: outputs[keys.queueUrl], dlq: outputs[keys.dlqUrl], outputs: `${keys.dlqUrl}` };
    } else if (outputs[StackOutput.PIPELINE_STAGE] === name) {
      urls = { queue: outputs[StackOutput.QUEUE_URL], dlq: outputs[StackOutput.DLQ_URL], outputs: StackOutput.DLQ_URL };
    } else {
      urls = { outputs: `a RerunPipeline's ${StackOutput.DLQ_URL} with ${StackOutput.PIPELINE_STAGE} ${name}` };
    }
    if (urls.dlq === undefined) {
      const why = `${from} has no output for the DLQ of stage ${name} (${urls.outputs})`;
      if (queue !== undefined)
        throw new CliUsageError(`--queue ${name}: ${why}. Pass the DLQ's URL with --queue instead.`);
      notes.push(`${why}: not looked at.`);
      continue;
    }
    const source = sourceOverride ?? urls.queue;
    queues.push({
      label: `${name} DLQ (${stage.kind} stage)`,
      dlqUrl: urls.dlq,
      ...(source ? { sourceQueueUrl: source } : {}),
      // An object stage's worker reads S3 events, as rerun's normalizer does.
      ...(stage.kind === 'window' ? { recheck: windowRecheck(name, stage.partitions) } : { stage: 'normalize' }),
    });
  }
  return { queues, notes };
}

/**
 * A window stage's dead letter fails again when its failure was not retryable and its body is still
 * no window task message of the stage (createWindowTaskHandler refuses it the same way).
 */
function windowRecheck(stage: string, partitions: PartitionSpec): DeadLetterRecheck {
  const scheme = partitionScheme(partitions);
  return (body, record) => {
    if (!record || record.retryable) return undefined;
    // Any sent time: a "closed" message always names a window; only whether the body is one matters.
    const parsed = parseWindowTaskMessage(body, { stage, scheme, sentTimestampMs: 0 });
    return parsed.kind === 'invalid' ? `would fail again: ${parsed.reason}` : undefined;
  };
}

/** The DLQs to redrive: by worker (with its work queue as the source) or one given by name/URL. */
export async function resolveQueues(
  target: PipelineTarget,
  workers: readonly WorkerTopology[],
  queue: string | undefined,
  sourceOverride: string | undefined,
  env: NodeJS.ProcessEnv,
  labels: Readonly<Record<string, string>> = {},
): Promise<RedriveQueue[]> {
  if (queue && workers.length === 0) {
    if (!/^https?:\/\//.test(queue) && !/dlq|dead/i.test(queue)) {
      throw new CliUsageError(
        `--queue "${queue}" is neither a worker (normalize, summarize) nor a DLQ name or URL (expected a name with "dlq").`,
      );
    }
    const dlqUrl = await requireQueueUrl(target.clients.sqs, {
      role: 'dead-letter queue',
      name: queue,
      where: target.where,
      hint: 'Check the name, or pass a worker name (normalize, summarize).',
    });
    return [{ label: 'dead-letter queue', dlqUrl, ...(sourceOverride ? { sourceQueueUrl: sourceOverride } : {}) }];
  }
  const queues: RedriveQueue[] = [];
  for (const worker of workers) {
    const stage: 'normalize' | 'summarize' | undefined =
      worker.name === 'normalize' || worker.name === 'summarize' ? worker.name : undefined;
    queues.push({
      ...(stage ? { stage } : {}),
      label: labels[worker.name] ?? `${worker.name} DLQ`,
      dlqUrl: await workerQueueUrl(target, worker, 'dlq', undefined, env),
      sourceQueueUrl: sourceOverride ?? (await workerQueueUrl(target, worker, 'queue', undefined, env)),
    });
  }
  return queues;
}
