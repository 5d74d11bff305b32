import { AWS_LIST_PRICES_USD } from './awsCost.js';
import type { ReprocessPlanningResult } from './reprocessPlanning.js';
import type { SideBySideResult } from './sideBySide.js';
import { notMeasured, type TargetCheck, TargetStatus, usdGap } from './targetCheck.js';

/**
 * `mix-reprocess` (issue 32): a `rerun reprocess` of a prefix that is done, against sending every
 * input of it to the worker again. Judged from two measured sections of the same run:
 *
 * - rerun: the plan (the `reprocess` section, `rerun reprocess --dry-run` in a process of its own):
 *   its LIST requests and its lookups by key, priced per input. A done input is planned for nothing
 *   and sent nowhere (the section fails unless its plan is exactly the outputs it deleted and the
 *   orphans it added), so a done prefix costs its plan alone.
 * - the fixed path: every input sent again and judged by the worker (`reprocess --all`), rerun's
 *   worker and the Powertools baseline's, as the side-by-side section's `rerun` phase measures them
 *   (requests, SQS and Lambda compute under the modelled latencies). Re-sends are never S3's fresh
 *   deliveries, so the first-run policy does not apply: rerun's worker has one path for them.
 */

export const MIX_REPROCESS_TARGET =
  'a rerun reprocess of a done prefix: USD per million items (Lambda included) <= the cheaper fixed path ' +
  "(every input sent again) + 5 % and <= the Powertools baseline's; items per second >= the baseline's";

const usd = (n: number) => `${n.toFixed(2)} USD`;
const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * The `mix-reprocess` check, or "not measured" when a section it needs did not run.
 *
 * @example
 * reprocessTarget(sections.sideBySide, sections.reprocessPlanning).met;
 */
export function reprocessTarget(
  side: SideBySideResult | undefined,
  planning: ReprocessPlanningResult | undefined,
): TargetCheck {
  if (!side) return notMeasured('mix-reprocess', MIX_REPROCESS_TARGET, 'side');
  if (!planning) return notMeasured('mix-reprocess', MIX_REPROCESS_TARGET, 'reprocess');
  const { listing, items } = planning;
  // Priced unrounded, so that a plan's fraction of a cent per million still counts against the bound.
  const p = AWS_LIST_PRICES_USD;
  const lookups = listing.requests.lookup + listing.requests.head;
  const planUsd =
    ((listing.requests.list * p.s3PutClassPer1000 + lookups * p.s3GetClassPer1000) / 1000) * (1e6 / items);
  const planPerSecond = Math.round(items / (listing.ms / 1000));
  const resend = side.systems.rerun.rerun;
  const baseline = side.systems.powertools.rerun;
  const bound = round2(resend.costPerMillionItems.total * 1.05);
  const failures = [
    planUsd > bound ? `above the fixed path's bound by ${usdGap(planUsd - bound)}` : undefined,
    planUsd > baseline.costPerMillionItems.total
      ? `above the baseline by ${usdGap(planUsd - baseline.costPerMillionItems.total)}`
      : undefined,
    planPerSecond < baseline.itemsPerSecond
      ? `${baseline.itemsPerSecond - planPerSecond} items per second under the baseline's`
      : undefined,
  ].filter((x): x is string => x !== undefined);
  const met = failures.length === 0;
  return {
    id: 'mix-reprocess',
    target: MIX_REPROCESS_TARGET,
    status: met ? TargetStatus.MET : TargetStatus.MISSED,
    met,
    measured:
      `the plan ${planUsd.toFixed(4)} USD per million items (${listing.requests.list} LISTs, ` +
      `${listing.requests.lookup} lookups and ${listing.requests.head} HEADs over ${items} inputs, nothing sent) ` +
      `at ${planPerSecond} items/s; every input sent again: rerun's worker ${usd(resend.costPerMillionItems.total)} ` +
      `(bound ${usd(bound)}) at ${resend.itemsPerSecond} items/s, the Powertools baseline ` +
      `${usd(baseline.costPerMillionItems.total)} at ${baseline.itemsPerSecond} items/s`,
    ...(met ? {} : { missedBy: failures.join('; ') }),
  };
}
