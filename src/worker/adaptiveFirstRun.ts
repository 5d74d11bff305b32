import { WorkerConfigurationError } from '../errors.js';

/**
 * Which path S3's fresh first delivery of a small input takes (src/worker/processObject.ts):
 * `'create'` reads the input and creates the output with `If-None-Match: *` at once (a new object
 * costs a GET and a PUT; an output already in place costs a 412 before the done-check, and a wasted
 * read and transform when it is done, while one to replace is replaced by what the create built),
 * `'check'` runs the done-check (a HEAD) first (a new object costs one
 * request more; an output in place costs the HEAD, and a duplicate on a versioned bucket nothing more).
 */
export const FirstRunPath = {
  CREATE: 'create',
  CHECK: 'check',
} as const;
export type FirstRunPath = (typeof FirstRunPath)[keyof typeof FirstRunPath];

/** Why {@link AdaptiveFirstRun.choose} answered as it did (logged with the delivery). */
export const FirstRunReason = {
  /** The prefix's recent rate of outputs found in place is under the break-even (or nothing is known yet). */
  PREFIX_MOSTLY_NEW: 'prefix-mostly-new',
  /** This sandbox has seen no fresh delivery under the prefix, and probes with the HEAD (`unknownPrefix: 'check'`). */
  PREFIX_UNKNOWN: 'prefix-unknown',
  /** The prefix's recent rate of outputs found in place is above the break-even. */
  PREFIX_OFTEN_IN_PLACE: 'prefix-often-in-place',
  /** This sandbox built (or found done) this key's output from the event's very bytes: a re-upload or a duplicate. */
  SAME_BYTES_BUILT_HERE: 'same-bytes-built-here',
  /** This sandbox built (or found done) this key's output from other bytes: an overwrite. */
  KEY_BUILT_HERE: 'key-built-here',
} as const;
export type FirstRunReason = (typeof FirstRunReason)[keyof typeof FirstRunReason];

/** What a first-run policy is asked about: the event's object. */
export interface FirstRunObject {
  readonly bucket: string;
  readonly key: string;
  /** The event's eTag (quoted or not), when it has one. */
  readonly eTag?: string | undefined;
}

/**
 * What processObject asks and tells about first runs. `AdaptiveFirstRun` is the one the batch
 * handler keeps per sandbox; a test (the simulation tier) may give another, e.g. one that lets the
 * explorer pick each path. `choose` may answer with a promise for that reason.
 */
export interface FirstRunPolicy {
  /** The path for S3's fresh first delivery of `object`. */
  choose(object: FirstRunObject): FirstRunPath | Promise<FirstRunPath>;
  /**
   * What the first round of such a delivery found: an output already at the key (the create's 412,
   * or a HEAD that found one) or not.
   */
  observe(object: FirstRunObject, found: { readonly outputInPlace: boolean }): void;
  /** The delivery ended with the output built from `sourceEtag` in place (or, `undefined`, with none). */
  settle(object: FirstRunObject, sourceEtag: string | undefined): void;
}

/** Options for {@link AdaptiveFirstRun}. */
export interface AdaptiveFirstRunOptions {
  /**
   * Prefixes (bucket and the key's directory) whose rate is kept; the least recently seen is dropped.
   * @default 256
   */
  readonly maxPrefixes?: number;
  /**
   * Keys whose built output (with its source ETag) is remembered; the least recently used is dropped.
   * @default 1024
   */
  readonly maxKeys?: number;
  /**
   * Weight of the newest delivery in a prefix's moving rate (an exponentially weighted average):
   * 1/32 forgets a delivery's weight by half in about 22 deliveries. Until a prefix has had
   * `1 / weight` deliveries its rate is their plain mean, so its first deliveries count in full:
   * one output found in place on a prefix it knows nothing else of turns it to checking first,
   * instead of three wasted creates (a read, a transform and a 412'd PUT each) before it turns.
   * @default 1/32
   */
  readonly weight?: number;
  /**
   * The path for a prefix this sandbox has seen no fresh delivery of. `'create'`: a new object costs
   * 2 requests from the first, and a prefix whose outputs are in place (a re-upload) pays one
   * wasted create (a GET and a PUT answered 412) before its rate turns it. `'check'`: the first
   * delivery of each prefix probes with the HEAD, the cheaper signal (one request that costs a
   * thirteenth of the wasted create at list prices), so a re-upload never creates in vain and a new
   * object pays one HEAD per prefix per sandbox.
   * @default 'create'
   */
  readonly unknownPrefix?: FirstRunPath;
  /**
   * A prefix that creates first turns to checking first when its rate rises above this.
   * @default CHECK_FIRST_ABOVE (0.09)
   */
  readonly checkAbove?: number;
  /**
   * A prefix that checks first turns back to creating first when its rate falls below this.
   * @default CREATE_FIRST_BELOW (0.05)
   */
  readonly createBelow?: number;
}

/**
 * The measured break-even (issue 32, list prices and the bench's modelled latencies, Lambda
 * included): creating first is cheaper while fewer than about 7 % of fresh deliveries find an output
 * in place (it is faster below about 33 %; cost decides here).
 */
export const FIRST_RUN_BREAK_EVEN = 0.07;
/** Above the break-even by a margin, so that one duplicate among new objects does not turn a prefix over. */
export const CHECK_FIRST_ABOVE = 0.09;
/** Below the break-even by a margin, so that a prefix that turned over does not flap back at once. */
export const CREATE_FIRST_BELOW = 0.05;

interface PrefixState {
  rate: number;
  path: FirstRunPath;
  /** Fresh deliveries observed (counted up to 1 / weight, where the rate becomes a moving average). */
  seen: number;
}

/**
 * The adaptive first run (`firstRun: 'adaptive'`, the default): a warm sandbox keeps, per input
 * prefix, the recent rate of S3's fresh deliveries that found an output in place, and creates first
 * while that rate stays under the break-even, checks first above it, with hysteresis
 * ({@link CHECK_FIRST_ABOVE}, {@link CREATE_FIRST_BELOW}). It also remembers the keys whose output
 * it built or found done, with their source ETags: a delivery for such a key checks first, so a
 * re-upload of the same bytes (or S3's duplicate) costs the HEAD alone on a versioned bucket.
 *
 * Pure and deterministic: no clock, no randomness, no I/O; both maps are bounded (least recently
 * used dropped first). The choice only picks between two paths that are each correct on their own.
 *
 * @example
 * const firstRun = new AdaptiveFirstRun();
 * const path = firstRun.choose({ bucket: 'in', key: 'incoming/a.csv', eTag: '"abc"' }); // 'create'
 * firstRun.observe({ bucket: 'in', key: 'incoming/a.csv' }, { outputInPlace: false });
 * firstRun.settle({ bucket: 'in', key: 'incoming/a.csv' }, 'abc');
 */
export class AdaptiveFirstRun implements FirstRunPolicy {
  private readonly prefixes = new Map<string, PrefixState>();
  private readonly keys = new Map<string, string>();
  private readonly maxPrefixes: number;
  private readonly maxKeys: number;
  private readonly weight: number;
  private readonly checkAbove: number;
  private readonly createBelow: number;
  private readonly unknownPrefix: FirstRunPath;

  constructor(options: AdaptiveFirstRunOptions = {}) {
    this.maxPrefixes = positiveInteger(options.maxPrefixes ?? 256, 'maxPrefixes');
    this.maxKeys = positiveInteger(options.maxKeys ?? 1024, 'maxKeys');
    this.weight = options.weight ?? 1 / 32;
    this.checkAbove = options.checkAbove ?? CHECK_FIRST_ABOVE;
    this.createBelow = options.createBelow ?? CREATE_FIRST_BELOW;
    this.unknownPrefix = options.unknownPrefix ?? FirstRunPath.CREATE;
    if (this.unknownPrefix !== FirstRunPath.CREATE && this.unknownPrefix !== FirstRunPath.CHECK)
      throw new WorkerConfigurationError("AdaptiveFirstRun: \"unknownPrefix\" must be 'create' or 'check'");
    if (!(this.weight > 0 && this.weight <= 1))
      throw new WorkerConfigurationError('AdaptiveFirstRun: "weight" must be in (0, 1]');
    if (!(this.createBelow >= 0 && this.createBelow <= this.checkAbove && this.checkAbove <= 1)) {
      throw new WorkerConfigurationError('AdaptiveFirstRun: needs 0 <= createBelow <= checkAbove <= 1');
    }
  }

  choose(object: FirstRunObject): FirstRunPath {
    return this.decide(object).path;
  }

  /** The path and why (for the log line). */
  decide(object: FirstRunObject): { readonly path: FirstRunPath; readonly reason: FirstRunReason } {
    const id = keyId(object);
    const built = this.keys.get(id);
    if (built !== undefined) {
      touch(this.keys, id, built);
      const same = object.eTag !== undefined && stripQuotes(object.eTag) === built;
      return {
        path: FirstRunPath.CHECK,
        reason: same ? FirstRunReason.SAME_BYTES_BUILT_HERE : FirstRunReason.KEY_BUILT_HERE,
      };
    }
    const state = this.prefixes.get(prefixId(object));
    if (state === undefined && this.unknownPrefix === FirstRunPath.CHECK)
      return { path: FirstRunPath.CHECK, reason: FirstRunReason.PREFIX_UNKNOWN };
    if (state?.path === FirstRunPath.CHECK)
      return { path: FirstRunPath.CHECK, reason: FirstRunReason.PREFIX_OFTEN_IN_PLACE };
    return { path: FirstRunPath.CREATE, reason: FirstRunReason.PREFIX_MOSTLY_NEW };
  }

  observe(object: FirstRunObject, found: { readonly outputInPlace: boolean }): void {
    const id = prefixId(object);
    const state = this.prefixes.get(id) ?? { rate: 0, path: FirstRunPath.CREATE, seen: 0 };
    // The plain mean of the first 1 / weight deliveries, then the moving average: a prefix's first
    // observation is all it knows, so it weighs in full.
    if (state.seen * this.weight < 1) state.seen++;
    state.rate += Math.max(this.weight, 1 / state.seen) * ((found.outputInPlace ? 1 : 0) - state.rate);
    if (state.path === FirstRunPath.CREATE && state.rate > this.checkAbove) state.path = FirstRunPath.CHECK;
    else if (state.path === FirstRunPath.CHECK && state.rate < this.createBelow) state.path = FirstRunPath.CREATE;
    touch(this.prefixes, id, state);
    evict(this.prefixes, this.maxPrefixes);
  }

  settle(object: FirstRunObject, sourceEtag: string | undefined): void {
    const id = keyId(object);
    if (sourceEtag === undefined) {
      this.keys.delete(id);
      return;
    }
    touch(this.keys, id, stripQuotes(sourceEtag));
    evict(this.keys, this.maxKeys);
  }

  /** A prefix's moving rate of outputs found in place, and its path (for tests and logs). */
  prefixState(object: FirstRunObject): { readonly rate: number; readonly path: FirstRunPath } | undefined {
    const state = this.prefixes.get(prefixId(object));
    return state ? { rate: state.rate, path: state.path } : undefined;
  }

  /** How many prefixes and keys are held. */
  get size(): { readonly prefixes: number; readonly keys: number } {
    return { prefixes: this.prefixes.size, keys: this.keys.size };
  }
}

/** The bucket and the key's directory: `in` + `incoming/2026/a.csv` -> `in/incoming/2026/`. */
function prefixId(object: FirstRunObject): string {
  return `${object.bucket}/${object.key.slice(0, object.key.lastIndexOf('/') + 1)}`;
}

function keyId(object: FirstRunObject): string {
  return `${object.bucket}/${object.key}`;
}

/** Moves an entry to the most recently used end (a Map keeps insertion order). */
function touch<V>(map: Map<string, V>, id: string, value: V): void {
  map.delete(id);
  map.set(id, value);
}

function evict<V>(map: Map<string, V>, max: number): void {
  for (const id of map.keys()) {
    if (map.size <= max) return;
    map.delete(id);
  }
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1)
    throw new WorkerConfigurationError(`AdaptiveFirstRun: "${name}" must be a positive integer`);
  return value;
}

function stripQuotes(etag: string): string {
  return etag.replace(/^"|"$/g, '');
}
