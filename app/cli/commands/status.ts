import { S3BucketMissingError } from '../../../src/s3/errors.js';
import { S3ObjectStore } from '../../../src/s3/S3ObjectStore.js';
import { SUMMARIZE_CODE_VERSION } from '../../partition/codeVersion.js';
import { S3PartitionStore } from '../../partition/S3PartitionStore.js';
import { summaryLayout } from '../../partition/summaryLayout.js';
import { formatStatusCounts, formatStatusTable } from '../../status/formatStatusTable.js';
import { partitionStatus } from '../../status/partitionStatus.js';
import { explainAwsError, PipelineResourceError } from '../../status/pipelineResources.js';
import { type CliCommand, writeResult } from '../command.js';
import { referenceInputRules } from '../inputRules.js';
import { resolvePlanningStage, StageKeyRuleUnknownError, stageOptions } from '../pipelineStage.js';
import {
  emptyWindowHint,
  reportCommandError,
  requireOutputBucket,
  requireWindow,
  targetOptions,
  targetOrExit,
} from '../pipelineTarget.js';

/** `rerun status`: per-partition state of the daily summaries in a window. */
export const command: CliCommand = {
  name: 'status',
  summary:
    'Show each daily partition of a window: published, missing, stale, invalid or incomplete (inputs without outputs).',
  usage: 'rerun status --from YYYY-MM-DD --to YYYY-MM-DD [--no-validate] [--json] [options]',
  options: {
    from: { type: 'string', valueName: 'DAY', description: 'First day of the window (UTC, included)' },
    to: { type: 'string', valueName: 'DAY', description: 'Last day of the window (UTC, included)' },
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

The check lists the window's normalized outputs, quarantine objects and summaries (about one request per
1000 objects); with validation it also HEADs each published summary. stdout: SUMMARY {json}, or with
--json the whole report.

Target: AWS_ENDPOINT_URL (an emulator, e.g. the endpoint rerun dev prints) or the default AWS credential
chain; resources from the options, the outputs of the stack named by --stack, RERUN_* variables
(docs/DEPLOY.md) or the app name.

Examples:
  rerun status --from 2026-01-01 --to 2026-01-31
  rerun status --stack rerun --from 2026-01-01 --to 2026-01-31
  RERUN_OUTPUT_BUCKET=... RERUN_INPUT_BUCKET=... rerun status --from 2026-01-01 --to 2026-01-31 --json`,
  async run({ values }, io) {
    const { from, to } = requireWindow(values);
    const target = await targetOrExit(values, io, 'status');
    if (typeof target === 'number') return target;
    try {
      // Days are judged by the normalize stage's key rules: read them as the pipeline describes them.
      const stage = await resolvePlanningStage(target, values);
      if (!stage.reference) {
        throw new StageKeyRuleUnknownError(
          `rerun status judges the daily summaries of rerun's reference pipeline over its normalize stage, and stage ` +
            `"${stage.name}" of ${stage.from} is not that stage: status of your own stages' windows is not there yet, ` +
            'and judging them by the reference layout would be wrong. rerun reprocess --dry-run plans this stage.',
        );
      }
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
