import type { PipelineTarget } from '../common/pipelineTarget.js';
import { ReprocessEngine } from './batchOperationsJob.js';
import type { PlanningSetup } from './planningSetup.js';
import type { ReprocessArgs } from './reprocessArgs.js';
import type { ReprocessEvents } from './reprocessEvents.js';
import { reprocessExitCode } from './reprocessExitCode.js';
import { runReprocess } from './runReprocess.js';

/** The SQS engine: one message per planned input, and `--wait` follows them to their outcomes. */
export async function runSqsEngine(
  target: PipelineTarget,
  args: ReprocessArgs,
  setup: PlanningSetup,
  engine: ReprocessEngine,
  emit: ReprocessEvents,
): Promise<number> {
  const { prefix, mode, timeoutSeconds, pollIntervalMs, dryRun, requested } = args;
  const { common, explain, cutoff, dlqUrl } = setup;
  if (requested !== ReprocessEngine.SQS) {
    emit({ kind: 'note', text: 'engine: sqs (one message per input on the work queue).\n' });
  }
  const result = await runReprocess({
    ...common,
    ...(dlqUrl ? { dlqUrl } : {}),
    wait: args.wait,
    ...(pollIntervalMs !== undefined ? { pollIntervalMs } : {}),
    ...(timeoutSeconds !== undefined ? { timeoutMs: timeoutSeconds * 1000 } : {}),
    // A dry run sends nothing: its progress is the planning's alone.
    onProgress: (progress) => emit({ kind: 'progress', phase: dryRun ? 'planning' : 'enqueueing', progress }),
    onWait: (progress) => emit({ kind: 'waiting', progress }),
  }).catch(explain);
  emit({ kind: 'phaseEnd' });
  emit({ kind: 'plan', result, inputBucket: target.inputBucket });
  const code = reprocessExitCode(result.interrupted, result.wait?.ended);
  emit({
    kind: 'end',
    code,
    parts: {
      plan: { result, prefix, mode, dryRun, cutoff },
      ...(requested !== ReprocessEngine.SQS ? { engine } : {}),
      ...(result.wait ? { wait: result.wait } : {}),
    },
  });
  return code;
}
