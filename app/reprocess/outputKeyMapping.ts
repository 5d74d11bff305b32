import { uncheckedDeterministicKey } from '../../src/keys/deterministicKey.js';

/**
 * How a worker's output keys relate to its input keys, for planning by listings. Outputs live at
 * `{outputRoot}{relative}{suffix}` for an input `{inputPrefix}{relative}` (deterministicKey.ts),
 * except inputs whose output key would pass S3's 1,024 bytes: those are hashed under `_long/`.
 */
export interface OutputKeyMapping {
  /** Input keys start with this (the worker's input prefix, e.g. `incoming/`). */
  readonly inputPrefix: string;
  /** Output keys of this input bucket start with this, e.g. `normalized/{bucket}/`. */
  readonly outputRoot: string;
  /** Appended to each output key, e.g. `.ndjson`. */
  readonly suffix: string;
  /** The output key of an input key (the worker's own function). */
  outputKeyOf(inputKey: string): string;
  /**
   * The input key an output key was derived from, when that can be read from the key alone:
   * `undefined` for a hashed `_long/` key (see {@link isHashedOutputKey}) or a key this mapping
   * never produces (a foreign object).
   */
  inputKeyOf(outputKey: string): string | undefined;
  /** Whether an output key is a hashed long-key output (its input cannot be read from it). */
  isHashedOutputKey(outputKey: string): boolean;
}

const HASHED = /^_long\/[0-9a-f]{64}$/;

/**
 * The mapping of a worker whose keys are `deterministicKey({ prefix, source, stripPrefix, suffix })`,
 * such as the normalize worker (`normalized/{bucket}/{path}.ndjson` from `incoming/{path}`).
 *
 * @example
 * const m = deterministicKeyMapping({ inputBucket: 'in', inputPrefix: 'incoming/', outputPrefix: 'normalized/', suffix: '.ndjson' });
 * m.outputKeyOf('incoming/a.csv'); // 'normalized/in/a.csv.ndjson'
 * m.inputKeyOf('normalized/in/a.csv.ndjson'); // 'incoming/a.csv'
 */
export function deterministicKeyMapping(options: {
  readonly inputBucket: string;
  readonly inputPrefix: string;
  readonly outputPrefix: string;
  readonly suffix: string;
  /**
   * The key rule's stripPrefix: a start of `inputPrefix` (a pipeline description checks it), so
   * every input under the prefix keeps the same rest, and outputs stay in the inputs' key order.
   * @default inputPrefix
   */
  readonly stripPrefix?: string;
}): OutputKeyMapping {
  const { inputBucket, inputPrefix, outputPrefix, suffix } = options;
  const stripPrefix = options.stripPrefix ?? inputPrefix;
  if (!inputPrefix.startsWith(stripPrefix)) {
    throw new RangeError(`stripPrefix "${stripPrefix}" must start the input prefix "${inputPrefix}"`);
  }
  // What the rule keeps of the input prefix sits between the bucket and the relative key.
  const outputRoot = `${outputPrefix}${inputBucket}/${inputPrefix.slice(stripPrefix.length)}`;
  const outputKeyOf = (inputKey: string) =>
    uncheckedDeterministicKey({
      prefix: outputPrefix,
      source: { bucket: inputBucket, key: inputKey },
      stripPrefix,
      suffix,
    });
  const relativeOf = (outputKey: string): string | undefined =>
    outputKey.startsWith(outputRoot) &&
    outputKey.endsWith(suffix) &&
    outputKey.length >= outputRoot.length + suffix.length
      ? outputKey.slice(outputRoot.length, outputKey.length - suffix.length)
      : undefined;
  return {
    inputPrefix,
    outputRoot,
    suffix,
    outputKeyOf,
    isHashedOutputKey: (outputKey) => HASHED.test(relativeOf(outputKey) ?? ''),
    inputKeyOf(outputKey) {
      const relative = relativeOf(outputKey);
      if (relative === undefined || HASHED.test(relative)) return undefined;
      const inputKey = `${inputPrefix}${relative}`;
      // Only keys this mapping produces: anything else at the output prefix is foreign.
      return outputKeyOf(inputKey) === outputKey ? inputKey : undefined;
    },
  };
}
