import { RerunError } from '../../src/errors.js';
import type { DescribedStage } from '../../src/pipeline/pipelineDescription.js';
import { windowStageOutputKeys } from '../../src/window/windowStageOutputKeys.js';
import { S3PartitionStore } from '../partition/S3PartitionStore.js';
import { type CliIo, CliUsageError, integerOption, type OptionValues, writeResult } from '../shared/command.js';
import { explainAwsError, requireQueueUrl } from '../shared/pipelineResources.js';
import { StageKeyRuleUnknownError, type WindowPlanningStage } from '../shared/pipelineStage.js';
import type { PipelineTarget } from '../shared/pipelineTarget.js';
import { reportCommandError, requireOutputBucket, stringOption } from '../shared/pipelineTarget.js';
import { isProgressStep, renderProgressBar } from '../shared/progressBar.js';
import { BackfillWaitEnd } from '../shared/waitEnd.js';
import { windowStageRange } from '../shared/windowStageRange.js';
import { formatStatusCounts } from '../status/formatStatusTable.js';
import { formatWindowStageStatus } from '../status/windowStageStatus.js';
import { windowStageInputRules, windowStageTask } from '../status/windowStageTask.js';
import type { BackfillMode } from './planBackfill.js';
import {
  runWindowStageBackfill,
  type WindowBackfillResult,
  type WindowBackfillStage,
  type WindowStagePlan,
} from './runWindowStageBackfill.js';

/** Most window lines printed per stage in a plan (the JSON output always has them all). */
const PLAN_LINES = 40;

/**
 * `rerun backfill --stage S` of a user's window stage (and with `--downstream`, of every stage that
 * reads it, transitively): app/backfill/runWindowStageBackfill.ts, rendered as the reference backfill
 * renders its plan, its SUMMARY line and its --json document. Exit 0 done (or planned), 1 when --wait
 * ends with windows not published or times out, 130 interrupted.
 *
 * @example
 * return windowStageBackfill(values, io, target, stage, mode);
 */
export async function windowStageBackfill(
  values: OptionValues,
  io: CliIo,
  target: PipelineTarget,
  stage: WindowPlanningStage,
  mode: BackfillMode,
): Promise<number> {
  const json = values.json === true;
  const human = (text: string) => {
    if (!json) io.stderr(text);
  };
  const table = (text: string) => {
    if (!json) writeResult(io, text);
  };
  const rate = integerOption(values, 'rate', { min: 1, max: 3000 });
  const timeoutSeconds = integerOption(values, 'timeout', { min: 1, max: 7 * 86_400 });
  const pollIntervalMs = integerOption(values, 'poll-interval', { min: 50, max: 600_000 });
  const dryRun = values['dry-run'] === true;
  const wait = values.wait === true;
  const queueOverrides = downstreamQueueOption(values);
  try {
    const names = [stage.name, ...(values.downstream === true ? downstreamOf(stage) : [])];
    const tasks = names.map((name) => {
      if (name === stage.name) return { name, task: windowStageTask(stage, target), planning: stage };
      const planning = { ...stage, name, window: stage.description.stages[name] as WindowPlanningStage['window'] };
      return { name, task: windowStageTask(planning, target), planning };
    });
    const first = tasks[0] as (typeof tasks)[number];
    const { from, to, windows, forms } = windowStageRange(first.task, stage.name, values);
    await requireOutputBucket(target);
    const stages: WindowBackfillStage[] = [];
    for (const [i, { name, task, planning }] of tasks.entries()) {
      const upstreamInputs = windowStageInputRules(planning, {
        inputBucket: target.inputBucket,
        failurePrefix: target.topology.failurePrefix,
      });
      const given = i === 0 ? stringOption(values, 'queue-url') : queueOverrides.get(name);
      const queueUrl = dryRun ? undefined : await stageQueueUrl(target, name, 'queue', given);
      const dlqGiven = i === 0 ? stringOption(values, 'dlq-url') : undefined;
      const dlqUrl = wait && !dryRun ? await stageQueueUrl(target, name, 'dlq', dlqGiven, true) : undefined;
      stages.push({
        task,
        ...(i > 0 ? { upstream: planning.window.input.stage } : {}),
        ...(queueUrl ? { queueUrl } : {}),
        ...(dlqUrl ? { dlqUrl } : {}),
        ...(upstreamInputs ? { upstreamInputs } : {}),
      });
    }
    human(
      `Window stage "${stage.name}" (${stage.from}), ${forms}` +
        `${names.length > 1 ? `; downstream: ${names.slice(1).join(', ')}` : ''}.\n`,
    );
    if (names.length > 1 && !wait && !dryRun) {
      human(
        'note: without --wait every stage is sent at once; a downstream window built before its upstream window is ' +
          'rebuilt is stale afterwards (rerun status says so), and the next backfill rebuilds it. With --wait, each ' +
          'stage is sent once the stage it reads is published.\n',
      );
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
      onPlan: (plan) => table(describeStagePlan(plan, dryRun)),
      onEnqueued: (name, sent, total) => {
        if (isProgressStep(sent, total)) human(`${name}: enqueued ${sent}/${total}\n`);
      },
      onProgress: (name, p) =>
        human(
          `${name}: ${renderProgressBar(p.published, p.total)} published | queued ${p.queued}, in flight ` +
            `${p.inFlight}${p.deadLettered > 0 ? `, dead-lettered ${p.deadLettered}` : ''} | ` +
            `${Math.round(p.elapsedMs / 1000)} s\n`,
        ),
    }).catch((error: unknown) => {
      if (RerunError.isRerunError(error)) throw error;
      throw explainAwsError(error, {
        role: 'buckets or window queues',
        name: `${target.inputBucket} / ${target.outputBucket} / ${stages.map((s) => s.queueUrl ?? '-').join(', ')}`,
        where: target.where,
        hint: 'Check the names and your permissions.',
      });
    });
    table(describeEnd(result, from, to));
    const summary = windowBackfillSummary(result, stage.name, from, to);
    if (json) io.stdout(JSON.stringify({ ...summary, stages: result.stages }));
    else io.stdout(`SUMMARY ${JSON.stringify(summary)}`);
    if (result.interrupted) return 130;
    const unfinished = result.stages.some(
      (s) => s.notSent !== undefined || (s.wait !== undefined && s.wait.ended !== BackfillWaitEnd.COMPLETE),
    );
    return unfinished ? 1 : 0;
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

/** `--downstream-queue STAGE=URL`, repeatable: the queues of downstream stages without a stack. */
function downstreamQueueOption(values: OptionValues): Map<string, string> {
  const given = values['downstream-queue'];
  const list = Array.isArray(given) ? given : typeof given === 'string' ? [given] : [];
  const map = new Map<string, string>();
  for (const item of list) {
    const at = String(item).indexOf('=');
    if (at <= 0 || at === String(item).length - 1) {
      throw new CliUsageError(`--downstream-queue takes STAGE=URL (got "${String(item)}").`);
    }
    map.set(String(item).slice(0, at), String(item).slice(at + 1));
  }
  return map;
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

function describeStagePlan(plan: WindowStagePlan, dryRun: boolean): string {
  const lines = [
    `Stage ${plan.stage}${plan.upstream ? ` (reads ${plan.upstream})` : ''}, windows ${plan.range.from}..` +
      `${plan.range.to}: ${formatStatusCounts(plan.counts)}.`,
    `${plan.tasks.length} window(s) to ${dryRun ? 'enqueue (dry run: nothing is sent)' : 'enqueue'}.`,
  ];
  if (plan.tasks.length === 0) return `${lines.join('\n')}\n`;
  const planned = new Map(plan.tasks.map((t) => [t.window, t]));
  const shown = plan.windows
    .filter((w) => planned.has(w.window))
    .slice(0, PLAN_LINES)
    .map((w) => ({ ...w, reason: planned.get(w.window)?.reason ?? w.reason }));
  const more = plan.tasks.length - shown.length;
  const tableText = formatWindowStageStatus({ windows: shown, skipped: { count: 0, first: [] } });
  return `${lines.join('\n')}\n${tableText}${more > 0 ? `... and ${more} more (--json lists all)\n` : ''}`;
}

function describeEnd(result: WindowBackfillResult, from: string, to: string): string {
  const planned = result.stages.reduce((n, s) => n + s.tasks.length, 0);
  if (result.dryRun) return `Dry run: ${planned} task(s) would be enqueued.\n`;
  if (planned === 0 && result.stages.every((s) => s.notSent === undefined)) {
    return 'Nothing to do: every window of the range is up to date for this mode.\n';
  }
  const lines: string[] = [];
  for (const s of result.stages) {
    if (s.notSent !== undefined) {
      lines.push(`${s.stage}: ${s.notSent}; run the same backfill again once it is.`);
      continue;
    }
    const sent = `${s.stage}: enqueued ${s.enqueued}/${s.tasks.length}.`;
    const w = s.wait;
    if (!w) {
      lines.push(`${sent}${result.interrupted ? ' Interrupted: run the same backfill again to resume.' : ''}`);
      continue;
    }
    if (w.ended === BackfillWaitEnd.COMPLETE) {
      lines.push(`${sent} All ${w.total} window(s) published in ${Math.round(w.elapsedMs / 1000)} s.`);
    } else if (w.ended === BackfillWaitEnd.INCOMPLETE) {
      lines.push(`${sent} The queue is drained but ${w.remaining.length} window(s) are not published:`);
      for (const r of w.remaining) lines.push(`  ${r.window} ${r.status}: ${r.reason}`);
      lines.push(
        w.deadLettered > 0
          ? `${w.deadLettered} message(s) reached the stage's DLQ: rerun redrive --queue <its URL> --dry-run shows why.`
          : 'Their inputs changed after their task ran: run the backfill again.',
      );
    } else if (w.ended === BackfillWaitEnd.TIMEOUT) {
      lines.push(`${sent} Timed out with ${w.published}/${w.total} published; the tasks keep running.`);
    } else {
      lines.push(`${sent} Stopped waiting (${w.published}/${w.total} published); the tasks keep running.`);
    }
  }
  if (!result.stages.some((s) => s.wait)) {
    lines.push(`Follow with: rerun status --stage ${result.stages[0]?.stage} --from ${from} --to ${to}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The SUMMARY line's document: per stage what was planned and sent, with the requests it cost. */
function windowBackfillSummary(result: WindowBackfillResult, stage: string, from: string, to: string) {
  return {
    stage,
    from,
    to,
    mode: result.mode,
    dryRun: result.dryRun,
    token: result.token,
    planned: result.stages.reduce((n, s) => n + s.tasks.length, 0),
    enqueued: result.stages.reduce((n, s) => n + s.enqueued, 0),
    interrupted: result.interrupted,
    stages: result.stages.map((s) => ({
      stage: s.stage,
      windows: s.windows.length,
      planned: s.tasks.length,
      enqueued: s.enqueued,
      requests: { ...s.requests, send: s.sendRequests },
      ...(s.wait
        ? { waited: s.wait.ended, published: s.wait.published, polls: s.wait.polls, waitRequests: s.wait.requests }
        : {}),
      ...(s.notSent !== undefined ? { notSent: s.notSent } : {}),
    })),
  };
}
