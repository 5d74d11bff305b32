import { RerunError } from '../../../src/errors.js';
import { S3BucketMissingError } from '../../../src/s3/errors.js';
import { S3ObjectStore } from '../../../src/s3/S3ObjectStore.js';
import { SUMMARIZE_CODE_VERSION } from '../../partition/codeVersion.js';
import { S3PartitionStore } from '../../partition/S3PartitionStore.js';
import { summaryLayout } from '../../partition/summaryLayout.js';
import { formatStatusCounts, formatStatusTable } from '../../status/formatStatusTable.js';
import { formatObjectStageStatus, objectStageStatus } from '../../status/objectStageStatus.js';
import { partitionStatus } from '../../status/partitionStatus.js';
import { explainAwsError, PipelineResourceError } from '../../status/pipelineResources.js';
import { type CliCommand, type CliIo, CliUsageError, type OptionValues, writeResult } from '../command.js';
import { referenceInputRules } from '../inputRules.js';
import { type PlanningStage, resolvePlanningStage, stageOptions } from '../pipelineStage.js';
import {
  emptyWindowHint,
  type PipelineTarget,
  reportCommandError,
  requireOutputBucket,
  requireWindow,
  stringOption,
  targetOptions,
  targetOrExit,
} from '../pipelineTarget.js';

/** `rerun status`: per-partition state of the daily summaries in a window. */
export const command: CliCommand = {
  name: 'status',
  summary:
    "Show each daily partition of a window (published, missing, stale, invalid or incomplete), or an object stage's inputs (current or to do).",
  usage:
    'rerun status --from YYYY-MM-DD --to YYYY-MM-DD [--no-validate] [--json] [options]\n' +
    '       rerun status --stage NAME [--prefix PREFIX] [--verify] [--json] [options]',
  options: {
    from: { type: 'string', valueName: 'DAY', description: 'First day of the window (UTC, included)' },
    to: { type: 'string', valueName: 'DAY', description: 'Last day of the window (UTC, included)' },
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
        'List only: skip the HEAD that verifies each published summary (no "invalid" detection beyond ETags)',
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
  RERUN_OUTPUT_BUCKET=... RERUN_INPUT_BUCKET=... rerun status --from 2026-01-01 --to 2026-01-31 --json`,
  async run({ values }, io) {
    // A window given is checked before anything is looked up; whether one is needed depends on the stage.
    const window = values.from !== undefined || values.to !== undefined ? requireWindow(values) : undefined;
    const target = await targetOrExit(values, io, 'status');
    if (typeof target === 'number') return target;
    let stage: PlanningStage;
    try {
      stage = await resolvePlanningStage(target, values);
    } catch (error) {
      return reportCommandError(error, io, 'status', values.json === true);
    }
    if (!stage.reference) return objectStageCommand(values, io, target, stage, window !== undefined);
    const { from, to } = window ?? requireWindow(values);
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
      `--from and --to select the windows of rerun's daily summaries, and stage "${stage.name}" of ${stage.from} is an ` +
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
