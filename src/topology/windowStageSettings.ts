import type { WorkerTopology } from './WorkerTopology.js';

/**
 * The settings of a window stage's worker unless `settings` says otherwise: what RerunWindowStage
 * deploys and what `rerun dev` provisions locally for a window stage (here, free of aws-cdk-lib, so
 * the local tools load it without the CDK installed).
 *
 * @example
 * const worker: WorkerTopology = { name: 'daily', ...WINDOW_STAGE_DEFAULT_SETTINGS };
 */
export const WINDOW_STAGE_DEFAULT_SETTINGS: Omit<WorkerTopology, 'name'> = {
  // A window reads all its inputs in one invocation (or one part of them, DEFAULT_MAX_WINDOW_INPUTS):
  // time, memory, and one window at a time. Lambda's longest timeout, so that a day of a million
  // inputs is built from its hours at the defaults; a function is billed for the time it runs, not
  // for its timeout. The cost is a crash's wait: its message returns after the visibility timeout.
  functionTimeoutSeconds: 900,
  memoryMiB: 1024,
  batchSize: 1,
  maxBatchingWindowSeconds: 0,
  maxConcurrency: 4,
  // 6 x the timeout, as AWS advises for an SQS event source.
  visibilityTimeoutSeconds: 5400,
  maxReceiveCount: 5,
  dlqRetentionDays: 14,
  queueRetentionDays: 4,
  // One message group per window (windowTaskMessage): two tasks of one window never run at once,
  // and a backfill re-sent within 5 minutes is dropped by SQS.
  fifo: true,
};
