import { type FailureIndexEntry, inputKeyHash } from '../../src/failures/failureIndex.js';
import type { WorkerDefinition } from '../../src/worker/defineWorker.js';

/** How the inputs of a day map to what the pipeline should have made of them: a worker's pure key rules. */
export interface InputRules {
  /** The input bucket (the summaries' source). */
  readonly bucket: string;
  /** Where inputs live in it (`incoming/`): a day's inputs are `{prefix}dt=D/...`. */
  readonly prefix: string;
  /** The output bucket's failure prefix (topology.failurePrefix), for the failure index. */
  readonly failurePrefix: string;
  /** The deterministic output key of an input (the worker's outputKey). */
  outputKey(source: { readonly bucket: string; readonly key: string }): string;
  /** The deterministic quarantine key of an input, when the worker has one. @default none */
  quarantineKey?(source: { readonly bucket: string; readonly key: string }): string;
  /** Why the worker skips an input by its key alone (e.g. an unsupported type), or undefined. @default none */
  skipReason?(source: { readonly bucket: string; readonly key: string }): string | undefined;
}

/** What the listings of one day hold, for {@link judgeInputCoverage}. */
export interface CoverageListing {
  /** The day's inputs (listed in the input bucket), with S3's LastModified (epoch ms). */
  readonly inputs: readonly { readonly key: string; readonly lastModified: number }[];
  /** Output and quarantine keys of the day (listed in the output bucket), with LastModified. */
  readonly outputs: ReadonlyMap<string, number>;
  /** The day's failure index entries (src/failures/failureIndex.ts). */
  readonly failures: readonly FailureIndexEntry[];
}

/** Inputs of one kind: how many, and the first keys (in key order). */
export interface InputGroup {
  readonly count: number;
  readonly first: readonly string[];
}

/** Which inputs of a day a summary can cover, from listings alone. */
export interface InputCoverage {
  /** Inputs listed for the day. */
  readonly inputs: number;
  /** Inputs with an output written after the input's last change. */
  readonly covered: number;
  /** Inputs the worker skips by their key, with a reason (no output expected). */
  readonly skipped: number;
  /** Inputs with a quarantine object but no output (the whole file quarantined). */
  readonly quarantined: number;
  /** Inputs the worker gave up on, each with a failure record (a classified outcome). */
  readonly deadLettered: InputGroup;
  /** Inputs with no output and no failure record: not processed yet, or still being retried. */
  readonly pending: InputGroup;
  /** Inputs whose output is older than the input: changed since, and its new output is not there yet. */
  readonly outdated: InputGroup;
}

/** How many keys each group keeps. */
export const FIRST_KEYS = 3;

/**
 * Classifies every input of a day from listings (no HEAD): covered when its deterministic output
 * exists and was written no earlier than the input's LastModified; otherwise skipped (by the
 * worker's key rule), quarantined (a quarantine object only), dead-lettered (a failure index entry),
 * outdated (an output older than the input) or pending. S3 sets LastModified on both sides, so the
 * comparison needs no clock of ours; it cannot see which ETag an output was built from (only a
 * HEAD can), so an output written just after an overwrite by a worker that read the older content
 * counts as covered until the overwrite's event rewrites it. Pure: no SDK.
 *
 * @example
 * const coverage = judgeInputCoverage(listing, rules);
 * coverage.pending.count; // inputs without an output yet
 */
export function judgeInputCoverage(listing: CoverageListing, rules: InputRules): InputCoverage {
  const failed = new Set(listing.failures.map((f) => f.inputHash));
  let covered = 0;
  let skipped = 0;
  let quarantined = 0;
  const deadLettered: string[] = [];
  const pending: string[] = [];
  const outdated: string[] = [];
  const inputs = [...listing.inputs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (const input of inputs) {
    const source = { bucket: rules.bucket, key: input.key };
    const written = listing.outputs.get(rules.outputKey(source));
    if (written !== undefined && written >= input.lastModified) covered++;
    else if (rules.skipReason?.(source) !== undefined) skipped++;
    else if (failed.has(inputKeyHash(input.key))) deadLettered.push(input.key);
    else if (written !== undefined) outdated.push(input.key);
    else if (rules.quarantineKey && listing.outputs.has(rules.quarantineKey(source))) quarantined++;
    else pending.push(input.key);
  }
  const group = (keys: string[]): InputGroup => ({ count: keys.length, first: keys.slice(0, FIRST_KEYS) });
  return {
    inputs: inputs.length,
    covered,
    skipped,
    quarantined,
    deadLettered: group(deadLettered),
    pending: group(pending),
    outdated: group(outdated),
  };
}

/**
 * Whether every input of the day has a current output or a classified outcome (skipped,
 * quarantined, dead-lettered with a failure record).
 *
 * @example
 * if (!isFullyCovered(coverage)) console.log(describeCoverage(coverage));
 */
export function isFullyCovered(coverage: InputCoverage): boolean {
  return coverage.pending.count === 0 && coverage.outdated.count === 0;
}

/**
 * The operator's sentence for a day's coverage, e.g.
 * `3 inputs: 2 with outputs, 1 pending (incoming/dt=2026-01-05/c.csv)`.
 *
 * @example
 * describeCoverage(coverage);
 */
export function describeCoverage(coverage: InputCoverage): string {
  const parts = [`${coverage.covered} with outputs`];
  if (coverage.skipped > 0) parts.push(`${coverage.skipped} skipped`);
  if (coverage.quarantined > 0) parts.push(`${coverage.quarantined} quarantined`);
  const named = (label: string, g: InputGroup) => {
    if (g.count === 0) return;
    const more = g.count > g.first.length ? ', …' : '';
    parts.push(`${g.count} ${label} (${g.first.join(', ')}${more})`);
  };
  named('pending', coverage.pending);
  named('outdated', coverage.outdated);
  named('dead-lettered', coverage.deadLettered);
  return `${coverage.inputs} input${coverage.inputs === 1 ? '' : 's'}: ${parts.join(', ')}`;
}

/**
 * The input rules of a worker definition: its output key, its `quarantine` side output and its
 * skip rule (called with an `ObjectCreated` event of the key, as the worker would see it).
 *
 * @example
 * const rules = inputRulesOf(createNormalizeWorker({ outputBucket }), { bucket: 'rerun-input', prefix: 'incoming/', failurePrefix: 'failures/' });
 */
export function inputRulesOf(
  worker: Pick<WorkerDefinition, 'outputKey' | 'sideOutputs' | 'skipReason'>,
  where: Pick<InputRules, 'bucket' | 'prefix' | 'failurePrefix'>,
): InputRules {
  const quarantine = worker.sideOutputs?.quarantine;
  const skip = worker.skipReason?.bind(worker);
  return {
    ...where,
    outputKey: (source) => worker.outputKey(source),
    ...(quarantine ? { quarantineKey: (source: { bucket: string; key: string }) => quarantine(source) } : {}),
    ...(skip
      ? { skipReason: (source: { bucket: string; key: string }) => skip({ ...source, eventName: 'ObjectCreated:Put' }) }
      : {}),
  };
}
