/**
 * The one definition of the pipeline's topology: names, prefixes, timeouts, batch settings.
 * Both the CDK stack (infra/) and the local provisioner and runner of `rerun dev` read it, so the
 * deployed and the local pipeline cannot drift apart (test/infra/topology.test.ts checks both).
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

/** The whole pipeline. */
export interface Topology {
  /** Prefix of every resource name. */
  readonly appName: string;
  /** Uploads under this prefix of the input bucket trigger the normalize worker. */
  readonly inputPrefix: string;
  /** Normalized outputs live under this prefix of the output bucket. */
  readonly outputPrefix: string;
  /** Quarantined rows live under this prefix of the output bucket. */
  readonly quarantinePrefix: string;
  /**
   * Daily summaries live under this prefix of the output bucket:
   * `{summaryPrefix}{input bucket}/dt=YYYY-MM-DD/summary.json`, their manifest markers beside them,
   * and staging copies under `{summaryPrefix}_staging/` (see src/partition/summaryLayout.ts).
   */
  readonly summaryPrefix: string;
  /**
   * Why a worker gave up on a message, one object per message:
   * `{failurePrefix}{queue name}/{message id}.json` in the output bucket (read by `rerun redrive`).
   */
  readonly failurePrefix: string;
  /**
   * One empty object per worker and code version that has run, `{codeVersionPrefix}{worker}/{codeVersion}`
   * in the output bucket, created by its first instance before its first output: planning reads a
   * code-version bump from its LastModified (src/worker/codeVersionMarker.ts).
   */
  readonly codeVersionPrefix: string;
  /** The upload-normalizing worker. */
  readonly normalize: WorkerTopology;
  /** The daily-summary worker (one partition per task; fed by the daily schedule and by backfills). */
  readonly summarize: WorkerTopology;
  /** When the daily schedule sends "summarize yesterday" to the summarize queue (UTC). */
  readonly summarySchedule: { readonly hourUtc: number; readonly minuteUtc: number };
  /** The side-effect dedupe ledger. */
  readonly ledger: LedgerTopology;
  /**
   * Days after which S3 aborts a multipart upload that was never completed (a worker killed
   * mid-upload leaves one; its parts are billed until then). A lifecycle rule on both data buckets,
   * in the stack and in `rerun dev`.
   */
  readonly abortIncompleteMultipartUploadAfterDays: number;
}

/**
 * The topology rerun deploys and runs locally.
 *
 * @example
 * import { topology } from 'rerun/topology';
 * topology.normalize.visibilityTimeoutSeconds; // 360
 */
export const topology: Topology = {
  appName: 'rerun',
  abortIncompleteMultipartUploadAfterDays: 1,
  inputPrefix: 'incoming/',
  outputPrefix: 'normalized/',
  quarantinePrefix: 'quarantine/',
  normalize: {
    name: 'normalize',
    functionTimeoutSeconds: 60,
    memoryMiB: 512,
    batchSize: 10,
    maxBatchingWindowSeconds: 1,
    maxConcurrency: 4,
    visibilityTimeoutSeconds: 360,
    maxReceiveCount: 5,
    dlqRetentionDays: 14,
    queueRetentionDays: 4,
  },
  summaryPrefix: 'summaries/',
  failurePrefix: 'failures/',
  codeVersionPrefix: 'code-versions/',
  summarize: {
    name: 'summarize',
    // A partition task reads a whole day of normalized outputs: give it time, and one task per
    // invocation so a slow day never holds other days' messages.
    functionTimeoutSeconds: 300,
    memoryMiB: 1024,
    batchSize: 1,
    maxBatchingWindowSeconds: 0,
    maxConcurrency: 4,
    visibilityTimeoutSeconds: 1800,
    maxReceiveCount: 5,
    dlqRetentionDays: 14,
    queueRetentionDays: 4,
    // Deterministic message identities: a backfill re-sent within 5 minutes (a resumed or repeated
    // backfill) is dropped by SQS, and one message group per partition serialises work on a partition.
    fifo: true,
  },
  summarySchedule: { hourUtc: 1, minuteUtc: 15 },
  ledger: {
    name: 'ledger',
    partitionKey: 'pk',
    ttlAttribute: 'ttl',
  },
};

/**
 * The input bucket events the normalize worker receives, under `inputPrefix`, in the stack and in
 * `rerun dev` alike: uploads build outputs, and deletes remove them (deletion propagates, with
 * conditional deletes; see src/worker/removeOutputs.ts).
 *
 * @example
 * INPUT_EVENTS.includes('s3:ObjectRemoved:*'); // true
 */
export const INPUT_EVENTS: readonly string[] = ['s3:ObjectCreated:*', 's3:ObjectRemoved:*'];

/** Resource names derived from the topology, identical locally and in the stack. */
export interface ResourceNames {
  readonly inputBucket: string;
  readonly outputBucket: string;
  readonly queue: string;
  readonly dlq: string;
}

/**
 * Names of the local resources `rerun dev` provisions. Deployed bucket names are generated by
 * CloudFormation (bucket names are global), so the stack exports them as outputs instead.
 *
 * @example
 * localResourceNames(topology).queue; // 'rerun-normalize-queue'
 */
export function localResourceNames(t: Topology = topology): ResourceNames {
  const normalize = workerQueueNames(t.appName, t.normalize);
  return {
    inputBucket: `${t.appName}-input`,
    outputBucket: `${t.appName}-output`,
    queue: normalize.queue,
    dlq: normalize.dlq,
  };
}

/**
 * The names of a worker's work queue and DLQ: `{prefix}-{worker}-queue` and `{prefix}-{worker}-dlq`,
 * with the `.fifo` suffix SQS requires for FIFO queues. The prefix is the app name locally and the
 * stack name when deployed (the stack's default name is the app name, so both agree).
 *
 * @example
 * workerQueueNames('rerun', topology.summarize); // { queue: 'rerun-summarize-queue.fifo', dlq: 'rerun-summarize-dlq.fifo' }
 */
export function workerQueueNames(prefix: string, worker: WorkerTopology): { queue: string; dlq: string } {
  const suffix = worker.fifo ? '.fifo' : '';
  return { queue: `${prefix}-${worker.name}-queue${suffix}`, dlq: `${prefix}-${worker.name}-dlq${suffix}` };
}
