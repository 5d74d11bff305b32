import type { SQSClient } from '@aws-sdk/client-sqs';
import type { S3ObjectStore } from '../../src/s3/S3ObjectStore.js';
import type { WorkerDefinition } from '../../src/worker/defineWorker.js';
import type { OutputKeyMapping } from './outputKeyMapping.js';
import type { ListedObject, ReprocessMode } from './planReprocess.js';
import type { ReprocessProgress, ReprocessWaitProgress } from './reprocessResult.js';
import type { S3ListingReader } from './S3ListingReader.js';

/** Options of `runReprocess` (runReprocess.ts). */
export interface RunReprocessOptions {
  /** Listings of both buckets (and the exact-key lookups). */
  readonly reader: S3ListingReader;
  /** HEADs of `--verify` and the conditional deletes of `--prune`. */
  readonly store: S3ObjectStore;
  readonly sqs: Pick<SQSClient, 'send'>;
  readonly inputBucket: string;
  /** The deployed worker's definition: its keys, skip rule, code version and validation. */
  readonly worker: WorkerDefinition;
  /** How its output keys map back to input keys (must agree with `worker.outputKey`). */
  readonly mapping: OutputKeyMapping;
  /** Input key prefix to reprocess; must start with the mapping's input prefix. */
  readonly prefix: string;
  /** @default ReprocessMode.STALE */
  readonly mode?: ReprocessMode;
  /** The exact done-check (one HEAD) for each output that looks current. @default false */
  readonly verify?: boolean;
  /** HEADs in flight (of `verify`, and of the outputs older than their input). @default 16 */
  readonly verifyConcurrency?: number;
  /**
   * Key ranges of each listing read at once (S3ListingReader.listSharded): the same plan, in about
   * 1/N of the wall time for a large prefix, for a few more requests than pages and N x 8 pages of memory.
   * @default 1 (one listing page after the other)
   */
  readonly listShards?: number;
  /**
   * The key mappings of the worker's side outputs (e.g. `quarantine/{bucket}/{path}.ndjson`), so
   * `prune` also finds side objects whose main output is gone (one more merge each).
   * @default none
   */
  readonly sideMappings?: readonly OutputKeyMapping[];
  /** Plan and report only. @default false */
  readonly dryRun?: boolean;
  /** Remove orphan outputs (conditional deletes, as for a deleted input). @default false */
  readonly prune?: boolean;
  /** The worker's work queue (unused with `sink`). */
  readonly queueUrl: string;
  /**
   * Where each planned input goes instead of a message on the work queue: the Batch Operations
   * engine writes them to a manifest (app/reprocess/batchOperationsEngine.ts). `enqueued` then counts
   * the inputs the sink took, and `wait` is refused: the engine follows its job itself.
   * @default a message on `queueUrl` per input
   */
  readonly sink?: (input: { readonly key: string; readonly etag: string; readonly size: number }) => Promise<void>;
  /** Its DLQ, watched while waiting. @default not watched */
  readonly dlqUrl?: string;
  /** Messages (and prune deletes) per second. @default no limit */
  readonly ratePerSecond?: number;
  /** Follow the planned inputs until they are done, then report the outcome counts. @default false */
  readonly wait?: boolean;
  /** @default 2000 */
  readonly pollIntervalMs?: number;
  /** @default no limit */
  readonly timeoutMs?: number;
  /**
   * Most planned input keys remembered for `wait` (about 150 bytes each). Past it, waiting
   * counts every input under the prefix that is still to do, not only the planned ones.
   * @default 250000
   */
  readonly waitTrackLimit?: number;
  /**
   * When the current code version first ran (codeVersionCutoff.ts): old-code outputs are then found
   * from listings, and only outputs of the rollout window get a HEAD without `verify`.
   * @default unknown
   */
  readonly codeCutoff?: { readonly codeVersion: string; readonly since: number; readonly until: number };
  /**
   * Where the plan reads the objects from instead of ListObjectsV2 (`--manifest`: an S3 Inventory,
   * see inventoryListing.ts). Each returns the objects under the prefix in ListObjectsV2 order.
   * Waiting always lists the outputs live (a snapshot cannot show progress).
   * @default ListObjectsV2 of both buckets
   */
  readonly listings?: {
    readonly inputs?: () => AsyncIterable<ListedObject>;
    readonly outputs?: () => AsyncIterable<ListedObject>;
  };
  /** Planned verdicts kept for the report. @default 20 */
  readonly sampleSize?: number;
  /** Stops between batches; running the same reprocess again resumes it. */
  readonly signal?: AbortSignal;
  /** After each batch or prune, and when planning ends. */
  readonly onProgress?: (progress: ReprocessProgress) => void;
  /** After each check while waiting. */
  readonly onWait?: (progress: ReprocessWaitProgress) => void;
  /** @default Date.now */
  readonly now?: () => number;
}
