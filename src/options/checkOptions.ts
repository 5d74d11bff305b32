import type { RerunError } from '../errors.js';
import { nearestName } from '../pipeline/nearestName.js';

/**
 * Every key of `T`, of each member when `T` is a union (`keyof (A | B)` would keep only the shared
 * ones); none of a primitive member (`false | { hourUtc }` has the object's keys only).
 */
type KeysOfEach<T> = T extends object ? keyof T : never;

/**
 * The known option names of an options type, as an object of `true`s. Declare a list with
 * `satisfies OptionNames<XOptions>`: a field added to the interface and missing from the list, or a
 * name in the list that the interface lacks, fails `tsc` (an object literal's `satisfies` checks
 * excess names as well as missing ones), so the list and the type never drift apart.
 *
 * @example
 * const OPTION_NAMES = { client: true, tableName: true } as const satisfies OptionNames<LedgerOptions>;
 */
export type OptionNames<T> = { readonly [K in KeysOfEach<T> & string]-?: true };

/**
 * A names list `K` for options `T` with no name `T` lacks: where a list is declared without
 * `satisfies OptionNames<T>` (it cannot import the type without an import cycle), the call checks it.
 */
export type ExactOptionNames<T, K> = K & { readonly [P in Exclude<keyof K, KeysOfEach<T>>]: never };

/** The unknown names of `options` (its own enumerable keys the list lacks); none for a non-object. */
export function unknownOptions(options: unknown, known: Readonly<Record<string, true>>): string[] {
  if (typeof options !== 'object' || options === null) return [];
  return Object.keys(options).filter((name) => !Object.hasOwn(known, name));
}

function hasUnknown(options: unknown, known: Readonly<Record<string, true>>): boolean {
  if (typeof options !== 'object' || options === null) return false;
  for (const name of Object.keys(options)) if (!Object.hasOwn(known, name)) return true;
  return false;
}

/**
 * The one place rerun checks an options object's names: refuses one it does not know, naming it and
 * the nearest known name, with the error of the caller's family (a construct's
 * StackConfigurationInvalidError, the ledger's LedgerConfigurationError, a worker's
 * WorkerConfigurationError...). A misspelt option would otherwise be ignored and its default used
 * silently (middy and aws-solutions-constructs refuse one the same way). Not-objects are left to the
 * caller's own checks.
 *
 * @example
 * checkOptions('RerunPipeline', props, PROP_NAMES, (m) => new StackConfigurationInvalidError([m]));
 * // RerunPipeline: unknown option 'maxConcurency'; did you mean 'maxConcurrency'?
 */
export function checkOptions<T, const K extends OptionNames<NoInfer<T>>>(
  subject: string,
  options: T,
  known: ExactOptionNames<NoInfer<T>, K>,
  refuse: (message: string) => RerunError,
): void {
  const problem = unknownOptionsProblem(subject, options, known);
  if (problem !== undefined) throw refuse(problem);
}

/**
 * {@link checkOptions}' message for `options`, or undefined when every name is known: for a caller
 * that gathers several problems into one error (a construct's props and its nested option objects).
 *
 * @example
 * unknownOptionsProblem('RerunPipeline worker', props.worker, WORKER_SOURCE_NAMES); // undefined or a message
 */
export function unknownOptionsProblem<T>(
  subject: string,
  options: T,
  known: OptionNames<NoInfer<T>>,
): string | undefined {
  const names = known as Readonly<Record<string, true>>;
  // The common case allocates nothing: some checked functions run once per key (deterministicKey).
  if (!hasUnknown(options, names)) return undefined;
  return unknownOptionsMessage(subject, unknownOptions(options, names), Object.keys(names));
}

/**
 * `RerunPipeline: unknown option 'maxConcurency'; did you mean 'maxConcurrency'?`, or for several
 * `X: unknown options 'a' (did you mean 'b'?), 'c'`; the known names are listed when none is near.
 */
export function unknownOptionsMessage(subject: string, unknown: readonly string[], known: readonly string[]): string {
  const hints = unknown.map((name) => ({ name, nearest: nearestName(name, known) }));
  const listKnown = hints.every((h) => h.nearest === undefined) ? ` (its options: ${known.join(', ')})` : '';
  const [only] = hints;
  if (hints.length === 1 && only !== undefined) {
    const hint = only.nearest === undefined ? '' : `; did you mean '${only.nearest}'?`;
    return `${subject}: unknown option '${only.name}'${hint}${listKnown}`;
  }
  const each = hints.map((h) =>
    h.nearest === undefined ? `'${h.name}'` : `'${h.name}' (did you mean '${h.nearest}'?)`,
  );
  return `${subject}: unknown options ${each.join(', ')}${listKnown}`;
}
