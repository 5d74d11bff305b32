import { RerunError } from '../../src/errors.js';
import { type CliIo, CliUsageError } from '../common/command.js';
import { explainAwsError } from '../common/pipelineResources.js';
import type { PlanningStage } from '../common/pipelineStage.js';
import { type PipelineTarget, reportCommandError, requireOutputBucket } from '../common/pipelineTarget.js';
import { objectStageStatus } from './objectStageStatus.js';
import type { StatusEvents } from './statusEvents.js';
import type { StatusRequest } from './statusRequest.js';

/**
 * `rerun status` of an object stage of the user's pipeline: its inputs, current or to do
 * (app/status/objectStageStatus.ts), told to `emit` (statusEvents.ts) to be rendered as a table
 * and a SUMMARY line, or with --json the whole report. Exit 0; a usage error for --from/--to, a --prefix outside the stage, or --verify
 * without a code version.
 *
 * @example
 * return objectStageStatusReport(request, io, target, stage, statusConsole({ io, json, liveLine }));
 */
export async function objectStageStatusReport(
  request: StatusRequest,
  io: CliIo,
  target: PipelineTarget,
  stage: PlanningStage,
  emit: StatusEvents,
): Promise<number> {
  if (request.from !== undefined || request.to !== undefined) {
    throw new CliUsageError(
      `--from and --to select the windows of a window stage, and stage "${stage.name}" of ${stage.from} is an ` +
        'object stage: its status judges every input under --prefix (default: its input prefix). Drop --from and --to.',
    );
  }
  const prefix = request.prefix || stage.inputPrefix;
  if (!prefix.startsWith(stage.inputPrefix)) {
    throw new CliUsageError(
      `--prefix must start with the input prefix ${stage.inputPrefix} of stage "${stage.name}" (got "${prefix}").`,
    );
  }
  if (request.verify && !stage.codeVersion) {
    throw new CliUsageError(
      `--verify judges each output's code version, and stage "${stage.name}" of ${stage.from} declares none: add ` +
        "codeVersion (the worker's) to the stage in the pipeline and publish it again.",
    );
  }
  try {
    await requireOutputBucket(target);
    const status = await objectStageStatus(target, stage, {
      prefix,
      verify: request.verify,
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
    emit({ kind: 'judged', judged: { of: 'objectStage', report: status } });
    emit({ kind: 'end', code: 0, judged: { of: 'objectStage', report: status } });
    return 0;
  } catch (error) {
    return reportCommandError(error, io, 'status', request.json);
  }
}
