import { AWS_LIST_PRICES_USD } from './awsCost.js';
import type { FirstRunMixResult, MixRun, MixWorkload } from './firstRunMix.js';
import type { PhaseFigures, SideBySideResult } from './sideBySide.js';
import { MODELLED_AWS_LATENCY_MS } from './workerThroughput.js';

/**
 * Issue 32's workloads with Lambda, SQS and the Powertools baseline, from two measured sections of
 * one bench run:
 *
 * - the first-run section counts the S3 requests of each workload through each first run (`create`,
 *   `check`, `adaptive`, `adaptive-probe`), exactly, in the workload's own proportions;
 * - the side-by-side section measures each kind of delivery a workload is made of (a new object: the
 *   `first` phase; an output in place from the same bytes: `duplicate`; new content: `overwrite`)
 *   through rerun's worker and the Powertools baseline, under the modelled latencies, with their SQS
 *   requests and their Lambda compute.
 *
 * A workload's figure is its kinds' figures in its proportions. rerun's side-by-side phases ran its
 * default path, so a first run that sends more or fewer S3 requests than they did is billed the
 * difference at the modelled S3 latency (the requests of one item are sequential: a request more is
 * 25 ms more of the invocation), and its items per second scale with its request chain. This is a
 * model over measured figures; the report says so beside each.
 */

/** The kinds of delivery a workload is made of: the side-by-side phase that measures each, and its share. */
export const WORKLOAD_KINDS: Record<MixWorkload, readonly { readonly phase: MixPhase; readonly share: number }[]> = {
  // 99 % new objects, 1 % S3's duplicates.
  append: [
    { phase: 'first', share: 0.99 },
    { phase: 'duplicate', share: 0.01 },
  ],
  // 80 % new objects, 20 % overwrites.
  mutable: [
    { phase: 'first', share: 0.8 },
    { phase: 'overwrite', share: 0.2 },
  ],
  // The same bytes again: the output is in place and current (the baseline's idempotency key, the
  // bucket, key and ETag, is the same, as in its duplicate phase).
  reupload: [{ phase: 'duplicate', share: 1 }],
};
type MixPhase = 'first' | 'duplicate' | 'overwrite';

/** One workload through one first run, with everything a delivery costs. */
export interface MixCost {
  readonly run: MixRun;
  /** USD per million items: S3 (counted), SQS and Lambda (from the phases), the chain's difference billed. */
  readonly usdPerMillion: number;
  /** Items per second under the modelled latencies. */
  readonly itemsPerSecond: number;
}

/** A workload's figures: rerun's first runs, and the baseline's. */
export interface MixWithLambda {
  readonly workload: MixWorkload;
  readonly runs: readonly MixCost[];
  readonly baseline: { readonly usdPerMillion: number; readonly itemsPerSecond: number };
}

const S3_MS = MODELLED_AWS_LATENCY_MS.S3;

/** USD per million items of one more millisecond of every item's invocation, at the function's memory. */
function usdPerMillionPerMs(memoryMiB: number): number {
  return (memoryMiB / 1024) * (1 / 1000) * AWS_LIST_PRICES_USD.lambdaArmGbSecond * 1e6;
}

/** The shares' weighted sum of a phase figure. */
function weighted(workload: MixWorkload, of: (phase: MixPhase) => number): number {
  return WORKLOAD_KINDS[workload].reduce((sum, k) => sum + k.share * of(k.phase), 0);
}

/** Items per second of a mix of phases: each item takes the time its kind takes (a harmonic mean). */
function mixItemsPerSecond(workload: MixWorkload, phases: Record<MixPhase, PhaseFigures>, chainScale = 1): number {
  const secondsPerItem = weighted(workload, (p) => 1 / Math.max(phases[p].itemsPerSecond, Number.EPSILON));
  return secondsPerItem > 0 ? 1 / (secondsPerItem * chainScale) : 0;
}

/**
 * Each workload's cost per million items and items per second, for every first run the first-run
 * section measured, and for the Powertools baseline.
 *
 * @example
 * const append = mixWithLambda(sections.firstRunMix, sections.sideBySide).find((m) => m.workload === 'append');
 */
export function mixWithLambda(mix: FirstRunMixResult, side: SideBySideResult): MixWithLambda[] {
  const rerun = side.systems.rerun;
  const baseline = side.systems.powertools;
  const perMs = usdPerMillionPerMs(side.memoryMiB);
  return (Object.keys(WORKLOAD_KINDS) as MixWorkload[]).map((workload) => {
    const phaseS3Requests = weighted(workload, (p) => rerun[p].requestsPerItem.S3);
    const phaseOther = weighted(
      workload,
      (p) =>
        rerun[p].costPerMillionItems.sqs + rerun[p].costPerMillionItems.dynamodb + rerun[p].costPerMillionItems.lambda,
    );
    const runs = mix.figures
      .filter((f) => f.workload === workload)
      .map((f): MixCost => {
        const extraRequests = f.requestsPerItem - phaseS3Requests;
        const usdPerMillion = f.s3UsdPerMillion + phaseOther + extraRequests * S3_MS * perMs;
        // Round trips bound an item's time: a chain longer or shorter than the phases' scales it.
        const chainScale = phaseS3Requests > 0 ? f.requestsPerItem / phaseS3Requests : 1;
        return {
          run: f.firstRun,
          usdPerMillion: round4(usdPerMillion),
          itemsPerSecond: Math.round(mixItemsPerSecond(workload, rerun, chainScale)),
        };
      });
    return {
      workload,
      runs,
      baseline: {
        usdPerMillion: round4(weighted(workload, (p) => baseline[p].costPerMillionItems.total)),
        itemsPerSecond: Math.round(mixItemsPerSecond(workload, baseline)),
      },
    };
  });
}

/** Kept to a hundredth of a cent per million: the targets compare these, the report rounds them to cents. */
function round4(n: number): number {
  return Math.round(n * 10_000) / 10_000;
}
