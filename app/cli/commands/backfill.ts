import { BackfillMode, type BackfillPlan, parseBackfillMode } from '../../backfill/planBackfill.js';
import { runBackfill } from '../../backfill/runBackfill.js';
import { windowStageBackfill } from '../../backfill/windowStageBackfill.js';
import { SUMMARIZE_CODE_VERSION } from '../../partition/codeVersion.js';
import { S3PartitionStore } from '../../partition/S3PartitionStore.js';
import { summaryLayout } from '../../partition/summaryLayout.js';
import { type PublishedRun, withPublishedRun } from '../../runs/runProgressFile.js';
import {
  type CliCommand,
  type CliIo,
  type CliOption,
  CliUsageError,
  integerOption,
  type OptionValues,
  writeResult,
} from '../../shared/command.js';
import { referenceInputRules } from '../../shared/inputRules.js';
import { explainAwsError } from '../../shared/pipelineResources.js';
import { defaultWindowStage, resolveStage, stageOptions } from '../../shared/pipelineStage.js';
import {
  emptyWindowHint,
  type PipelineTarget,
  reportCommandError,
  requireOutputBucket,
  requireWindow,
  stringOption,
  targetOptions,
  targetOrExit,
  workerQueueUrl,
} from '../../shared/pipelineTarget.js';
import { isProgressStep, renderProgressBar } from '../../shared/progressBar.js';
import { BackfillWaitEnd } from '../../shared/waitEnd.js';
import { formatStatusCounts, formatStatusTable } from '../../status/formatStatusTable.js';
import { liveLine } from '../liveLine.js';

/** Most task lines printed in a plan (the JSON output always has them all). */
const PLAN_LINES = 40;

/** `rerun backfill`: a controlled rerun of the daily summaries of an older window. */
export const command: CliCommand = {
  name: 'backfill',
  summary:
    "Rerun the windows of a window stage (rerun's daily summaries or yours): plan, enqueue what is needed, optionally wait.",
  usage:
    'rerun backfill --from YYYY-MM-DD --to YYYY-MM-DD [--mode missing|stale|all] [--dry-run] [--rate N] [--wait] [options]\n' +
    '       rerun backfill --stage WINDOW-STAGE --from W --to W [--downstream] [--mode ...] [--dry-run] [--wait] [options]',
  options: {
    from: {
      type: 'string',
      valueName: 'W',
      description: "First window (UTC, included), in the stage's grain: a day YYYY-MM-DD for rerun's summaries",
    },
    to: { type: 'string', valueName: 'W', description: 'Last window (UTC, included)' },
    mode: {
      type: 'string',
      valueName: 'MODE',
      description: 'missing: unpublished days; stale (default): also stale and invalid ones; all: every day',
    },
    'dry-run': { type: 'boolean', description: 'Print the plan, send nothing' },
    rate: { type: 'string', valueName: 'N', description: 'Enqueue at most N messages per second (default: no limit)' },
    wait: { type: 'boolean', description: 'Wait with a progress bar until the planned days are published' },
    timeout: { type: 'string', valueName: 'SECONDS', description: 'With --wait, give up after this long' },
    // Hidden (no description): the interval between progress checks, for tests and slow links.
    'poll-interval': { type: 'string', valueName: 'MS' },
    'queue-url': {
      type: 'string',
      valueName: 'URL',
      description:
        "Summarize queue (default: $RERUN_SUMMARY_QUEUE_URL or <app>-summarize-queue.fifo); with --stage, the stage's " +
        'queue (default: its <Stage>WindowQueueUrl stack output)',
    },
    'dlq-url': {
      type: 'string',
      valueName: 'URL',
      description:
        'Its DLQ, watched with --wait (default: $RERUN_SUMMARY_DLQ_URL or <app>-summarize-dlq.fifo; with --stage, ' +
        'its <Stage>WindowDeadLetterQueueUrl output, else not watched)',
    },
    stage: {
      type: 'string',
      valueName: 'NAME',
      description:
        "A window stage of your pipeline (--stack or --pipeline): its windows, in the stage's grain (default with " +
        "--stack: the stack's only window stage)",
    },
    pipeline: stageOptions.pipeline as CliOption,
    downstream: {
      type: 'boolean',
      description: 'With --stage: also every window stage that reads it, over the windows that intersect the range',
    },
    'downstream-queue': {
      type: 'string',
      multiple: true,
      valueName: 'STAGE=URL',
      description: "A downstream stage's queue, without a stack (default: its <Stage>WindowQueueUrl output)",
    },
    ...targetOptions,
  },
  details: `Planning lists the window's normalized outputs, quarantine objects and published summaries (no
per-partition HEAD) and compares each day's current lineage with the manifest marker of its summary.
Each planned day becomes one message {"type":"summarize","partition":"dt=D","lineageHash":...} on the
FIFO summarize queue, with MessageGroupId dt=D and MessageDeduplicationId dt=D:<lineageHash>.

Reruns: once a backfill has completed, the same backfill plans and sends nothing. An interrupted
backfill is resumed by running it again; tasks it already sent within the last 5 minutes are dropped by
SQS (same deduplication id), older duplicates are absorbed by the worker's done-check. Two backfills in
flight at once may send a task twice after 5 minutes: harmless, the second run finds it done.

A window stage of your own pipeline (--stage NAME, its description from --stack or --pipeline FILE):
the windows of --from..--to in the stage's grain (2026-12-05T13 hourly, 2026-12-05 daily, 2026-W49
weekly, 2026-12 monthly) are judged as rerun status judges them (listings only) and each planned
window becomes one window task message {"type":"rerun.window","stage":S,"window":W} on the stage's
FIFO queue, with MessageGroupId S/W and MessageDeduplicationId S/W:<run token>: a deliberate backfill
sends again even within SQS's 5-minute deduplication interval. With --downstream, every window stage
that reads S (transitively) is planned too, over its windows that intersect the range: a window is
planned when its mode selects it or when a window it reads is planned. With --wait each stage is sent
once every planned window of the stage it reads is published; without --wait all are sent at once, and
a downstream window built before its upstream one is stale afterwards, rebuilt by the next backfill.
Without --stage, --stack of your own pipeline backfills its only window stage and says so; a stack with
several window stages, or none, is refused by name. rerun's own stack backfills its daily summaries.

Exit: 0 done (or planned, without --wait); 1 when --wait ends with days not published (failed tasks go
to the DLQ: see rerun redrive --queue summarize) or times out, or a downstream stage was not sent
because its upstream did not publish; 130 when interrupted.

Examples:
  rerun backfill --from 2026-01-01 --to 2026-01-30 --dry-run
  rerun backfill --from 2026-01-01 --to 2026-01-30 --mode all --rate 20 --wait
  rerun backfill --stack rerun --from 2026-01-01 --to 2026-01-30 --wait
  rerun backfill --stack Uploads --stage daily --from 2026-12-01 --to 2026-12-07 --dry-run
  rerun backfill --stack Uploads --stage daily --from 2026-12-01 --to 2026-12-07 --downstream --wait`,
  async run({ values }, io) {
    const modeText = stringOption(values, 'mode') ?? BackfillMode.STALE;
    const mode = parseBackfillMode(modeText);
    if (!mode) throw new CliUsageError(`--mode must be missing, stale or all (got "${modeText}").`);
    const defaulted = await withDefaultStage(values, io);
    if (typeof defaulted === 'number') return defaulted;
    let staged = defaulted.target;
    const stageValues = defaulted.values;
    if (stringOption(stageValues, 'stage') !== undefined || stringOption(stageValues, 'pipeline') !== undefined) {
      const target = staged ?? (await targetOrExit(values, io, 'backfill'));
      if (typeof target === 'number') return target;
      staged = target;
      let stage: Awaited<ReturnType<typeof resolveStage>>;
      try {
        stage = await resolveStage(target, stageValues);
      } catch (error) {
        return reportCommandError(error, io, 'backfill', values.json === true);
      }
      if (!('window' in stage)) {
        throw new CliUsageError(
          `stage "${stage.name}" of ${stage.from} is an object stage: a backfill reruns the windows of a window ` +
            `stage. Rerun an object stage's inputs with rerun reprocess --stage ${stage.name}.`,
        );
      }
      if (!stage.reference) return windowStageBackfill(stageValues, io, target, stage, mode);
    }
    if (values.downstream === true || values['downstream-queue'] !== undefined) {
      throw new CliUsageError(
        "--downstream needs --stage with a window stage of your pipeline (rerun's own daily summary has no stage downstream).",
      );
    }
    const { from, to } = requireWindow(values);
    const rate = integerOption(values, 'rate', { min: 1, max: 3000 });
    const timeoutSeconds = integerOption(values, 'timeout', { min: 1, max: 7 * 86_400 });
    const pollIntervalMs = integerOption(values, 'poll-interval', { min: 50, max: 600_000 });
    const json = values.json === true;
    // Progress and notes go to stderr; the plan and how the run ended are the result (stdout).
    const human = (text: string) => {
      if (!json) io.stderr(text);
    };
    const table = (text: string) => {
      if (!json) writeResult(io, text);
    };
    // rerun's own summary asked by --stage: the target resolved above serves.
    const target = staged ?? (await targetOrExit(values, io, 'backfill'));
    if (typeof target === 'number') return target;

    try {
      await requireOutputBucket(target);
      const dryRun = values['dry-run'] === true;
      const queueUrl = await workerQueueUrl(
        target,
        target.topology.summarize,
        'queue',
        stringOption(values, 'queue-url'),
        io.env,
      );
      const dlqUrl = values.wait
        ? await workerQueueUrl(target, target.topology.summarize, 'dlq', stringOption(values, 'dlq-url'), io.env)
        : undefined;
      const label = `backfill ${from}..${to} (mode ${mode}${dryRun ? ', dry run' : ''})`;
      return await withPublishedRun({ command: 'backfill', label, target }, async (run) => {
        const progress = backfillProgress(io.isTTY, io.stderrColumns, human, run);
        const result = await runBackfill({
          reader: new S3PartitionStore(target.clients.s3),
          sqs: target.clients.sqs,
          bucket: target.outputBucket,
          layout: summaryLayout(target.inputBucket, target.topology),
          inputs: referenceInputRules(target),
          codeVersion: SUMMARIZE_CODE_VERSION,
          queueUrl,
          ...(dlqUrl ? { dlqUrl } : {}),
          from,
          to,
          mode,
          dryRun,
          ...(rate !== undefined ? { ratePerSecond: rate } : {}),
          wait: values.wait === true,
          ...(pollIntervalMs !== undefined ? { pollIntervalMs } : {}),
          ...(timeoutSeconds !== undefined ? { timeoutMs: timeoutSeconds * 1000 } : {}),
          signal: io.signal,
          onPlan: (plan) => {
            run.progress({ phase: 'planned', done: 0, total: plan.tasks.length, unit: 'days' });
            table(describePlan(plan, from, to, dryRun));
            human(emptyWindowHint(target, plan.partitions) ?? '');
          },
          onEnqueued: progress.onEnqueued,
          onProgress: progress.onProgress,
        }).catch((error: unknown) => {
          throw explainAwsError(error, {
            role: 'output bucket or summarize queue',
            name: `${target.outputBucket} / ${queueUrl}`,
            where: target.where,
            hint: 'Check the names and your permissions.',
          });
        });
        progress.close(result.enqueued > 0 && !result.wait);

        const ended = result.wait?.ended;
        const summary = backfillSummary(result, mode, dryRun);
        table(describeEnd(result, dryRun));
        if (!dryRun && result.enqueued > 0 && queueUrl.endsWith('.fifo')) {
          human(
            '(FIFO queue: SQS drops a task it already received in the last 5 minutes, e.g. from an interrupted run.)\n',
          );
        }
        if (json)
          io.stdout(JSON.stringify({ ...summary, counts: result.counts, tasks: result.tasks, wait: result.wait }));
        else io.stdout(`SUMMARY ${JSON.stringify(summary)}`);
        if (result.interrupted || ended === BackfillWaitEnd.INTERRUPTED) return 130;
        return ended === BackfillWaitEnd.INCOMPLETE || ended === BackfillWaitEnd.TIMEOUT ? 1 : 0;
      });
    } catch (error) {
      return reportCommandError(error, io, 'backfill', json);
    }
  },
};

/**
 * `--stack` without `--stage`: a user's stack backfills its only window stage, said so on stderr
 * (several or none are refused by name); rerun's own stack keeps its daily summary. Returns the
 * target it resolved (none without --stack) and the options with the stage chosen, or the exit code.
 */
async function withDefaultStage(
  values: OptionValues,
  io: CliIo,
): Promise<{ target?: PipelineTarget; values: OptionValues } | number> {
  if (stringOption(values, 'stage') !== undefined || stringOption(values, 'stack') === undefined) return { values };
  const target = await targetOrExit(values, io, 'backfill');
  if (typeof target === 'number') return target;
  try {
    const chosen = await defaultWindowStage(target, values);
    if (!chosen) return { target, values };
    io.stderr(chosen.note);
    return { target, values: { ...values, stage: chosen.name } };
  } catch (error) {
    return reportCommandError(error, io, 'backfill', values.json === true);
  }
}

/**
 * The progress lines of a backfill on stderr: one line redrawn in place on a terminal, a line per
 * step otherwise. `close` ends an open in-place line.
 */
function backfillProgress(
  isTTY: boolean,
  ttyColumns: number | undefined,
  human: (text: string) => void,
  run: PublishedRun,
) {
  let open = false;
  return {
    onEnqueued(sent: number, total: number): void {
      run.progress({ phase: 'enqueueing', done: sent, total, unit: 'days' });
      if (isTTY) human(liveLine(`enqueued ${renderProgressBar(sent, total)}`, ttyColumns));
      else if (isProgressStep(sent, total)) human(`enqueued ${sent}/${total}\n`);
    },
    onProgress(p: {
      published: number;
      total: number;
      queued: number;
      inFlight: number;
      deadLettered: number;
      elapsedMs: number;
    }): void {
      const { queued, inFlight, deadLettered } = p;
      run.progress({
        phase: 'waiting',
        done: p.published,
        total: p.total,
        unit: 'days published',
        figures: { queued, inFlight, deadLettered },
      });
      const line =
        `${renderProgressBar(p.published, p.total)} published | queued ${p.queued}, in flight ${p.inFlight}` +
        `${p.deadLettered > 0 ? `, dead-lettered ${p.deadLettered}` : ''} | ${Math.round(p.elapsedMs / 1000)} s`;
      if (isTTY) {
        human(liveLine(line, ttyColumns));
        open = true;
      } else {
        human(`${line}\n`);
      }
    },
    /** Ends the in-place line, if one is open (or the enqueue bar was drawn and nothing followed it). */
    close(enqueuedWithoutWait: boolean): void {
      if (open || (isTTY && enqueuedWithoutWait)) human('\n');
    },
  };
}

/** The SUMMARY line's document: what was planned and sent, and how the wait ended. */
function backfillSummary(result: Awaited<ReturnType<typeof runBackfill>>, mode: string, dryRun: boolean) {
  const ended = result.wait?.ended;
  return {
    from: result.from,
    to: result.to,
    mode,
    dryRun,
    planned: result.tasks.length,
    enqueued: result.enqueued,
    interrupted: result.interrupted,
    planRequests: result.planRequests,
    ...(result.wait
      ? {
          waited: ended,
          published: result.wait.published,
          notPublished: result.wait.remaining.length,
          deadLettered: result.wait.deadLettered,
          seconds: Math.round(result.wait.elapsedMs / 1000),
        }
      : {}),
  };
}

function describePlan(plan: BackfillPlan, from: string, to: string, dryRun: boolean): string {
  const lines = [
    `Window ${from}..${to}: ${formatStatusCounts(plan.counts)}.`,
    `Mode ${plan.mode}: ${plan.tasks.length} partition(s) to ${dryRun ? 'enqueue (dry run: nothing is sent)' : 'enqueue'}.`,
  ];
  if (plan.tasks.length === 0) return `${lines.join('\n')}\n`;
  const byDay = new Map(plan.partitions.map((p) => [p.day, p]));
  const shown = plan.tasks.slice(0, PLAN_LINES).flatMap((t) => {
    const p = byDay.get(t.day);
    return p ? [p] : [];
  });
  const more = plan.tasks.length - shown.length;
  return `${lines.join('\n')}\n${formatStatusTable(shown)}${more > 0 ? `... and ${more} more (--json lists all)\n` : ''}`;
}

function describeEnd(result: Awaited<ReturnType<typeof runBackfill>>, dryRun: boolean): string {
  if (dryRun) return `Dry run: ${result.tasks.length} task(s) would be enqueued.\n`;
  if (result.tasks.length === 0) return 'Nothing to do: every partition of the window is up to date for this mode.\n';
  if (result.interrupted) {
    return `Interrupted after enqueueing ${result.enqueued}/${result.tasks.length}: run the same backfill again to resume.\n`;
  }
  const sent = `Enqueued ${result.enqueued} task(s).`;
  const w = result.wait;
  if (!w) return `${sent} Follow with: rerun status --from ${result.from} --to ${result.to}\n`;
  const remaining = w.remaining.map((r) => `  dt=${r.day} ${r.status}: ${r.reason}\n`).join('');
  switch (w.ended) {
    case BackfillWaitEnd.COMPLETE:
      return `${sent} All ${w.total} partition(s) published in ${Math.round(w.elapsedMs / 1000)} s.\n`;
    case BackfillWaitEnd.INCOMPLETE:
      return (
        `${sent} The queue is drained but ${w.remaining.length} partition(s) are not published:\n${remaining}` +
        (w.deadLettered > 0
          ? `${w.deadLettered} message(s) reached the DLQ: rerun redrive --queue summarize --dry-run shows why.\n`
          : 'Their inputs changed after their task ran: run the backfill again.\n')
      );
    case BackfillWaitEnd.TIMEOUT:
      return `${sent} Timed out with ${w.published}/${w.total} published; the tasks keep running. Check with rerun status.\n`;
    default:
      return `${sent} Stopped waiting (${w.published}/${w.total} published); the tasks keep running.\n`;
  }
}
