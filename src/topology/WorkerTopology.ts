/**
 * The settings of a deployed worker and its ledger: what the CDK constructs (`src/cdk/`) and the
 * local provisioning (`local/provision.ts`) both read, so the deployed and the local pipeline are
 * built from one description. The reference application's own values are in `app/topology.ts`.
 */

/** Settings of one SQS-triggered worker: its queue, DLQ, function and event source mapping. */
export interface WorkerTopology {
  /** Logical name, used in resource names (`rerun-normalize-queue`). */
  readonly name: string;
  /** Function timeout in seconds. */
  readonly functionTimeoutSeconds: number;
  /** Function memory in MiB. */
  readonly memoryMiB: number;
  /** Records per invocation (SQS event source mapping `BatchSize`). */
  readonly batchSize: number;
  /** Seconds to gather a batch (`MaximumBatchingWindowInSeconds`; required by AWS above 10 records). */
  readonly maxBatchingWindowSeconds: number;
  /** Concurrent invocations for the mapping (`ScalingConfig.MaximumConcurrency`, 2-1000). */
  readonly maxConcurrency: number;
  /** Queue visibility timeout; AWS advises at least 6 x the function timeout. */
  readonly visibilityTimeoutSeconds: number;
  /** Receives before the redrive policy moves a message to the DLQ; AWS advises at least 5. */
  readonly maxReceiveCount: number;
  /** DLQ message retention, in days (SQS maximum: 14). */
  readonly dlqRetentionDays: number;
  /**
   * Work queue message retention, in days. Must be shorter than `dlqRetentionDays`: for standard
   * queues a message's expiry counts from its original enqueue time, also after it moves to the DLQ.
   */
  readonly queueRetentionDays: number;
  /**
   * FIFO work queue and DLQ (names end in `.fifo`, content-based deduplication on): messages carry a
   * `MessageGroupId` (processed in order within a group) and a `MessageDeduplicationId` (SQS drops a
   * second message with the same id for 5 minutes). Lambda allows at most 10 records per batch and no
   * batching window for FIFO sources.
   * @default false
   */
  readonly fifo?: boolean;
}

/** The dedupe ledger table (one item per dedupe key). */
export interface LedgerTopology {
  /** Logical name, used in local resource names (`rerun-ledger`). */
  readonly name: string;
  /** Partition key attribute (type string). */
  readonly partitionKey: string;
  /** Attribute holding the epoch-seconds expiry that DynamoDB TTL deletes by (lazily: never rely on it). */
  readonly ttlAttribute: string;
}

/**
 * The names of a worker's work queue and DLQ: `{prefix}-{worker}-queue` and `{prefix}-{worker}-dlq`,
 * with the `.fifo` suffix SQS requires for FIFO queues. The prefix is the app name locally and the
 * stack name when deployed (the stack's default name is the app name, so both agree).
 *
 * @example
 * workerQueueNames('rerun', { name: 'summarize', fifo: true }); // { queue: 'rerun-summarize-queue.fifo', dlq: 'rerun-summarize-dlq.fifo' }
 */
export function workerQueueNames(
  prefix: string,
  worker: Pick<WorkerTopology, 'name' | 'fifo'>,
): { queue: string; dlq: string } {
  const suffix = worker.fifo ? '.fifo' : '';
  return { queue: `${prefix}-${worker.name}-queue${suffix}`, dlq: `${prefix}-${worker.name}-dlq${suffix}` };
}
