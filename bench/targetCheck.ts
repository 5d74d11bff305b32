/** How a target came out. */
export const TargetStatus = { MET: 'met', MISSED: 'missed', NOT_MEASURED: 'not-measured' } as const;
export type TargetStatus = (typeof TargetStatus)[keyof typeof TargetStatus];

/** The stable ids of the bench's targets (issue 23, with issue 15's kept), in the report's order. */
export const TARGET_IDS = [
  'first-run-requests',
  'first-run-vs-powertools',
  'requests-per-duplicate',
  'overwrite-requests',
  'rerun-vs-powertools',
  'cost-per-million',
  'mix-append',
  'mix-mutable',
  'mix-reupload',
  'mix-reprocess',
  'cold-start',
  'peak-rss-1gib',
  'normalize-mib-per-core',
  'planning-10k',
] as const;
export type TargetId = (typeof TARGET_IDS)[number];

/** One target, judged on its hardest figure. */
export interface TargetCheck {
  readonly id: TargetId;
  readonly target: string;
  readonly status: TargetStatus;
  readonly met: boolean;
  /** The figures the target is judged on (the hardest first). */
  readonly measured: string;
  /** By how much a missed target is missed. */
  readonly missedBy?: string;
  /** Why it is missed (or what bounds it). */
  readonly why?: string;
  /** For latency-bound ratios: the best ratio the request chains allow under the modelled latencies. */
  readonly bound?: number;
}

/**
 * A target whose section did not run.
 *
 * @example
 * notMeasured('planning-10k', '>= 100 x fewer requests', 'planning');
 */
export function notMeasured(id: TargetId, target: string, section: string): TargetCheck {
  return {
    id,
    target,
    status: TargetStatus.NOT_MEASURED,
    met: false,
    measured: `not measured (bench section ${section} did not run)`,
  };
}

/**
 * S3 and DynamoDB requests per item by operation, from a count of requests over `items` (SQS, the
 * runner's, left out): "S3:GetObject 1, S3:PutObject 1".
 *
 * @example
 * operationsPerItem({ operations: { 'S3:HeadObject': 200 }, items: 200 }); // 'S3:HeadObject 1'
 */
export function operationsPerItem(counted: {
  readonly operations: Readonly<Record<string, number>>;
  readonly items: number;
}): string {
  return Object.entries(counted.operations)
    .filter(([op]) => !op.startsWith('SQS:'))
    .map(([op, n]) => `${op} ${Math.round((n / counted.items) * 100) / 100}`)
    .join(', ');
}

/**
 * By how many USD a cost misses its bound: cents, and a gap under a cent to the hundredth of a cent,
 * never as "0.00".
 *
 * @example
 * usdGap(0.0036); // '0.0036 USD'
 */
export function usdGap(n: number): string {
  return n < 0.01 ? `${n.toFixed(4)} USD` : `${(Math.round(n * 100) / 100).toFixed(2)} USD`;
}
