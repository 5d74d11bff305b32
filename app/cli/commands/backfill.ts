import { backfillConsole } from '../../backfill/backfillConsole.js';
import { parseDownstreamQueues } from '../../backfill/downstreamQueues.js';
import { BackfillMode, parseBackfillMode } from '../../backfill/planBackfill.js';
import { summaryBackfill } from '../../backfill/summaryBackfill.js';
import { windowStageBackfill } from '../../backfill/windowStageBackfill.js';
import {
  type CliCommand,
  type CliIo,
  type CliOption,
  CliUsageError,
  integerOption,
  type OptionValues,
} from '../../common/command.js';
import { defaultWindowStage, resolveStage, stageOptions } from '../../common/pipelineStage.js';
import {
  type PipelineTarget,
  reportCommandError,
  requireWindow,
  stringOption,
  targetOptions,
  targetOrExit,
} from '../../common/pipelineTarget.js';
import { liveLine } from '../liveLine.js';

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
    const asked = {
      mode,
      dryRun: values['dry-run'] === true,
      rate: integerOption(values, 'rate', { min: 1, max: 3000 }),
      wait: values.wait === true,
      timeoutSeconds: integerOption(values, 'timeout', { min: 1, max: 7 * 86_400 }),
      pollIntervalMs: integerOption(values, 'poll-interval', { min: 50, max: 600_000 }),
      queueUrl: stringOption(values, 'queue-url'),
      dlqUrl: stringOption(values, 'dlq-url'),
      json: values.json === true,
    };
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
      if (!stage.reference) {
        const request = {
          ...asked,
          from: stringOption(values, 'from'),
          to: stringOption(values, 'to'),
          downstream: values.downstream === true,
          downstreamQueues: parseDownstreamQueues(values['downstream-queue']),
        };
        return windowStageBackfill(request, io, target, stage, (run) =>
          backfillConsole({ io, json: asked.json, run, liveLine }),
        );
      }
    }
    if (values.downstream === true || values['downstream-queue'] !== undefined) {
      throw new CliUsageError(
        "--downstream needs --stage with a window stage of your pipeline (rerun's own daily summary has no stage downstream).",
      );
    }
    const { from, to } = requireWindow(values);
    // rerun's own summary asked by --stage: the target resolved above serves.
    const target = staged ?? (await targetOrExit(values, io, 'backfill'));
    if (typeof target === 'number') return target;
    const request = { ...asked, from, to };
    return summaryBackfill(target, request, io, (run) => backfillConsole({ io, json: asked.json, run, liveLine }));
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
