import { WaitEnd } from '../common/waitEnd.js';
import type { PlanCounts, ReprocessMode, ReprocessState, ReprocessVerdict } from './planReprocess.js';

/** How waiting ended (the same ends as a backfill's wait). */
export const ReprocessWaitEnd = WaitEnd;
export type ReprocessWaitEnd = WaitEnd;

/** Progress while planning and enqueueing (the total is known once the listings end). */
export interface ReprocessProgress {
  readonly listedInputs: number;
  readonly planned: number;
  readonly enqueued: number;
  readonly pruned: number;
  /** Whether the listings have ended (then `planned` is the total). */
  readonly planComplete: boolean;
}

/** Progress while waiting. */
export interface ReprocessWaitProgress {
  /** Planned inputs whose output is now current. */
  readonly done: number;
  readonly total: number;
  readonly queued: number;
  readonly inFlight: number;
  readonly deadLettered: number;
  readonly elapsedMs: number;
}

/** Verdicts by state. */
export type StateCounts = Record<ReprocessState, number>;

/** What a reprocess did. */
export interface ReprocessResult {
  readonly prefix: string;
  readonly mode: ReprocessMode;
  readonly verify: boolean;
  readonly dryRun: boolean;
  /** Inputs selected by the mode (enqueued unless dry run). */
  readonly planned: number;
  /** Messages SQS accepted. */
  readonly enqueued: number;
  /** Orphan outputs removed (main outputs; their side outputs too). */
  readonly pruned: number;
  /** Whether orphans were to be removed (`prune`), so a report can tell "kept" from "not asked". */
  readonly prune: boolean;
  /** With `prune`: orphans found in the listing that were gone when pruned (their delete event removed them). */
  readonly alreadyGone: number;
  /**
   * With `prune`: orphans left in place, each with the reason (the object names another input, has
   * no rerun metadata, or its input exists again): the first `sampleSize`, and how many in all.
   */
  readonly kept: {
    readonly count: number;
    readonly first: readonly { readonly inputKey: string; readonly reason: string }[];
  };
  /** With `prune`: side objects of gone inputs whose main output is gone too (found by `sideMappings`). */
  readonly sideOrphans: number;
  /** Whether it stopped early (signal): run it again to resume. */
  readonly interrupted: boolean;
  /** Every verdict by state. */
  readonly counts: StateCounts;
  /** Requests of the plan (the checks while waiting are in `wait.requests`). */
  readonly requests: { readonly list: number; readonly lookup: number; readonly head: number };
  readonly plan: PlanCounts;
  /** The first planned (and orphan) verdicts. */
  readonly sample: readonly ReprocessVerdict[];
  readonly wait?: {
    readonly ended: ReprocessWaitEnd;
    /** Planned inputs now current (or skipped by the worker). */
    readonly done: number;
    /** Planned inputs still to do. */
    readonly remaining: number;
    /** Planned inputs no longer listed (deleted meanwhile). */
    readonly gone: number;
    readonly deadLettered: number;
    readonly elapsedMs: number;
    /** Whether `done`/`remaining` count the planned inputs only (false past `waitTrackLimit`). */
    readonly tracked: boolean;
    /** Requests of the checks while waiting (each one plans again). */
    readonly requests: { readonly list: number; readonly lookup: number; readonly head: number };
  };
}
