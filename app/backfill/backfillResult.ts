import type { Day } from '../../src/keys/partition.js';
import type { WaitEnd } from '../common/waitEnd.js';
import type { PartitionStatus } from '../partition/judgePartition.js';
import type { BackfillMode, PlannedTask } from './planBackfill.js';

/** Progress while waiting: of the reference summary's days, or of one window stage's windows. */
export interface BackfillProgress {
  /** Planned partitions (or windows) published (current) now. */
  readonly published: number;
  readonly total: number;
  /** Messages waiting in the work queue, and being processed. */
  readonly queued: number;
  readonly inFlight: number;
  /** Messages that reached the DLQ since the backfill started. */
  readonly deadLettered: number;
  readonly elapsedMs: number;
}

/** What a backfill did. */
export interface BackfillResult {
  readonly from: Day;
  readonly to: Day;
  readonly mode: BackfillMode;
  readonly dryRun: boolean;
  /** The window's partitions by status when planned. */
  readonly counts: Readonly<Record<PartitionStatus, number>>;
  readonly tasks: readonly PlannedTask[];
  /** Messages SQS accepted (a FIFO queue silently drops those it already received in the last 5 minutes). */
  readonly enqueued: number;
  /** Whether enqueueing stopped early (signal): run the same backfill again to resume. */
  readonly interrupted: boolean;
  /** Listing requests of the plan: the bulk done-check's cost (no per-partition request). */
  readonly planRequests: number;
  readonly wait?: {
    readonly ended: WaitEnd;
    readonly published: number;
    readonly total: number;
    readonly deadLettered: number;
    readonly elapsedMs: number;
    /** Planned partitions that are not published at the end, with their status now. */
    readonly remaining: readonly { readonly day: Day; readonly status: PartitionStatus; readonly reason: string }[];
  };
}
