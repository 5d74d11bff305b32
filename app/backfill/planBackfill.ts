import type { Day } from '../../src/keys/partition.js';
import { type PartitionStatus, type PartitionVerdict, PartitionStatus as Status } from '../partition/judgePartition.js';

/** Which partitions a backfill (re)runs. */
export const BackfillMode = {
  /** Only days with no summary. */
  MISSING: 'missing',
  /** Every day that is not up to date: missing, stale (inputs or code changed), invalid and incomplete. */
  STALE: 'stale',
  /**
   * Every day of the window. A task for an up-to-date day runs the worker's full done-check (a HEAD
   * verified against S3's stored checksum) and writes nothing when it holds: a verification pass.
   */
  ALL: 'all',
} as const;
export type BackfillMode = (typeof BackfillMode)[keyof typeof BackfillMode];

/** One task of a plan. */
export interface PlannedTask {
  readonly day: Day;
  /** The lineage hash planned with: part of the message's deduplication id. */
  readonly lineageHash: string;
  /** The day's input coverage digest, when planned with the inputs: also part of the deduplication id. */
  readonly coverageDigest?: string;
  /** The partition's status when planned, and why. */
  readonly status: PartitionStatus;
  readonly reason: string;
}

/** What a backfill will do. */
export interface BackfillPlan {
  readonly mode: BackfillMode;
  /** Every partition of the window, with its status. */
  readonly partitions: readonly PartitionVerdict[];
  /** The partitions to enqueue, in day order. */
  readonly tasks: readonly PlannedTask[];
  /** Partitions by status. */
  readonly counts: Readonly<Record<PartitionStatus, number>>;
}

const SELECTED: Record<BackfillMode, ReadonlySet<PartitionStatus>> = {
  [BackfillMode.MISSING]: new Set([Status.MISSING]),
  // An incomplete day is not done: its summary does not cover every input of the day.
  [BackfillMode.STALE]: new Set([Status.MISSING, Status.STALE, Status.INVALID, Status.INCOMPLETE]),
  [BackfillMode.ALL]: new Set([Status.MISSING, Status.STALE, Status.INVALID, Status.INCOMPLETE, Status.PUBLISHED]),
};

/**
 * Whether a backfill of `mode` reruns a window in `status`: the one rule rerun's own summaries and a
 * user's window stages are planned by.
 *
 * @example
 * backfillSelects(BackfillMode.MISSING, 'stale'); // false
 */
export function backfillSelects(mode: BackfillMode, status: PartitionStatus): boolean {
  const selected = SELECTED[mode];
  if (!selected) throw new RangeError(`unknown backfill mode ${String(mode)} (missing, stale or all)`);
  return selected.has(status);
}

/**
 * Chooses the tasks of a backfill from the partitions' statuses (the bulk done-check). Pure: the
 * same statuses and mode give the same plan, so a backfill run twice plans nothing the second time
 * once the first has completed.
 *
 * @example
 * const plan = planBackfill(verdicts, BackfillMode.STALE);
 * plan.tasks.map((t) => t.day);
 */
export function planBackfill(partitions: readonly PartitionVerdict[], mode: BackfillMode): BackfillPlan {
  const selected = SELECTED[mode];
  if (!selected) throw new RangeError(`unknown backfill mode ${String(mode)} (missing, stale or all)`);
  const counts = { published: 0, missing: 0, stale: 0, invalid: 0, incomplete: 0 } as Record<PartitionStatus, number>;
  for (const p of partitions) counts[p.status]++;
  const tasks = [...partitions]
    .sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0))
    .filter((p) => selected.has(p.status))
    .map((p) => ({
      day: p.day,
      lineageHash: p.lineageHash,
      ...(p.coverage ? { coverageDigest: p.coverage.digest } : {}),
      status: p.status,
      reason: p.reason,
    }));
  return { mode, partitions, tasks, counts };
}

/**
 * Reads a `--mode` value.
 *
 * @example
 * parseBackfillMode('stale'); // 'stale'
 */
export function parseBackfillMode(value: string): BackfillMode | undefined {
  return (Object.values(BackfillMode) as string[]).includes(value) ? (value as BackfillMode) : undefined;
}
