import { emptyPlanCounts, type PlanCounts, ReprocessState, type ReprocessVerdict } from './planReprocess.js';
import type { StateCounts } from './reprocessResult.js';
import type { RunReprocessOptions } from './runReprocessOptions.js';

/** What a run has planned, sent and pruned so far (the counters its steps share). */
export interface RunState {
  readonly counts: Record<ReprocessState, number>;
  readonly plan: PlanCounts;
  readonly sample: ReprocessVerdict[];
  readonly sampleSize: number;
  readonly heads: { count: number };
  /** The planned input keys `--wait` follows, while there are at most `waitTrackLimit`. */
  readonly planned: Set<string>;
  tracked: boolean;
  selected: number;
  enqueued: number;
  pruned: number;
  alreadyGone: number;
  readonly kept: { count: number; first: { inputKey: string; reason: string }[] };
  interrupted: boolean;
}

export function newRunState(options: RunReprocessOptions): RunState {
  return {
    counts: zeroCounts(),
    plan: emptyPlanCounts(),
    sample: [],
    sampleSize: options.sampleSize ?? 20,
    heads: { count: 0 },
    planned: new Set<string>(),
    tracked: options.wait === true,
    selected: 0,
    enqueued: 0,
    pruned: 0,
    alreadyGone: 0,
    kept: { count: 0, first: [] },
    interrupted: false,
  };
}

/** ListObjectsV2 and HEAD requests so far. */
export function requestCounts(
  options: RunReprocessOptions,
  run: RunState,
): { list: number; lookup: number; head: number } {
  return {
    // Sharded listings count every request, the short pages at range ends too: each is paid for.
    list: options.reader.listRequests,
    lookup: options.reader.lookupRequests,
    head: run.heads.count,
  };
}

function zeroCounts(): StateCounts {
  return Object.fromEntries(Object.values(ReprocessState).map((s) => [s, 0])) as StateCounts;
}
