import { RerunError } from '../../../src/errors.js';
import { S3BucketMissingError } from '../../../src/s3/errors.js';
import { S3ObjectStore } from '../../../src/s3/S3ObjectStore.js';
import { SUMMARIZE_CODE_VERSION } from '../../partition/codeVersion.js';
import { S3PartitionStore } from '../../partition/S3PartitionStore.js';
import { summaryLayout } from '../../partition/summaryLayout.js';
import { type CliCommand, type CliIo, CliUsageError, type OptionValues, writeResult } from '../../shared/command.js';
import { referenceInputRules } from '../../shared/inputRules.js';
import { explainAwsError, PipelineResourceError } from '../../shared/pipelineResources.js';
import {
  type PlanningStage,
  resolveStage,
  stageOptions,
  type WindowPlanningStage,
} from '../../shared/pipelineStage.js';
import {
  emptyWindowHint,
  type PipelineTarget,
  reportCommandError,
  requireOutputBucket,
  requireWindow,
  stringOption,
  targetOptions,
  targetOrExit,
} from '../../shared/pipelineTarget.js';
import { windowStageRange } from '../../shared/windowStageRange.js';
import { formatStatusCounts, formatStatusTable } from '../../status/formatStatusTable.js';
import { formatObjectStageStatus, objectStageStatus } from '../../status/objectStageStatus.js';
import { partitionStatus } from '../../status/partitionStatus.js';
import { formatWindowStageStatus, windowStageStatus } from '../../status/windowStageStatus.js';
import { windowStageInputRules, windowStageTask } from '../../status/windowStageTask.js';

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
    if ('window' in stage) {
      if (!stage.reference) return windowStageCommand(values, io, target, stage);
    } else if (!stage.reference) return objectStageCommand(values, io, target, stage, windowGiven);
    const { from, to } = requireWindow(values);
    try {
      await requireOutputBucket(target);
      const layout = summaryLayout(target.inputBucket, target.topology);
      const reader = new S3PartitionStore(target.clients.s3);
      const report = await partitionStatus({
        reader,
        bucket: target.outputBucket,
        layout,
        codeVersion: SUMMARIZE_CODE_VERSION,
        from,
        to,
        inputs: referenceInputRules(target),
        ...(values['no-validate'] ? {} : { validateWith: new S3ObjectStore(target.clients.s3) }),
      }).catch((error: unknown) => {
        // The inputs are listed too: a wrong input bucket is the common mistake with a deployed stack.
        if (error instanceof S3BucketMissingError && error.bucket === target.inputBucket) {
          throw new PipelineResourceError(
            `The input bucket "${target.inputBucket}" does not exist at ${target.where}. Check --input-bucket (or RERUN_INPUT_BUCKET, or --stack).`,
            { cause: error },
          );
        }
        throw explainAwsError(error, {
          role: 'output bucket',
          name: target.outputBucket,
          where: target.where,
          hint: 'Check the bucket name.',
        });
      });
      const result = {
        outputBucket: target.outputBucket,
        inputBucket: target.inputBucket,
        codeVersion: SUMMARIZE_CODE_VERSION,
        ...report,
      };
      if (values.json) {
        io.stdout(JSON.stringify(result));
      } else {
        // The table and its counts are the result: stdout (`rerun status | less`); the hint is a note.
        writeResult(io, formatStatusTable(report.partitions));
        io.stderr(emptyWindowHint(target, report.partitions) ?? '');
        writeResult(
          io,
          `${formatStatusCounts(report.counts)} (${report.requests.list} list + ${report.requests.head} HEAD requests)`,
        );
        io.stdout(`SUMMARY ${JSON.stringify({ from, to, ...report.counts, requests: report.requests })}`);
      }
      return 0;
    } catch (error) {
      return reportCommandError(error, io, 'status', values.json === true);
    }
  },
};

/** `rerun status` of an object stage of the user's pipeline: its inputs, current or to do. */
async function objectStageCommand(
  values: OptionValues,
  io: CliIo,
  target: PipelineTarget,
  stage: PlanningStage,
  windowGiven: boolean,
): Promise<number> {
  if (windowGiven) {
    throw new CliUsageError(
      `--from and --to select the windows of a window stage, and stage "${stage.name}" of ${stage.from} is an ` +
        'object stage: its status judges every input under --prefix (default: its input prefix). Drop --from and --to.',
    );
  }
  const prefix = stringOption(values, 'prefix') ?? stage.inputPrefix;
  if (!prefix.startsWith(stage.inputPrefix)) {
    throw new CliUsageError(
      `--prefix must start with the input prefix ${stage.inputPrefix} of stage "${stage.name}" (got "${prefix}").`,
    );
  }
  if (values.verify === true && !stage.codeVersion) {
    throw new CliUsageError(
      `--verify judges each output's code version, and stage "${stage.name}" of ${stage.from} declares none: add ` +
        "codeVersion (the worker's) to the stage in the pipeline and publish it again.",
    );
  }
  try {
    await requireOutputBucket(target);
    const status = await objectStageStatus(target, stage, {
      prefix,
      verify: values.verify === true,
      ...(io.signal ? { signal: io.signal } : {}),
    }).catch((error: unknown) => {
      if (RerunError.isRerunError(error)) throw error;
      throw explainAwsError(error, {
        role: 'input or output bucket',
        name: `${target.inputBucket} / ${target.outputBucket}`,
        where: target.where,
        hint: 'Check the names and your permissions (ListBucket on both buckets).',
      });
    });
    if (values.json) {
      io.stdout(JSON.stringify(status));
      return 0;
    }
    io.stderr(
      `Stage "${stage.name}" (${stage.from}): ${prefix} of ${target.inputBucket}. Note: ${status.codeVersion.note}.\n`,
    );
    writeResult(io, formatObjectStageStatus(status));
    const r = status.requests;
    writeResult(
      io,
      `${status.inputs} input(s): ${status.counts.current} current, ${status.toDo} to do` +
        `${status.toDo > 0 ? ' (rerun reprocess enqueues them)' : ''} (${r.list} list + ${r.head} HEAD requests)`,
    );
    io.stdout(
      `SUMMARY ${JSON.stringify({ stage: stage.name, prefix, inputs: status.inputs, toDo: status.toDo, ...status.counts, requests: r })}`,
    );
    return 0;
  } catch (error) {
    return reportCommandError(error, io, 'status', values.json === true);
  }
}

/** The window names --from and --to accept, by grain. */
const WINDOW_FORMS =
  "windows of the stage's grain: 2026-12-05 daily, 2026-12-05T13 hourly, 2026-W49 weekly, 2026-12 monthly";

/** `rerun status` of a window stage of the user's pipeline: each window of the range, by its own scheme. */
async function windowStageCommand(
  values: OptionValues,
  io: CliIo,
  target: PipelineTarget,
  stage: WindowPlanningStage,
): Promise<number> {
  let task: ReturnType<typeof windowStageTask>;
  try {
    task = windowStageTask(stage, target);
  } catch (error) {
    return reportCommandError(error, io, 'status', values.json === true);
  }
  if (values.prefix !== undefined || values.verify === true) {
    throw new CliUsageError(
      `--prefix and --verify judge an object stage's inputs, and stage "${stage.name}" of ${stage.from} is a window ` +
        'stage: its status judges each window of --from..--to. Drop them.',
    );
  }
  const { from, to, windows, forms } = windowStageRange(task, stage.name, values);
  try {
    await requireOutputBucket(target);
    const reader = new S3PartitionStore(target.clients.s3);
    const upstreamInputs = windowStageInputRules(stage, {
      inputBucket: target.inputBucket,
      failurePrefix: target.topology.failurePrefix,
    });
    const judged = await windowStageStatus(task, windows, {
      reader,
      ...(upstreamInputs ? { upstreamInputs } : {}),
      ...(values['no-validate'] ? {} : { validateWith: new S3ObjectStore(target.clients.s3) }),
    }).catch((error: unknown) => {
      if (RerunError.isRerunError(error)) throw error;
      throw explainAwsError(error, {
        role: 'input or output bucket',
        name: `${target.inputBucket} / ${target.outputBucket}`,
        where: target.where,
        hint: 'Check the names and your permissions (ListBucket on both buckets).',
      });
    });
    const report = { ...judged, from: stage.from, range: { from, to }, outputBucket: target.outputBucket };
    if (values.json) {
      io.stdout(JSON.stringify(report));
      return 0;
    }
    io.stderr(`Window stage "${stage.name}" (${stage.from}), ${forms}, code version ${report.codeVersion}.\n`);
    writeResult(io, formatWindowStageStatus(report));
    const skipped = report.skipped.count > 0 ? `, ${report.skipped.count} key(s) in no window skipped` : '';
    writeResult(
      io,
      `${formatStatusCounts(report.counts)}${skipped} (${report.requests.list} list + ${report.requests.head} HEAD requests)`,
    );
    io.stdout(
      `SUMMARY ${JSON.stringify({ stage: stage.name, from, to, ...report.counts, skipped: report.skipped.count, requests: report.requests })}`,
    );
    return 0;
  } catch (error) {
    return reportCommandError(error, io, 'status', values.json === true);
  }
}
