import type { WorkerTopology } from './WorkerTopology.js';

/**
 * The AWS rules a worker's settings must satisfy, checked before anything is synthesized so a bad
 * topology fails at `cdk synth` with a sentence, not at deploy time with a CloudFormation rollback.
 * Sources: AWS Lambda developer guide, "Using Lambda with Amazon SQS" (visibility timeout, batching
 * window, maximum concurrency) and the SQS developer guide (retention, dead-letter queues).
 *
 * Pure: no CDK or SDK import, so the local provisioner could apply the same rules.
 *
 * @example
 * workerTopologyViolations(topology.normalize); // [] for the shipped topology
 */
export function workerTopologyViolations(t: WorkerTopology): string[] {
  const v: string[] = [];
  const where = `worker "${t.name}"`;
  if (!/^[a-z][a-z0-9-]*$/.test(t.name)) v.push(`${where}: name must be lower-case letters, digits and hyphens`);
  if (!Number.isInteger(t.functionTimeoutSeconds) || t.functionTimeoutSeconds < 1 || t.functionTimeoutSeconds > 900) {
    v.push(`${where}: functionTimeoutSeconds must be an integer in 1..900 (Lambda's limit)`);
  }
  if (!Number.isInteger(t.memoryMiB) || t.memoryMiB < 128 || t.memoryMiB > 10_240) {
    v.push(`${where}: memoryMiB must be an integer in 128..10240`);
  }
  // AWS: "set the source queue's visibility timeout to at least six times the timeout that you
  // configure on your function", so a throttled or retried batch does not reappear while in flight.
  if (t.visibilityTimeoutSeconds < 6 * t.functionTimeoutSeconds) {
    v.push(
      `${where}: visibilityTimeoutSeconds (${t.visibilityTimeoutSeconds}) must be at least 6 x functionTimeoutSeconds (${6 * t.functionTimeoutSeconds})`,
    );
  }
  if (t.visibilityTimeoutSeconds > 43_200) v.push(`${where}: visibilityTimeoutSeconds cannot exceed 43200 (12 h)`);
  // AWS: maxReceiveCount of at least 5, so a throttled invocation does not send a healthy message to the DLQ.
  if (!Number.isInteger(t.maxReceiveCount) || t.maxReceiveCount < 5 || t.maxReceiveCount > 1000) {
    v.push(`${where}: maxReceiveCount must be an integer in 5..1000 (AWS advises at least 5)`);
  }
  if (!Number.isInteger(t.batchSize) || t.batchSize < 1 || t.batchSize > 10_000) {
    v.push(`${where}: batchSize must be an integer in 1..10000`);
  }
  if (t.maxBatchingWindowSeconds < 0 || t.maxBatchingWindowSeconds > 300) {
    v.push(`${where}: maxBatchingWindowSeconds must be in 0..300`);
  }
  if (t.batchSize > 10 && t.maxBatchingWindowSeconds < 1) {
    v.push(`${where}: a batchSize above 10 requires maxBatchingWindowSeconds of at least 1`);
  }
  if (!Number.isInteger(t.maxConcurrency) || t.maxConcurrency < 2 || t.maxConcurrency > 1000) {
    v.push(`${where}: maxConcurrency must be an integer in 2..1000 (ScalingConfig.MaximumConcurrency)`);
  }
  // AWS: an SQS FIFO event source takes at most 10 records per batch and no batching window.
  if (t.fifo && t.batchSize > 10) v.push(`${where}: a FIFO queue allows a batchSize of at most 10`);
  if (t.fifo && t.maxBatchingWindowSeconds !== 0) {
    v.push(`${where}: a FIFO queue does not support a batching window (maxBatchingWindowSeconds must be 0)`);
  }
  if (t.dlqRetentionDays < 1 || t.dlqRetentionDays > 14) v.push(`${where}: dlqRetentionDays must be in 1..14`);
  // SQS: a standard queue's message keeps its original enqueue timestamp when moved to the DLQ, so a
  // DLQ retention no longer than the source queue's would let dead letters expire on arrival.
  if (t.queueRetentionDays < 1 || t.queueRetentionDays >= t.dlqRetentionDays) {
    v.push(`${where}: queueRetentionDays must be at least 1 and shorter than dlqRetentionDays (${t.dlqRetentionDays})`);
  }
  return v;
}
