import { RerunError } from '../../src/errors.js';
import { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import { type CliIo, CliUsageError } from '../common/command.js';
import { explainAwsError } from '../common/pipelineResources.js';
import type { WindowPlanningStage } from '../common/pipelineStage.js';
import { type PipelineTarget, reportCommandError, requireOutputBucket } from '../common/pipelineTarget.js';
import { windowStageRange } from '../common/windowStageRange.js';
import { S3PartitionStore } from '../partition/S3PartitionStore.js';
import type { StatusEvents } from './statusEvents.js';
import type { StatusRequest } from './statusRequest.js';
import { windowStageStatus } from './windowStageStatus.js';
import { windowStageInputRules, windowStageTask } from './windowStageTask.js';

/**
 * `rerun status` of a window stage of the user's pipeline: each window of the range, by its own
 * scheme (app/status/windowStageStatus.ts), told to `emit` (statusEvents.ts) to be rendered as a
 * table and a SUMMARY line, or with --json the whole report. Exit 0; a usage error for --prefix or --verify.
 *
 * @example
 * return windowStageStatusReport(request, io, target, stage, statusConsole({ io, json, liveLine }));
 */
export async function windowStageStatusReport(
  request: StatusRequest,
  io: CliIo,
  target: PipelineTarget,
  stage: WindowPlanningStage,
  emit: StatusEvents,
): Promise<number> {
  let task: ReturnType<typeof windowStageTask>;
  try {
    task = windowStageTask(stage, target);
  } catch (error) {
    return reportCommandError(error, io, 'status', request.json);
  }
  if (request.prefix !== undefined || request.verify) {
    throw new CliUsageError(
      `--prefix and --verify judge an object stage's inputs, and stage "${stage.name}" of ${stage.from} is a window ` +
        'stage: its status judges each window of --from..--to. Drop them.',
    );
  }
  const { from, to, windows, forms } = windowStageRange(task, stage.name, request);
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
      ...(request.validate ? { validateWith: new S3ObjectStore(target.clients.s3) } : {}),
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
    emit({ kind: 'judged', judged: { of: 'windowStage', forms, report } });
    emit({ kind: 'end', code: 0, judged: { of: 'windowStage', forms, report } });
    return 0;
  } catch (error) {
    return reportCommandError(error, io, 'status', request.json);
  }
}
