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
  // A window reads all its inputs in one invocation: time, memory, and one window at a time.
  functionTimeoutSeconds: 300,
  memoryMiB: 1024,
  batchSize: 1,
  maxBatchingWindowSeconds: 0,
  maxConcurrency: 4,
  visibilityTimeoutSeconds: 1800,
  maxReceiveCount: 5,
  dlqRetentionDays: 14,
  queueRetentionDays: 4,
  // One message group per window (windowTaskMessage): two tasks of one window never run at once,
  // and a backfill re-sent within 5 minutes is dropped by SQS.
  fifo: true,
};
