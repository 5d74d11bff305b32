import { RerunError } from '../../src/errors.js';
import { type CliIo, CliUsageError, type OptionValues, writeResult } from '../common/command.js';
import { explainAwsError } from '../common/pipelineResources.js';
import type { PlanningStage } from '../common/pipelineStage.js';
import {
  type PipelineTarget,
  reportCommandError,
  requireOutputBucket,
  stringOption,
} from '../common/pipelineTarget.js';
import { formatObjectStageStatus, objectStageStatus } from './objectStageStatus.js';

/**
 * `rerun status` of an object stage of the user's pipeline: its inputs, current or to do
 * (app/status/objectStageStatus.ts), as a table on stdout and a SUMMARY line, or with --json the
 * whole report. Exit 0; a usage error for --from/--to, a --prefix outside the stage, or --verify
 * without a code version.
 *
 * @example
 * return objectStageStatusReport(values, io, target, stage, false);
 */
export async function objectStageStatusReport(
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
