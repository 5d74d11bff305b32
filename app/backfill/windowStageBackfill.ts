import { RerunError } from '../../src/errors.js';
import type { DescribedStage } from '../../src/pipeline/pipelineDescription.js';
import { windowStageOutputKeys } from '../../src/window/windowStageOutputKeys.js';
import { type CliIo, CliUsageError } from '../common/command.js';
import { explainAwsError, requireQueueUrl } from '../common/pipelineResources.js';
import { StageKeyRuleUnknownError, type WindowPlanningStage } from '../common/pipelineStage.js';
import type { PipelineTarget } from '../common/pipelineTarget.js';
import { reportCommandError, requireOutputBucket } from '../common/pipelineTarget.js';
import { WaitEnd } from '../common/waitEnd.js';
import { windowStageRange } from '../common/windowStageRange.js';
import { S3PartitionStore } from '../partition/S3PartitionStore.js';
import { type PublishedRun, withPublishedRun } from '../runs/runProgressFile.js';
import { windowStageInputRules, windowStageTask } from '../status/windowStageTask.js';
import type { BackfillEvents } from './backfillEvents.js';
import { runWindowStageBackfill, type WindowBackfillStage } from './runWindowStageBackfill.js';
import type { SummaryBackfillRequest } from './summaryBackfill.js';

/** What `rerun backfill --stage S` was asked, from its options: the command turns them into this. */
export interface WindowStageBackfillRequest extends Omit<SummaryBackfillRequest, 'from' | 'to'> {
  /** `--from` and `--to`: windows in the stage's own scheme (refused, naming its forms, when absent). */
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  /** `--downstream`: every window stage that reads S, transitively, too. */
  readonly downstream: boolean;
  /** `--downstream-queue STAGE=URL`: a downstream stage's queue, by stage. */
  readonly downstreamQueues: ReadonlyMap<string, string>;
}

/**
 * `rerun backfill --stage S` of a user's window stage (and with `--downstream`, of every stage that
 * reads it, transitively): app/backfill/runWindowStageBackfill.ts, published as a run once its queues
 * are found (rerun ui follows it, as it follows the daily summaries' backfill). Its notes, plans,
 * progress and end go as events (backfillEvents.ts) to the sink `events` makes once the run is
 * published, rendered as the reference backfill renders its plan, its SUMMARY line and its --json
 * document (backfillConsole.ts). Exit 0 done (or planned), 1 when --wait ends with windows not
 * published or times out, 130 interrupted; the run file ends with the same code.
 *
 * @example
 * return windowStageBackfill(request, io, target, stage, (run) => backfillConsole({ io, json, run, liveLine }));
 */
export async function windowStageBackfill(
  request: WindowStageBackfillRequest,
  io: CliIo,
  target: PipelineTarget,
  stage: WindowPlanningStage,
  events: (run: PublishedRun) => BackfillEvents,
): Promise<number> {
  const { json, rate, timeoutSeconds, pollIntervalMs, dryRun, wait, mode } = request;
  const queueOverrides = request.downstreamQueues;
  try {
    const names = [stage.name, ...(request.downstream ? downstreamOf(stage) : [])];
    const tasks = names.map((name) => {
      if (name === stage.name) return { name, task: windowStageTask(stage, target), planning: stage };
      const planning = { ...stage, name, window: stage.description.stages[name] as WindowPlanningStage['window'] };
      return { name, task: windowStageTask(planning, target), planning };
    });
    const first = tasks[0] as (typeof tasks)[number];
    const { from, to, windows, forms } = windowStageRange(first.task, stage.name, request);
    await requireOutputBucket(target);
    const stages: WindowBackfillStage[] = [];
    for (const [i, { name, task, planning }] of tasks.entries()) {
      const upstreamInputs = windowStageInputRules(planning, {
        inputBucket: target.inputBucket,
        failurePrefix: target.topology.failurePrefix,
      });
      const given = i === 0 ? request.queueUrl : queueOverrides.get(name);
      const queueUrl = dryRun ? undefined : await stageQueueUrl(target, name, 'queue', given);
      const dlqGiven = i === 0 ? request.dlqUrl : undefined;
      const dlqUrl = wait && !dryRun ? await stageQueueUrl(target, name, 'dlq', dlqGiven, true) : undefined;
      stages.push({
        task,
        ...(i > 0 ? { upstream: planning.window.input.stage } : {}),
        ...(queueUrl ? { queueUrl } : {}),
        ...(dlqUrl ? { dlqUrl } : {}),
        ...(upstreamInputs ? { upstreamInputs } : {}),
      });
    }
    const label =
      `backfill --stage ${stage.name} ${from}..${to} (mode ${mode}` +
      `${names.length > 1 ? `, downstream ${names.slice(1).join(', ')}` : ''}${dryRun ? ', dry run' : ''})`;
    return await withPublishedRun({ command: 'backfill', label, target }, async (run) => {
      const emit = events(run);
      emit({
        kind: 'note',
        text:
          `Window stage "${stage.name}" (${stage.from}), ${forms}` +
          `${names.length > 1 ? `; downstream: ${names.slice(1).join(', ')}` : ''}.\n`,
      });
      if (names.length > 1 && !wait && !dryRun) {
        emit({
          kind: 'note',
          text:
            'note: without --wait every stage is sent at once; a downstream window built before its upstream window ' +
            'is rebuilt is stale afterwards (rerun status says so), and the next backfill rebuilds it. With --wait, ' +
            'each stage is sent once the stage it reads is published.\n',
        });
      }
      const token = `backfill-${new Date().toISOString().replace(/[-:.]/g, '')}`;
      const result = await runWindowStageBackfill({
        reader: new S3PartitionStore(target.clients.s3),
        sqs: target.clients.sqs,
        stages,
        windows,
        mode,
        dryRun,
        wait,
        token,
        ...(rate !== undefined ? { ratePerSecond: rate } : {}),
        ...(pollIntervalMs !== undefined ? { pollIntervalMs } : {}),
        ...(timeoutSeconds !== undefined ? { timeoutMs: timeoutSeconds * 1000 } : {}),
        signal: io.signal,
        events: emit,
      }).catch((error: unknown) => {
        if (RerunError.isRerunError(error)) throw error;
        throw explainAwsError(error, {
          role: 'buckets or window queues',
          name: `${target.inputBucket} / ${target.outputBucket} / ${stages.map((s) => s.queueUrl ?? '-').join(', ')}`,
          where: target.where,
          hint: 'Check the names and your permissions.',
        });
      });
      emit({ kind: 'stageEnd', result, stage: stage.name, from, to });
      const unfinished = result.stages.some(
        (s) => s.notSent !== undefined || (s.wait !== undefined && s.wait.ended !== WaitEnd.COMPLETE),
      );
      const code = result.interrupted ? 130 : unfinished ? 1 : 0;
      emit({ kind: 'stageSummary', result, stage: stage.name, from, to, code });
      return code;
    });
  } catch (error) {
    if (error instanceof CliUsageError) throw error;
    return reportCommandError(error, io, 'backfill', json);
  }
}

/** Every window stage that reads `stage`, transitively, in dependency order (breadth first). */
function downstreamOf(stage: WindowPlanningStage): string[] {
  const stages = Object.entries(stage.description.stages) as [string, DescribedStage][];
  const order: string[] = [];
  const queue = [stage.name];
  for (let upstream = queue.shift(); upstream !== undefined; upstream = queue.shift()) {
    for (const [name, s] of stages) {
      if (!('stage' in s.input) || s.input.stage !== upstream || order.includes(name)) continue;
      if (s.kind !== 'window') {
        throw new StageKeyRuleUnknownError(
          `--downstream: stage "${name}" of ${stage.from} reads "${upstream}" and is an object stage: a backfill ` +
            'plans window stages only, and planning an object stage over another stage is not supported yet. ' +
            'Backfill without --downstream, then run that stage with rerun reprocess.',
        );
      }
      order.push(name);
      queue.push(name);
    }
  }
  return order;
}

/**
 * A window stage's queue or DLQ: the option, else the stack's `<Stage>WindowQueueUrl` /
 * `<Stage>WindowDeadLetterQueueUrl` output (RerunWindowStage with `outputs: true`). A work queue
 * that cannot be found refuses, naming both; a DLQ that cannot be found is not watched (`optional`).
 */
async function stageQueueUrl(
  target: PipelineTarget,
  stage: string,
  kind: 'queue' | 'dlq',
  given: string | undefined,
  optional = false,
): Promise<string | undefined> {
  const keys = windowStageOutputKeys(stage);
  const output = kind === 'queue' ? keys.queueUrl : keys.dlqUrl;
  // A running rerun dev of the user's pipeline provisioned the stage's queues and recorded them.
  const dev = target.stack ? undefined : target.devPipeline?.windowStages[stage];
  const name = given ?? target.stack?.outputs[output] ?? (kind === 'queue' ? dev?.queueUrl : dev?.dlqUrl);
  if (name === undefined) {
    if (optional) return undefined;
    throw new CliUsageError(
      `No queue for window stage "${stage}": pass --stack NAME of a stack whose RerunWindowStage publishes the ` +
        `${output} output, or --queue-url URL (the stage asked) or --downstream-queue ${stage}=URL (a downstream ` +
        'stage), or run rerun dev --pipeline with the stage. --dry-run needs no queue.',
    );
  }
  return requireQueueUrl(target.clients.sqs, {
    role: `window stage "${stage}" ${kind === 'dlq' ? 'dead-letter queue' : 'queue'}`,
    name,
    where: target.where,
    hint: dev ? `Is the rerun dev session still running?` : `Check the stack output ${output} or the option.`,
  });
}
