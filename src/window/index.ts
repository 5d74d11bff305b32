/**
 * rerun's window tasks (`import ... from 'rerun-pipeline/window'`): defineWindowTask, a task that
 * owns one window of one stage (you write the build; rerun does the lineage, the done-check, the
 * staging, the validation, the conditional publish, the marker and the judge); the partition schemes
 * of any grain it reads (hourly, daily, ISO weekly, monthly windows read from a key template; static
 * lists; none), the mappings between them (a day on its 24 hours), and the errors they throw.
 * test/unit/publicSurface.test.ts pins this list.
 *
 * @example
 * import { defineWindowTask, partitionScheme } from 'rerun-pipeline/window';
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
export { type GetExactResult, type ListedObject, type ListOptions, S3PartitionStore } from '../s3/S3PartitionStore.js';
export {
  createWindowTaskHandler,
  type WindowTaskHandlerOptions,
  windowRetryDelaySeconds,
} from './createWindowTaskHandler.js';
export { defineWindowTask, type WindowTask } from './defineWindowTask.js';
export {
  WindowOutputInvalidError,
  WindowPartsPendingError,
  WindowTaskConfigurationError,
  WindowTaskMessageInvalidError,
  WindowTooLargeError,
} from './errors.js';
export { judgeWindow, type WindowListing, WindowStatus, type WindowVerdict } from './judgeWindow.js';
export { type WindowOutputJudgement, WindowOutputState } from './judgeWindowHead.js';
export type { WindowStatusReport } from './listWindowStatus.js';
export { DEFAULT_MAX_WINDOW_INPUTS, DEFAULT_MAX_WINDOW_OUTPUT_BYTES } from './runWindowTask.js';
export type {
  ListedLineageEntry,
  ResolvedInputSource,
  SkippedKey,
  WindowBuildContext,
  WindowDeadline,
  WindowInput,
  WindowInputSource,
  WindowObjectsSource,
  WindowOutcome,
  WindowParts,
  WindowRunOptions,
  WindowTaskDefinition,
  WindowTaskOutputsSource,
  WindowWords,
  WindowWriter,
} from './WindowTaskDefinition.js';
export type { WindowLineageEntry } from './windowLineage.js';
export type { WindowMarker } from './windowMarker.js';
export {
  CLOSED_WINDOW,
  type ParsedWindowTaskMessage,
  parseWindowTaskMessage,
  scheduledWindowTaskBody,
  WINDOW_TASK_MESSAGE_TYPE,
  WINDOW_TASK_MESSAGE_VERSION,
  type WindowTaskEnvelope,
  type WindowTaskMessageBody,
  type WindowTaskMessageExpectation,
  type WindowTaskMessageOptions,
  windowTaskMessage,
} from './windowTaskMessage.js';
