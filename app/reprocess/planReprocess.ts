import type { OutputKeyMapping } from './outputKeyMapping.js';
import { compareS3Keys } from './s3KeyOrder.js';

/** One object as a listing (ListObjectsV2, or an inventory row) describes it. */
export interface ListedObject {
  readonly key: string;
  /** ETag without quotes. */
  readonly etag: string;
  readonly size: number;
  /** LastModified, epoch milliseconds. */
  readonly lastModified: number;
}

/** What planning found for one input or output. */
export const ReprocessState = {
  /** An input with no output. */
  MISSING: 'missing',
  /**
   * An output built from another input ETag than the input's listed one (its recorded source, read
   * by one HEAD). From the listing alone an output older than its input is only a candidate
   * ({@link ReprocessVerdict.checkSource}): a re-upload of identical bytes has a later LastModified
   * and the same ETag, and the worker rightly writes nothing for it.
   */
  STALE: 'stale',
  /** With `--verify`: the output is not a complete, intact rerun output of this input. */
  INVALID: 'invalid',
  /** With `--verify`: a valid output of another code version. */
  OLD_CODE: 'old-code',
  /** The output looks current (listing), or is (with `--verify`). */
  CURRENT: 'current',
  /** An output whose input is gone. */
  ORPHAN: 'orphan',
  /** An input the worker does not process (its own skip rule: unsupported type, folder marker). */
  SKIPPED: 'skipped',
} as const;
export type ReprocessState = (typeof ReprocessState)[keyof typeof ReprocessState];

/** The verdict on one input (or, for orphans, one output). */
export interface ReprocessVerdict {
  readonly state: ReprocessState;
  /** The input key (for orphans: the input it was built from, when the key tells). */
  readonly inputKey?: string;
  readonly input?: ListedObject;
  readonly outputKey: string;
  readonly output?: ListedObject;
  readonly reason: string;
  /**
   * A current-looking output written during a code rollout window (see codeVersionCutoff.ts):
   * only the exact done-check (one HEAD) can tell which code built it.
   */
  readonly checkCode?: boolean;
  /**
   * The listing nominates this output as stale (its LastModified is earlier than its input's), but
   * only the input ETag it records tells (one HEAD, as the worker's done-check reads it): equal to
   * the input's listed ETag, it is current (identical bytes uploaded again: `aws s3 cp` twice,
   * `s5cmd sync`, a copy onto itself); another one, stale. runReprocess sends that HEAD for every
   * such verdict (verifyVerdicts.ts), so the tools call an input current exactly when the worker would.
   */
  readonly checkSource?: boolean;
}

/** Which inputs a reprocess enqueues. */
export const ReprocessMode = {
  /** Inputs with no output. */
  MISSING: 'missing',
  /** Also stale outputs (and, with --verify, invalid and old-code ones). The default. */
  STALE: 'stale',
  /** Every input the worker processes: a verification pass (the done-check absorbs current ones). */
  ALL: 'all',
} as const;
export type ReprocessMode = (typeof ReprocessMode)[keyof typeof ReprocessMode];

const SELECTED: Record<ReprocessMode, ReadonlySet<ReprocessState>> = {
  [ReprocessMode.MISSING]: new Set([ReprocessState.MISSING]),
  [ReprocessMode.STALE]: new Set([
    ReprocessState.MISSING,
    ReprocessState.STALE,
    ReprocessState.INVALID,
    ReprocessState.OLD_CODE,
  ]),
  [ReprocessMode.ALL]: new Set([
    ReprocessState.MISSING,
    ReprocessState.STALE,
    ReprocessState.INVALID,
    ReprocessState.OLD_CODE,
    ReprocessState.CURRENT,
  ]),
};

/**
 * Whether a verdict is enqueued in a mode (orphans never are: `--prune` removes them).
 *
 * @example
 * isSelected({ state: 'stale', outputKey: 'k', reason: '' }, ReprocessMode.MISSING); // false
 */
export function isSelected(verdict: Pick<ReprocessVerdict, 'state'>, mode: ReprocessMode): boolean {
  return SELECTED[mode].has(verdict.state);
}

/**
 * Reads a `--mode` value.
 *
 * @example
 * parseReprocessMode('stale'); // 'stale'
 */
export function parseReprocessMode(value: string): ReprocessMode | undefined {
  return (Object.values(ReprocessMode) as string[]).includes(value) ? (value as ReprocessMode) : undefined;
}

/** The I/O planning needs besides the two listings, injected (the core imports no SDK). */
export interface PlanLookups {
  /**
   * The object at exactly this output key, or undefined (e.g. ListObjectsV2 with `Prefix` = the
   * key and `MaxKeys` 1: the key itself sorts first among the keys it prefixes).
   */
  findOutput(outputKey: string): Promise<ListedObject | undefined>;
  /** Whether this input key exists now (same kind of request on the input bucket). */
  inputExists(inputKey: string): Promise<boolean>;
}

/** Options of {@link planReprocess}. */
export interface PlanReprocessOptions {
  /** Inputs under the prefix, in ListObjectsV2 order (UTF-8 binary). */
  readonly inputs: AsyncIterable<ListedObject>;
  /** Outputs under the matching output prefix, in ListObjectsV2 order. */
  readonly outputs: AsyncIterable<ListedObject>;
  readonly mapping: OutputKeyMapping;
  readonly lookups: PlanLookups;
  /** The worker's own skip rule for an input key (undefined: processed). @default none */
  readonly skipReason?: (inputKey: string) => string | undefined;
  /**
   * When the current code version first ran (from its marker): outputs older than `since` are
   * old-code from the listing alone; those up to `until` are flagged for the exact check.
   * @default unknown: code versions are seen only by --verify
   */
  readonly codeCutoff?: { readonly codeVersion: string; readonly since: number; readonly until: number };
  /**
   * Whether the output listing covers every hashed long-key output of the input bucket (the prefix
   * is the whole input prefix), so an unmatched one is an orphan. With a narrower prefix a hashed
   * output met in the listing may belong to an input outside it: it is left alone.
   * @default true
   */
  readonly checkLongOrphans?: boolean;
  /**
   * Most hashed long-key outputs and long inputs remembered to find long-key orphans at the end
   * (their input cannot be read from the key). Beyond it they are counted in `uncheckedLong`.
   * @default 10000
   */
  readonly longKeyLimit?: number;
}

/** Counts of a plan, kept while it streams (bounded memory). */
export interface PlanCounts {
  inputs: number;
  outputs: number;
  /** Inputs whose output was looked up by key: one request each (see planReprocess). */
  lookedUp: number;
  /** Outputs with no input in the merge whose input was checked by key: one request each. */
  inputChecks: number;
  /**
   * Outputs older than their input by the listings ({@link ReprocessVerdict.checkSource}): each
   * gets one HEAD that reads the input ETag it was built from. Only these, never every output.
   */
  sourceChecks: number;
  /** Objects under the output prefix that this mapping never produces: left alone. */
  foreign: number;
  /** Hashed long-key outputs that could not be checked for orphans (past `longKeyLimit`). */
  uncheckedLong: number;
}

/**
 * Plans a reprocess by listings: a merge-join of the inputs and the outputs, page by page, with
 * memory bounded whatever the object count. Pure: the listings and lookups are injected.
 *
 * Why a merge-join is correct here, and where it is not by itself. An input `{inputPrefix}{r}` has
 * its output at `{outputRoot}{r}{suffix}`. For two inputs r < r' where r is not a prefix of r',
 * the first differing character lies inside both, so their output keys sort the same way. When r
 * is a proper prefix of r' (`a.csv` and `a.csv-2.csv`, or `a.csv.bak`), the suffix is compared
 * with the rest of r' and the order may flip. In a sorted listing every key that r prefixes comes
 * right after r, so one input of lookahead tells whether r is such a "prefix input". The merge
 * runs on the other inputs, whose output keys are therefore in listing order; each prefix input
 * (and each long input, whose output key is a hash) is looked up by key instead: one request,
 * rare in practice. An output the merge does not match is an orphan unless its input exists (one
 * request each: prefix inputs' outputs, and real orphans). No state grows with the object count
 * except the capped long-key sets.
 *
 * What a listing can tell without a HEAD: each object's key, ETag, size and LastModified. The
 * output's ETag is its own, not the input's it was built from (that is in its metadata, which a
 * listing does not return), so the listings only nominate: `output.LastModified <
 * input.LastModified` makes a candidate ({@link ReprocessVerdict.checkSource}), and one HEAD of its
 * output (verifyVerdicts.ts) reads the input ETag it records: a timestamp may nominate, only the
 * recorded source makes it stale, as the worker judges. Equal times count as current: LastModified
 * has one-second resolution on HEAD (and listings often carry .000), and a worker that builds within
 * the second of an upload is the common case; a re-upload within the same second as the build, an
 * output built from content read before a later upload, a corrupted output and an old-code output
 * are seen only by `--verify`.
 *
 * @example
 * for await (const verdict of planReprocess({ inputs, outputs, mapping, lookups })) {
 *   if (isSelected(verdict, ReprocessMode.STALE)) enqueue(verdict.inputKey);
 * }
 */
export async function* planReprocess(
  options: PlanReprocessOptions,
  counts: PlanCounts = emptyPlanCounts(),
): AsyncGenerator<ReprocessVerdict> {
  const { mapping, lookups } = options;
  const longLimit = options.longKeyLimit ?? 10_000;
  const longOutputsOfInputs = new Set<string>();
  const unmatchedLong: ListedObject[] = [];
  let longOverflow = false;

  const outputs = options.outputs[Symbol.asyncIterator]();
  let output = await nextOf(outputs, counts);

  async function* unmatched(object: ListedObject): AsyncGenerator<ReprocessVerdict> {
    if (mapping.isHashedOutputKey(object.key)) {
      if (options.checkLongOrphans === false) return;
      if (unmatchedLong.length < longLimit) unmatchedLong.push(object);
      else counts.uncheckedLong++;
      return;
    }
    const inputKey = mapping.inputKeyOf(object.key);
    if (inputKey === undefined) {
      counts.foreign++;
      return;
    }
    counts.inputChecks++;
    if (await lookups.inputExists(inputKey)) return; // a prefix input's output: judged with its input
    yield {
      state: ReprocessState.ORPHAN,
      inputKey,
      outputKey: object.key,
      output: object,
      reason: 'input is gone',
    };
  }

  const judge = (...args: Parameters<typeof judgeListing>): ReprocessVerdict => {
    const verdict = judgeListing(...args);
    if (verdict.checkSource) counts.sourceChecks++;
    return verdict;
  };

  const inputs = options.inputs[Symbol.asyncIterator]();
  let input = await nextOf(inputs, counts, true);
  while (input) {
    const next = await nextOf(inputs, counts, true);
    const outputKey = mapping.outputKeyOf(input.key);
    const skip = options.skipReason?.(input.key);
    if (skip) {
      yield { state: ReprocessState.SKIPPED, inputKey: input.key, input, outputKey, reason: skip };
    } else if (mapping.isHashedOutputKey(outputKey) || next?.key.startsWith(input.key)) {
      // Out of the merge's order: look the output up by its key.
      counts.lookedUp++;
      if (mapping.isHashedOutputKey(outputKey)) {
        if (longOutputsOfInputs.size < longLimit) longOutputsOfInputs.add(outputKey);
        else longOverflow = true;
      }
      yield judge(input, outputKey, await lookups.findOutput(outputKey), options.codeCutoff);
    } else {
      while (output && compareS3Keys(output.key, outputKey) < 0) {
        yield* unmatched(output);
        output = await nextOf(outputs, counts);
      }
      if (output && output.key === outputKey) {
        yield judge(input, outputKey, output, options.codeCutoff);
        output = await nextOf(outputs, counts);
      } else {
        yield judge(input, outputKey, undefined);
      }
    }
    input = next;
  }
  while (output) {
    yield* unmatched(output);
    output = await nextOf(outputs, counts);
  }
  for (const object of unmatchedLong) {
    if (longOverflow) counts.uncheckedLong++;
    else if (!longOutputsOfInputs.has(object.key)) {
      yield { state: ReprocessState.ORPHAN, outputKey: object.key, output: object, reason: 'long-key input is gone' };
    }
  }
}

/**
 * The listing-level verdict on an input and the object at its output key.
 *
 * @example
 * judgeListing(input, 'normalized/in/a.csv.ndjson', undefined).state; // 'missing'
 */
export function judgeListing(
  input: ListedObject,
  outputKey: string,
  output: ListedObject | undefined,
  codeCutoff?: PlanReprocessOptions['codeCutoff'],
): ReprocessVerdict {
  const base = { inputKey: input.key, input, outputKey };
  if (!output) return { ...base, state: ReprocessState.MISSING, reason: 'no output' };
  if (output.lastModified < input.lastModified) {
    // A candidate only: a later LastModified with the same content (identical bytes uploaded again)
    // leaves the output current, as the worker's done-check finds. The HEAD of verifyVerdicts decides.
    return {
      ...base,
      output,
      state: ReprocessState.STALE,
      reason: `output (${new Date(output.lastModified).toISOString()}) is older than its input (${new Date(input.lastModified).toISOString()}); its recorded source is not checked`,
      checkSource: true,
    };
  }
  if (codeCutoff && output.lastModified < codeCutoff.since) {
    return {
      ...base,
      output,
      state: ReprocessState.OLD_CODE,
      reason: `built before code version ${codeCutoff.codeVersion} first ran (${new Date(codeCutoff.since).toISOString()})`,
    };
  }
  if (codeCutoff && output.lastModified < codeCutoff.until) {
    return {
      ...base,
      output,
      state: ReprocessState.CURRENT,
      reason: `built during the rollout of ${codeCutoff.codeVersion}: checked by HEAD`,
      checkCode: true,
    };
  }
  return { ...base, output, state: ReprocessState.CURRENT, reason: 'output is newer than its input (listing)' };
}

/**
 * Zeroed {@link PlanCounts}.
 *
 * @example
 * const counts = emptyPlanCounts();
 */
export function emptyPlanCounts(): PlanCounts {
  return { inputs: 0, outputs: 0, lookedUp: 0, inputChecks: 0, sourceChecks: 0, foreign: 0, uncheckedLong: 0 };
}

async function nextOf(
  iterator: AsyncIterator<ListedObject>,
  counts: PlanCounts,
  isInput = false,
): Promise<ListedObject | undefined> {
  const step = await iterator.next();
  if (step.done) return undefined;
  if (isInput) counts.inputs++;
  else counts.outputs++;
  return step.value;
}
