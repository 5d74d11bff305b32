import { uncheckedDeterministicKey } from '../keys/deterministicKey.js';

/** An object by bucket and key. */
export interface ObjectRef {
  readonly bucket: string;
  readonly key: string;
}

/**
 * A declarative output key rule: `deterministicKey`'s parameters. The output of an input
 * `{bucket, key}` is `{prefix}{bucket}/{key without stripPrefix}{suffix}` (hashed under `_long/`
 * past S3's key limit). It is data: a stack publishes it, and the tools invert it to find each
 * input's output, and each output's input, from listings alone.
 *
 * @example
 * const rule: DeterministicKeyRule = { prefix: 'upper/', stripPrefix: 'incoming/' };
 */
export interface DeterministicKeyRule {
  /** Prefix of every output key, ending with `/` (e.g. `upper/`). */
  readonly prefix: string;
  /**
   * Removed from the start of the input key; the start of the stage's input prefix (or empty).
   * @default ''
   */
  readonly stripPrefix?: string;
  /**
   * Appended to each output key (e.g. `.ndjson`).
   * @default ''
   */
  readonly suffix?: string;
}

/**
 * The escape hatch: a key function and its inverse, for a layout `deterministicKey` cannot say. A
 * function cannot be published: the stack's description says the rule is custom
 * (`{ custom: true }`), and the tools refuse to plan such a stage rather than guess its keys.
 *
 * @example
 * const rule: CustomKeyRule = {
 *   outputKeyOf: (s) => `out/${s.key}.json`,
 *   inputKeyOf: (k) => (k.startsWith('out/') ? { bucket: 'in', key: k.slice(4, -5) } : undefined),
 * };
 */
export interface CustomKeyRule {
  /** The output key of an input: a pure function of its bucket and key. */
  outputKeyOf(source: ObjectRef): string;
  /** The input an output key was built from, or undefined for a key the rule never produces. */
  inputKeyOf(outputKey: string): ObjectRef | undefined;
  /**
   * Prefix every output key starts with (what the stage's role may write).
   * @default none declared
   */
  readonly prefix?: string;
}

/**
 * What a published description says of a custom rule: that there is one, and its prefix when
 * declared. The tools refuse to plan from it.
 *
 * @example
 * const published: PublishedCustomKeyRule = { custom: true, prefix: 'out/' };
 */
export interface PublishedCustomKeyRule {
  readonly custom: true;
  /** @default none declared */
  readonly prefix?: string;
}

/** An output key rule in code: declarative, or the custom escape hatch. */
export type OutputKeyRule = DeterministicKeyRule | CustomKeyRule;

/** An output key rule as data (published, read from a file). */
export type DescribedKeyRule = DeterministicKeyRule | PublishedCustomKeyRule;

/**
 * Whether a rule is the custom escape hatch (functions, or their published placeholder).
 *
 * @example
 * isCustomKeyRule({ prefix: 'upper/' }); // false
 */
export function isCustomKeyRule(
  rule: OutputKeyRule | DescribedKeyRule,
): rule is CustomKeyRule | PublishedCustomKeyRule {
  return 'custom' in rule || 'outputKeyOf' in rule;
}

/**
 * The key function of a rule: `deterministicKey` over its parameters, or the custom function. A
 * published custom rule has no function: asking for one throws, naming the rule's stage.
 *
 * @example
 * outputKeyOf({ prefix: 'upper/', stripPrefix: 'incoming/' })({ bucket: 'in', key: 'incoming/a.csv' }); // 'upper/in/a.csv'
 */
export function outputKeyOf(rule: OutputKeyRule): (source: ObjectRef) => string {
  if ('outputKeyOf' in rule) return (source) => rule.outputKeyOf(source);
  const { prefix, stripPrefix = '', suffix = '' } = rule;
  return (source) => uncheckedDeterministicKey({ prefix, source, stripPrefix, suffix });
}

/**
 * The rule as data: a declarative rule as it is (defaults left out), a custom one as
 * `{ custom: true }` with its prefix.
 *
 * @example
 * describeKeyRule({ prefix: 'upper/', stripPrefix: 'incoming/' }); // { prefix: 'upper/', stripPrefix: 'incoming/' }
 */
export function describeKeyRule(rule: OutputKeyRule | DescribedKeyRule): DescribedKeyRule {
  if (isCustomKeyRule(rule))
    return rule.prefix === undefined ? { custom: true } : { custom: true, prefix: rule.prefix };
  return {
    prefix: rule.prefix,
    ...(rule.stripPrefix ? { stripPrefix: rule.stripPrefix } : {}),
    ...(rule.suffix ? { suffix: rule.suffix } : {}),
  };
}
