import { type ClassifiedInput, coverageDigest, InputClass } from './inputCoverage.js';

/**
 * Keys a summary records per group of inputs; the count is always exact. A day of 100,000 inputs
 * then still makes a summary of a few tens of kilobytes, and {@link SummaryCoverage.digest} covers
 * the keys left out.
 */
export const SUMMARY_COVERAGE_KEYS = 100;

/** Inputs of one class: how many, and the first {@link SUMMARY_COVERAGE_KEYS} keys in key order. */
export interface CoverageGroup {
  count: number;
  keys: string[];
}

/**
 * Which inputs of its day a summary covers and which it does not, recorded in its manifest. Judged
 * from the same listings as `rerun status` (app/partition/inputCoverage.ts), so both say the same.
 */
export interface SummaryCoverage {
  /** Inputs listed for the day (`{inputPrefix}dt=D/...` in the input bucket). */
  inputs: number;
  /** Inputs whose data is in the summary. */
  covered: {
    /** A current normalized output (and its quarantine object, if any) is in the lineage. */
    withOutput: CoverageGroup;
    /** Only a quarantine object (the whole file quarantined) is in the lineage. */
    quarantined: CoverageGroup;
  };
  /** Inputs whose data is not in the summary. */
  notCovered: {
    /** No output and no failure record: not processed yet, or still being retried. */
    pending: CoverageGroup;
    /**
     * The worker gave up on them, each with a failure record: dead-lettered, or on the way to the DLQ
     * (InputClass.DEAD_LETTERED; `rerun status` says the same).
     */
    deadLettered: CoverageGroup;
    /** Changed since their output was written; the summary holds the output of an older content. */
    outdated: CoverageGroup;
    /** Skipped by the worker's key rule (no output expected). */
    skipped: CoverageGroup;
  };
  /** The bound of every `keys` list ({@link SUMMARY_COVERAGE_KEYS} when written). */
  keysLimit: number;
  /** {@link coverageDigest} of every input and its class (part of the summary's lineage hash). */
  digest: string;
}

/** The groups of {@link SummaryCoverage.covered} and {@link SummaryCoverage.notCovered}, as written. */
const COVERED_GROUPS = ['withOutput', 'quarantined'] as const;
const NOT_COVERED_GROUPS = ['pending', 'deadLettered', 'outdated', 'skipped'] as const;

/**
 * The coverage record of a day's classified inputs. Pure.
 *
 * @example
 * const coverage = summaryCoverageOf(classifyInputs(listing, rules));
 * coverage.notCovered.pending.count; // inputs the summary does not include yet
 */
export function summaryCoverageOf(
  classified: readonly ClassifiedInput[],
  keysLimit: number = SUMMARY_COVERAGE_KEYS,
): SummaryCoverage {
  const group = (kind: InputClass): CoverageGroup => {
    const keys = classified.filter((c) => c.class === kind).map((c) => c.key);
    return { count: keys.length, keys: keys.slice(0, keysLimit) };
  };
  return {
    inputs: classified.length,
    covered: { withOutput: group(InputClass.COVERED), quarantined: group(InputClass.QUARANTINED) },
    notCovered: {
      pending: group(InputClass.PENDING),
      deadLettered: group(InputClass.DEAD_LETTERED),
      outdated: group(InputClass.OUTDATED),
      skipped: group(InputClass.SKIPPED),
    },
    keysLimit,
    digest: coverageDigest(classified),
  };
}

/**
 * Why a coverage record read back from a summary is malformed, or undefined when it is sound: every
 * count an integer, no more keys than the bound and the count, and the counts adding up to `inputs`.
 *
 * @example
 * const problem = coverageProblem(doc.manifest.coverage);
 */
export function coverageProblem(value: unknown): string | undefined {
  const c = value as Partial<SummaryCoverage> | null;
  if (c === null || typeof c !== 'object') return 'coverage is not an object';
  if (!isCount(c.inputs) || !isCount(c.keysLimit) || typeof c.digest !== 'string') {
    return 'coverage lacks inputs, keysLimit or digest';
  }
  const covered = (c.covered ?? {}) as Record<string, unknown>;
  const notCovered = (c.notCovered ?? {}) as Record<string, unknown>;
  const missing = [
    ...COVERED_GROUPS.filter((g) => !(g in covered)),
    ...NOT_COVERED_GROUPS.filter((g) => !(g in notCovered)),
  ];
  if (missing.length > 0) return `coverage lacks its group(s) ${missing.join(', ')}`;
  // Summaries written before one class served every given-up input also hold `notCovered.failing`:
  // still sound (it is counted), and their coverage digest makes such a day stale until rebuilt.
  const extra = [
    ...Object.keys(covered).filter((g) => !(COVERED_GROUPS as readonly string[]).includes(g)),
    ...Object.keys(notCovered).filter((g) => !(NOT_COVERED_GROUPS as readonly string[]).includes(g) && g !== 'failing'),
  ];
  if (extra.length > 0) return `coverage has unknown group(s) ${extra.join(', ')}`;
  const groups = [...Object.values(covered), ...Object.values(notCovered)];
  let total = 0;
  for (const g of groups as Partial<CoverageGroup>[]) {
    if (!g || !isCount(g.count) || !Array.isArray(g.keys)) return 'a coverage group is not a count with keys';
    if (g.keys.length > Math.min(g.count, c.keysLimit)) return 'a coverage group lists more keys than it counts';
    total += g.count;
  }
  if (total !== c.inputs) return `coverage groups add up to ${total}, not ${c.inputs} inputs`;
  return undefined;
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}
