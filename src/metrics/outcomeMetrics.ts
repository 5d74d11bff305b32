import { type OutcomeHook, type RecordOutcome, RecordStatus } from '../worker/outcomes.js';

/** The metrics counted from record outcomes, by their CloudWatch names (all of unit Count). */
export const OutcomeMetric = {
  /** Records whose output was written. */
  PROCESSED: 'RecordsProcessed',
  /** Records acknowledged with nothing to do (already done, test event, input gone...). */
  SKIPPED: 'RecordsSkipped',
  /** Records reported as batch item failures (they come back, then go to the DLQ). */
  FAILED: 'RecordsFailed',
  /**
   * Records whose message carried more S3 records than the invocation's time allowed: the rest
   * went back to the queue as a new message (not failures; a steady count says the batch or the
   * function's time is too small for the messages).
   */
  REQUEUED: 'RecordsRequeued',
  /** Entries the transforms quarantined (their summaries' `quarantined`). */
  QUARANTINED: 'EntriesQuarantined',
  /** Publish races (412) lost to another writer; each one reran the done-check. */
  PUBLISH_RACES_LOST: 'PublishRacesLost',
  /** Side effects (e.g. webhook notifications) that ran now, not replayed. */
  EFFECTS_EXECUTED: 'EffectsExecuted',
} as const;
export type OutcomeMetric = (typeof OutcomeMetric)[keyof typeof OutcomeMetric];

/** A value for every {@link OutcomeMetric}. */
export type OutcomeCounts = Record<OutcomeMetric, number>;

/**
 * Counts all zero: a flush writes every metric, zeros included, so an alarm on failures sees 0
 * rather than missing data for an invocation without any.
 *
 * @example
 * const counts = zeroOutcomeCounts(); // { RecordsProcessed: 0, ... }
 */
export function zeroOutcomeCounts(): OutcomeCounts {
  const counts = {} as OutcomeCounts;
  for (const name of Object.values(OutcomeMetric)) counts[name] = 0;
  return counts;
}

/**
 * Adds one record's outcome to `counts` (in place) and returns them. Pure but for that.
 *
 * @example
 * addOutcome(zeroOutcomeCounts(), { messageId: 'm', status: 'processed', reason: 'output created', quarantined: 2 });
 * // { RecordsProcessed: 1, EntriesQuarantined: 2, ...0 }
 */
export function addOutcome(counts: OutcomeCounts, outcome: RecordOutcome): OutcomeCounts {
  if (outcome.status === RecordStatus.PROCESSED) counts[OutcomeMetric.PROCESSED]++;
  else if (outcome.status === RecordStatus.SKIPPED) counts[OutcomeMetric.SKIPPED]++;
  else if (outcome.status === RecordStatus.REQUEUED) counts[OutcomeMetric.REQUEUED]++;
  else counts[OutcomeMetric.FAILED]++;
  counts[OutcomeMetric.QUARANTINED] += countOf(outcome.quarantined);
  counts[OutcomeMetric.PUBLISH_RACES_LOST] += countOf(outcome.publishRacesLost);
  counts[OutcomeMetric.EFFECTS_EXECUTED] += countOf(outcome.effectsExecuted);
  return counts;
}

function countOf(value: number | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

/**
 * Outcome counts kept per worker over one invocation: what both metric hooks gather before they
 * flush.
 */
class OutcomeTally {
  private readonly byWorker = new Map<string, OutcomeCounts>();

  add(worker: string, outcome: RecordOutcome): void {
    let counts = this.byWorker.get(worker);
    if (!counts) {
      counts = zeroOutcomeCounts();
      this.byWorker.set(worker, counts);
    }
    addOutcome(counts, outcome);
  }

  /** The counts gathered so far, by worker, and a fresh start. */
  take(): [worker: string, counts: OutcomeCounts][] {
    const taken = [...this.byWorker.entries()];
    this.byWorker.clear();
    return taken;
  }
}

/**
 * An outcome hook that tallies outcomes per worker and, on each flush, hands every worker's counts
 * to `publish` and starts over: the part both metric adapters share.
 *
 * @example
 * const hook = tallyingOutcomeHook((worker, counts) => console.log(worker, counts));
 */
export function tallyingOutcomeHook(publish: (worker: string, counts: OutcomeCounts) => void): OutcomeHook {
  const tally = new OutcomeTally();
  const hook = (outcome: Parameters<OutcomeHook>[0], context: Parameters<OutcomeHook>[1]) =>
    tally.add(context.worker, outcome);
  return Object.assign(hook, {
    flush: () => {
      for (const [worker, counts] of tally.take()) publish(worker, counts);
    },
  });
}
