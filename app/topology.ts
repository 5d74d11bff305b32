/**
 * The one definition of the pipeline's topology: names, prefixes, timeouts, batch settings.
 * Both the CDK stack (infra/) and the local provisioner and runner of `rerun dev` read it, so the
 * deployed and the local pipeline cannot drift apart (test/infra/topology.test.ts checks both).
 */

import { DEFAULT_FAILURE_PREFIX } from '../src/failures/failureRecord.js';
import { NORMALIZE_PREFIXES } from '../src/normalize/normalizeWorker.js';
import { type LedgerTopology, type WorkerTopology, workerQueueNames } from '../src/topology/WorkerTopology.js';
import { DEFAULT_CODE_VERSION_PREFIX } from '../src/worker/codeVersionPrefix.js';

export { type LedgerTopology, type WorkerTopology, workerQueueNames };

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
   * and staging copies under `{summaryPrefix}_staging/` (see app/partition/summaryLayout.ts).
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
  /**
   * Days after which S3 deletes an input's replaced or deleted versions. The input bucket is
   * versioned so that every write sends its own event (src/done/eventProvesCurrent.ts); the old
   * versions are not rerun's to keep. In the stack, and locally where `versionedInput` asks for it.
   */
  readonly noncurrentInputVersionDays: number;
}

/**
 * The topology rerun deploys and runs locally.
 *
 * @example
 * import { topology } from './topology.js';
 * topology.normalize.visibilityTimeoutSeconds; // 360
 */
export const topology: Topology = {
  appName: 'rerun',
  abortIncompleteMultipartUploadAfterDays: 1,
  noncurrentInputVersionDays: 1,
  ...NORMALIZE_PREFIXES,
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
  failurePrefix: DEFAULT_FAILURE_PREFIX,
  codeVersionPrefix: DEFAULT_CODE_VERSION_PREFIX,
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
