import {
  WindowNameInvalidError,
  WindowRangeReversedError,
  WindowRangeTooLargeError,
} from '../../src/partitions/errors.js';
import type { PartitionWindow } from '../../src/partitions/partitionScheme.js';
import { WINDOW_NAME_FORMS } from '../../src/partitions/timeWindow.js';
import type { WindowTask } from '../../src/window/defineWindowTask.js';
import { CliUsageError } from './command.js';

/**
 * `--from` and `--to` of a window stage (as stringOption reads them) (`rerun status`, `rerun backfill`), read in the stage's own
 * scheme: the windows between them, or a CliUsageError that names the accepted form.
 *
 * @example
 * const { windows, forms } = windowStageRange(task, 'daily', { from: '2026-12-01', to: '2026-12-07' });
 */
export function windowStageRange(
  task: WindowTask<unknown, unknown>,
  stageName: string,
  range: { readonly from?: string | undefined; readonly to?: string | undefined },
): { from: string; to: string; windows: PartitionWindow[]; forms: string } {
  const { spec } = task.scheme;
  const forms = spec.kind === 'time' ? `${spec.grain}: ${WINDOW_NAME_FORMS[spec.grain]}` : `${spec.kind} partitions`;
  const { from, to } = range;
  if (from === undefined || to === undefined) {
    throw new CliUsageError(`--from and --to are required: the windows of stage "${stageName}" are ${forms}.`);
  }
  try {
    return { from, to, windows: task.scheme.windowsBetween(from, to), forms };
  } catch (error) {
    if (error instanceof WindowNameInvalidError) {
      throw new CliUsageError(`--from/--to: ${error.message} Stage "${stageName}" has ${forms} windows.`);
    }
    if (error instanceof WindowRangeReversedError || error instanceof WindowRangeTooLargeError) {
      throw new CliUsageError(error.message);
    }
    throw error;
  }
}
