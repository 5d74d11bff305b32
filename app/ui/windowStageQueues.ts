import { windowStageOutputKeys } from '../../src/window/windowStageOutputKeys.js';
import { readDescription } from '../common/pipelineStage.js';
import type { PipelineTarget } from '../common/pipelineTarget.js';
import { StackOutput } from '../stackOutputs.js';

/** A window stage's work queue and DLQ, as the console shows them. */
export interface WindowStageQueue {
  /** The window stage's name: the queue rows are labelled by it, and `/api/dead-letters?queue=` takes it. */
  readonly stage: string;
  readonly queue: string;
  readonly dlq: string;
}

/**
 * The queues of the user's window stages, where the target records them, as `rerun redrive` finds
 * them: a running `rerun dev --pipeline` in its session file (by stage name), a user's stack in its
 * `<Stage>WindowQueueUrl` and `<Stage>WindowDeadLetterQueueUrl` outputs (RerunWindowStage with
 * `outputs: true`) for each window stage of the PipelineDescription it publishes. A window stage
 * whose stack has no such output is named in `notes`. rerun's own pipeline has none (its summarize
 * worker is shown as a worker).
 *
 * @example
 * const { queues } = await windowStageQueues(target); // [{ stage: 'hourly-counts', queue: '...', dlq: '...' }]
 */
export async function windowStageQueues(
  target: PipelineTarget,
): Promise<{ readonly queues: readonly WindowStageQueue[]; readonly notes: readonly string[] }> {
  const outputs = target.stack?.outputs;
  if (!outputs) {
    const recorded = Object.entries(target.devPipeline?.windowStages ?? {});
    return { queues: recorded.map(([stage, urls]) => ({ stage, queue: urls.queueUrl, dlq: urls.dlqUrl })), notes: [] };
  }
  // rerun's own stack (its summarize worker), or a stack that publishes no description: no window stage.
  if (outputs[StackOutput.PIPELINE_DESCRIPTION] === undefined || outputs[StackOutput.SUMMARY_QUEUE_URL]) {
    return { queues: [], notes: [] };
  }
  const { description, from } = await readDescription(target, {});
  const queues: WindowStageQueue[] = [];
  const notes: string[] = [];
  for (const [stage, described] of Object.entries(description.stages)) {
    if (described.kind !== 'window') continue;
    const keys = windowStageOutputKeys(stage);
    const queue = outputs[keys.queueUrl];
    const dlq = outputs[keys.dlqUrl];
    if (queue === undefined || dlq === undefined) {
      notes.push(
        `${from} has no ${keys.queueUrl} and ${keys.dlqUrl} outputs: the queues of stage ${stage} are not shown.`,
      );
      continue;
    }
    queues.push({ stage, queue, dlq });
  }
  return { queues, notes };
}
