import { type CliCommand, CliUsageError } from '../../common/command.js';
import {
  type PlanningStage,
  resolveStage,
  stageOptions,
  type WindowPlanningStage,
} from '../../common/pipelineStage.js';
import { reportCommandError, stringOption, targetOptions, targetOrExit } from '../../common/pipelineTarget.js';
import { objectStageStatusReport } from '../../status/objectStageStatusReport.js';
import { statusConsole } from '../../status/statusConsole.js';
import type { StatusRequest } from '../../status/statusRequest.js';
import { summaryStatusReport } from '../../status/summaryStatusReport.js';
import { windowStageStatusReport } from '../../status/windowStageStatusReport.js';
import { liveLine } from '../liveLine.js';

/** `rerun status`: per-window state of a window stage (rerun's daily summaries or the user's), or an object stage's inputs. */
export const command: CliCommand = {
  name: 'status',
  summary:
    "Show each window of a window stage (published, missing, stale, invalid or incomplete), or an object stage's inputs (current or to do).",
  usage:
    'rerun status --from YYYY-MM-DD --to YYYY-MM-DD [--no-validate] [--json] [options]\n' +
    '       rerun status --stage WINDOW-STAGE --from W --to W [--no-validate] [--json] [options]\n' +
    '       rerun status --stage NAME [--prefix PREFIX] [--verify] [--json] [options]',
  options: {
    from: {
      type: 'string',
      valueName: 'W',
      description: "First window (UTC, included), in the stage's grain: a day YYYY-MM-DD for rerun's summaries",
    },
    to: { type: 'string', valueName: 'W', description: 'Last window (UTC, included), in the same form' },
    prefix: {
      type: 'string',
      valueName: 'PREFIX',
      description: "An object stage: the input prefix to judge (default: the stage's input prefix)",
    },
    verify: {
      type: 'boolean',
      description: 'An object stage: also run the done-check (one HEAD) on every output that looks current',
    },
    'no-validate': {
      type: 'boolean',
      description:
        'List only: skip the HEAD that verifies each published window output (no "invalid" detection beyond ETags)',
    },
    ...targetOptions,
    ...stageOptions,
  },
  details: `States: published (its manifest names the current inputs and code version), missing (never
published), stale (inputs or code changed since, or its publish was interrupted), invalid (the object is
not what rerun published: replaced, truncated, or failing its checksum).

An object stage of your own pipeline (its description from --stack or --pipeline FILE; --stage NAME
where it has several): every input under --prefix is judged by the stage's published key rule as
rerun reprocess --dry-run plans it: current (done), missing, stale (its output was built from other
bytes), invalid (not an intact rerun output) or old-code (older than the code version's first run). An
input newer than its output costs one HEAD of the output, whose recorded source ETag decides; --verify
HEADs every output.
It sends and writes nothing; rerun reprocess enqueues what is to do.

A window stage of your own pipeline (--stage NAME): every window of --from..--to, by the stage's
own scheme. W is a window of its grain: 2026-12-05T13 hourly, 2026-12-05 daily, 2026-W49 weekly
(ISO), 2026-12 monthly, or a name of a static list; any other form is refused (exit 2). It lists
each window's inputs (the upstream stage's outputs in it) and its output folder: published,
missing, stale (an upstream output added, removed or rebuilt since its publish: status propagates
downstream), invalid, or incomplete (over an object stage: some of its inputs in the window have no
current output yet). Keys in no window are counted as skipped, each with its reason. The stage
needs fileName in its description; a stage over a custom key rule is refused.

The check of the daily summaries lists the window's normalized outputs, quarantine objects and
summaries (about one request per 1000 objects); with validation it also HEADs each published summary. stdout: SUMMARY {json}, or with
--json the whole report.

Target: AWS_ENDPOINT_URL (an emulator, e.g. the endpoint rerun dev prints) or the default AWS credential
chain; resources from the options, the outputs of the stack named by --stack, RERUN_* variables
(docs/DEPLOY.md) or the app name.

Examples:
  rerun status --from 2026-01-01 --to 2026-01-31
  rerun status --stack rerun --from 2026-01-01 --to 2026-01-31
  rerun status --stack Uploads --stage upper --verify
  rerun status --stack Uploads --stage daily --from 2026-12-01 --to 2026-12-07
  rerun status --pipeline pipeline.json --stage hourly --from 2026-12-05T00 --to 2026-12-05T23
  RERUN_OUTPUT_BUCKET=... RERUN_INPUT_BUCKET=... rerun status --from 2026-01-01 --to 2026-01-31 --json`,
  async run({ values }, io) {
    // --from and --to go together; their form depends on the stage's grain, read from its description.
    const windowGiven = values.from !== undefined || values.to !== undefined;
    if (windowGiven && (stringOption(values, 'from') === undefined || stringOption(values, 'to') === undefined)) {
      throw new CliUsageError(`--from and --to are required together (${WINDOW_FORMS}).`);
    }
    const target = await targetOrExit(values, io, 'status');
    if (typeof target === 'number') return target;
    let stage: PlanningStage | WindowPlanningStage;
    try {
      stage = await resolveStage(target, values);
    } catch (error) {
      return reportCommandError(error, io, 'status', values.json === true);
    }
    const request: StatusRequest = {
      from: stringOption(values, 'from'),
      to: stringOption(values, 'to'),
      prefix: typeof values.prefix === 'string' ? values.prefix : undefined,
      verify: values.verify === true,
      validate: values['no-validate'] !== true,
      json: values.json === true,
    };
    const emit = statusConsole({ io, json: request.json, liveLine });
    if ('window' in stage) {
      if (!stage.reference) return windowStageStatusReport(request, io, target, stage, emit);
    } else if (!stage.reference) return objectStageStatusReport(request, io, target, stage, emit);
    return summaryStatusReport(request, io, target, emit);
  },
};

/** The window names --from and --to accept, by grain. */
const WINDOW_FORMS =
  "windows of the stage's grain: 2026-12-05 daily, 2026-12-05T13 hourly, 2026-W49 weekly, 2026-12 monthly";
