/**
 * rerun's window tasks (`import ... from 'rerun-pipeline/window'`): partition schemes of any grain
 * (hourly, daily, ISO weekly, monthly windows read from a key template; static lists; none), the
 * mappings between them (a day on its 24 hours), and the errors they throw.
 * test/unit/publicSurface.test.ts pins this list.
 *
 * @example
 * import { partitionScheme, windowsIntersecting } from 'rerun-pipeline/window';
 * const daily = partitionScheme({ kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' });
 */

export {
  PartitionKeysInvalidError,
  PartitionTemplateInvalidError,
  WindowMappingUnsupportedError,
  WindowNameInvalidError,
  WindowRangeReversedError,
  WindowRangeTooLargeError,
} from '../partitions/errors.js';
export { windowsIntersecting } from '../partitions/mapWindows.js';
export {
  MAX_RANGE_WINDOWS,
  type PartitionScheme,
  type PartitionWindow,
  partitionScheme,
  type StaticWindow,
  type TimePartitionScheme,
  type WholeWindow,
  type WindowRangeOptions,
  type WindowReading,
} from '../partitions/partitionScheme.js';
export {
  type PartitionSpec,
  type StaticPartitionSpec,
  TimeGrain,
  type TimePartitionSpec,
  type UnpartitionedSpec,
} from '../partitions/partitionSpec.js';
export type { TimeWindow } from '../partitions/timeWindow.js';
