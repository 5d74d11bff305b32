import { S3BucketMissingError } from '../../src/s3/errors.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import type { CliIo } from '../common/command.js';
import { referenceInputRules } from '../common/inputRules.js';
import { explainAwsError, PipelineResourceError } from '../common/pipelineResources.js';
import {
  emptyWindowHint,
  type PipelineTarget,
  reportCommandError,
  requireOutputBucket,
  requireWindow,
} from '../common/pipelineTarget.js';
import { SUMMARIZE_CODE_VERSION } from '../partition/codeVersion.js';
import { S3PartitionStore } from '../partition/S3PartitionStore.js';
import { summaryLayout } from '../partition/summaryLayout.js';
import { partitionStatus } from './partitionStatus.js';
import type { StatusEvents } from './statusEvents.js';
import type { StatusRequest } from './statusRequest.js';

/**
 * `rerun status` of rerun's daily summaries: each day of --from..--to (app/status/partitionStatus.ts),
 * told to `emit` (statusEvents.ts) to be rendered as a table on stdout, a hint on stderr when the
 * window is empty, and a SUMMARY line, or with --json the whole report. Exit 0.
 *
 * @example
 * return summaryStatusReport(request, io, target, statusConsole({ io, json, liveLine }));
 */
export async function summaryStatusReport(
  request: StatusRequest,
  io: CliIo,
  target: PipelineTarget,
  emit: StatusEvents,
): Promise<number> {
  const { from, to } = requireWindow({ from: request.from, to: request.to });
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
      ...(request.validate ? { validateWith: new S3ObjectStore(target.clients.s3) } : {}),
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
    const judged = {
      of: 'summaries',
      report: {
        outputBucket: target.outputBucket,
        inputBucket: target.inputBucket,
        codeVersion: SUMMARIZE_CODE_VERSION,
        ...report,
      },
      hint: emptyWindowHint(target, report.partitions),
    } as const;
    emit({ kind: 'judged', judged });
    emit({ kind: 'end', code: 0, judged });
    return 0;
  } catch (error) {
    return reportCommandError(error, io, 'status', request.json);
  }
}
