import { createHash } from 'node:crypto';
import { encodeSource, MetadataKey } from '../../src/done/outputMetadata.js';
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

/** One input as the listing of the input bucket describes it. */
export interface CoverageInput {
  readonly key: string;
  /** S3's LastModified, epoch ms. */
  readonly lastModified: number;
  /** ETag without quotes (the content the worker builds from). @default unknown */
  readonly etag?: string;
}

/** What the listings of one day hold, for {@link judgeInputCoverage}. */
export interface CoverageListing {
  /** The day's inputs (listed in the input bucket), with S3's LastModified (epoch ms) and ETag. */
  readonly inputs: readonly CoverageInput[];
  /** Output and quarantine keys of the day (listed in the output bucket), with LastModified. */
  readonly outputs: ReadonlyMap<string, number>;
  /** The day's failure index entries (src/failures/failureIndex.ts). */
  readonly failures: readonly FailureIndexEntry[];
  /**
   * Output key to the input ETag that output records it was built from (`rerun-source-etag`, read
   * by one HEAD of each output {@link coverageCandidates} names, see {@link recordedSourceEtag}).
   * @default none: every output older than its input is outdated
   */
  readonly recordedSources?: ReadonlyMap<string, string>;
}

/** An output the listings nominate as outdated: only its recorded source can say (one HEAD). */
export interface CoverageCandidate {
  readonly inputKey: string;
  readonly outputKey: string;
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
  /**
   * SHA-256 (hex) of every input's key and class ({@link coverageDigest}): equal digests mean the
   * same inputs, classified the same way. A summary's lineage hash includes it.
   */
  readonly digest: string;
}

/**
 * The outputs whose listing disagrees with their input's: written before the input's LastModified.
 * A timestamp only nominates them: identical bytes uploaded again (s5cmd sync, `aws s3 cp` twice, a
 * copy onto itself) give the input a later LastModified and the same ETag, and the worker rightly
 * writes nothing. The caller HEADs each (bounded concurrency) and passes what they record as
 * {@link CoverageListing.recordedSources}; an output the listing calls current gets no request.
 *
 * @example
 * for (const c of coverageCandidates(listing, rules)) heads.push(store.headMetadata(bucket, c.outputKey));
 */
export function coverageCandidates(listing: CoverageListing, rules: InputRules): CoverageCandidate[] {
  const candidates: CoverageCandidate[] = [];
  for (const input of listing.inputs) {
    if (input.etag === undefined) continue; // nothing to compare a recorded source with
    const outputKey = rules.outputKey({ bucket: rules.bucket, key: input.key });
    const written = listing.outputs.get(outputKey);
    if (written !== undefined && written < input.lastModified) candidates.push({ inputKey: input.key, outputKey });
  }
  return candidates;
}

/**
 * The input ETag an output records it was built from, when its metadata names exactly this input
 * (src/done/outputMetadata.ts, as the worker's done-check reads it); undefined otherwise.
 *
 * @example
 * recordedSourceEtag(head.metadata, { bucket: 'rerun-input', key: 'incoming/dt=2026-01-05/a.csv' }); // '9b2cf5...'
 */
export function recordedSourceEtag(
  metadata: Readonly<Record<string, string>>,
  source: { readonly bucket: string; readonly key: string },
): string | undefined {
  if (metadata[MetadataKey.SOURCE] !== encodeSource(source)) return undefined;
  return metadata[MetadataKey.SOURCE_ETAG] || undefined;
}

/** What the pipeline made of one input of a day, judged from listings. */
export const InputClass = {
  /**
   * Its deterministic output exists and was written no earlier than the input's last change, or
   * records it was built from the input's current ETag (identical bytes uploaded again).
   */
  COVERED: 'covered',
  /** The worker skips it by its key (no output expected). */
  SKIPPED: 'skipped',
  /** Only a quarantine object (the whole file quarantined). */
  QUARANTINED: 'quarantined',
  /**
   * The worker gave up on it: a failure record says why (a non-retryable failure, or its last
   * receive). Its message is in the DLQ, or on its way there after the queue's receives left: the
   * worker never deletes a given-up message, and a listing cannot tell the two apart, so one name
   * serves both, in `rerun status`, the summary's manifest and `rerun redrive`.
   */
  DEAD_LETTERED: 'dead-lettered',
  /**
   * An output older than the input, built from another content (its recorded source ETag is not the
   * input's, or could not be read): changed since, its new output is not there yet.
   */
  OUTDATED: 'outdated',
  /** No output and no failure record: not processed yet, or still being retried. */
  PENDING: 'pending',
} as const;
export type InputClass = (typeof InputClass)[keyof typeof InputClass];

/** One input of a day and its class. */
export interface ClassifiedInput {
  readonly key: string;
  readonly class: InputClass;
}

/** How many keys each group keeps. */
export const FIRST_KEYS = 3;

/**
 * Classifies every input of a day from listings (and a HEAD where they disagree): covered when its
 * deterministic output exists and was written no earlier than the input's LastModified, or, written
 * earlier, records the input's current ETag as its source ({@link coverageCandidates}: as the worker
 * judges, a re-upload of identical bytes leaves its output current); otherwise skipped (by the
 * worker's key rule), quarantined (a quarantine object only), dead-lettered (a failure index entry),
 * outdated (an output older than the input, of another content) or pending. S3 sets LastModified on
 * both sides, so the comparison needs no clock of ours; an output written after the input is not
 * HEADed, so one written just after an overwrite by a worker that read the older content counts as
 * covered until the overwrite's event rewrites it. Pure: no SDK.
 *
 * @example
 * const coverage = judgeInputCoverage(listing, rules);
 * coverage.pending.count; // inputs without an output yet
 */
export function judgeInputCoverage(listing: CoverageListing, rules: InputRules): InputCoverage {
  const classified = classifyInputs(listing, rules);
  const keysOf = (...classes: InputClass[]) => classified.filter((c) => classes.includes(c.class)).map((c) => c.key);
  const group = (keys: string[]): InputGroup => ({ count: keys.length, first: keys.slice(0, FIRST_KEYS) });
  return {
    inputs: classified.length,
    covered: keysOf(InputClass.COVERED).length,
    skipped: keysOf(InputClass.SKIPPED).length,
    quarantined: keysOf(InputClass.QUARANTINED).length,
    deadLettered: group(keysOf(InputClass.DEAD_LETTERED)),
    pending: group(keysOf(InputClass.PENDING)),
    outdated: group(keysOf(InputClass.OUTDATED)),
    digest: coverageDigest(classified),
  };
}

/**
 * The class of every input of a day, in key order: the one rule that `rerun status`, the backfill
 * planner and the summary's own coverage record share (see {@link judgeInputCoverage}). A failure
 * record counts only for an input without a current output. Pure: no SDK.
 *
 * @example
 * classifyInputs(listing, rules); // [{ key: 'incoming/dt=2026-01-05/a.csv', class: 'covered' }, ...]
 */
export function classifyInputs(listing: CoverageListing, rules: InputRules): ClassifiedInput[] {
  const failures = new Set<string>(); // hashes of the inputs with a failure record
  for (const f of listing.failures) failures.add(f.inputHash);
  const inputs = [...listing.inputs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return inputs.map((input) => {
    const source = { bucket: rules.bucket, key: input.key };
    const outputKey = rules.outputKey(source);
    const written = listing.outputs.get(outputKey);
    const sameContent = input.etag !== undefined && listing.recordedSources?.get(outputKey) === input.etag;
    const kind: InputClass =
      written !== undefined && (written >= input.lastModified || sameContent)
        ? InputClass.COVERED
        : rules.skipReason?.(source) !== undefined
          ? InputClass.SKIPPED
          : failures.has(inputKeyHash(input.key))
            ? InputClass.DEAD_LETTERED
            : written !== undefined
              ? InputClass.OUTDATED
              : rules.quarantineKey && listing.outputs.has(rules.quarantineKey(source))
                ? InputClass.QUARANTINED
                : InputClass.PENDING;
    return { key: input.key, class: kind };
  });
}

/**
 * SHA-256 (hex) of the canonical JSON of every input's key and class (in key order, as
 * {@link classifyInputs} returns them). It covers every input however many there are, where the
 * recorded key lists stop at a bound.
 *
 * @example
 * coverageDigest(classifyInputs(listing, rules)); // '9b1e...'
 */
export function coverageDigest(classified: readonly ClassifiedInput[]): string {
  const canonical = JSON.stringify(classified.map((c) => [c.key, c.class]));
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
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
