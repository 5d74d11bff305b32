import type { Readable } from 'node:stream';
import type { OutputHead } from '../done/judgeOutput.js';
import type { SourceIdentity } from '../done/outputMetadata.js';
import { OutputKeyOutsidePrefixesError, WorkerConfigurationError } from '../errors.js';
import type { S3ObjectEvent } from '../intake/parseS3Event.js';
import { checkOptions, type OptionNames } from '../options/checkOptions.js';
import { type CustomKeyRule, type DeterministicKeyRule, outputKeyOf } from '../pipeline/keyRule.js';
import { PipelineDescriptionError } from '../pipeline/PipelineDescriptionError.js';
import { checkKeyRule } from '../pipeline/parsePipelineDescription.js';

/** The values of a worker's `firstRun` (WorkerDefinition.firstRun says what each does). */
export const FIRST_RUNS: readonly FirstRun[] = ['adaptive', 'create', 'check'];
/** How S3's own first delivery of an event starts: see WorkerDefinition.firstRun. */
export type FirstRun = 'adaptive' | 'create' | 'check';

/** Where a transform writes; `write` resolves when it is safe to write more (backpressure). */
export interface OutputStream {
  write(chunk: string | Uint8Array): Promise<void>;
}

/** What a transform reads. */
export interface TransformInput {
  /** The exact input content being read: bucket, key, ETag and version id as returned by GetObject. */
  readonly source: SourceIdentity;
  /** The input's content, streamed, as bytes. */
  readonly body: Readable;
  readonly contentLength: number;
  /**
   * The content as UTF-8 text, chunk by chunk, multi-byte safe across chunks (a character split by a
   * chunk boundary is decoded whole; a BOM is removed). Use it instead of `String(chunk)`, which
   * corrupts split characters at boundaries that differ between runs. Reads `body`: use one of them.
   */
  text(): AsyncIterable<string>;
  /** The content's lines (LF, CRLF or CR; terminators removed), decoded as `text()` does. Reads `body`. */
  lines(): AsyncIterable<string>;
  /**
   * Tells rerun how many decoded bytes the transform has produced from `body` so far, by increments:
   * a transform that decompresses its input calls it with each decompressed chunk's size. Past the
   * worker's limit (maxInputBytes) it throws a non-retryable InputTooLargeError ("decompresses past
   * the limit"); near the function's deadline it throws too (see src/worker/readGuard.ts). Let the
   * error end the transform. A transform that reads `body` as it is needs not call it: the stored
   * size is judged before the read.
   */
  countDecoded(bytes: number): void;
}

/** Where a transform writes. */
export interface TransformOutputs {
  /** The main output, at `outputKey(source)`. */
  readonly output: OutputStream;
  /**
   * A side output declared in `sideOutputs` (e.g. `quarantine`). It is published before the main
   * output and only if something was written to it.
   */
  side(name: string): OutputStream;
}

/** A user's worker: the transform plus how its outputs are named. rerun supplies everything else. */
export interface WorkerDefinition<Summary extends Record<string, string | number> = Record<string, string | number>> {
  /** Name used in logs. */
  readonly name: string;
  /**
   * Version of the transform's code and output schema. Outputs written by another version are
   * rebuilt on the next run, so bump it when the output would change.
   */
  readonly codeVersion: string;
  /** Bucket that receives the outputs. */
  readonly outputBucket: string;
  /** The deterministic output key of an input: a pure function of bucket + key (see deterministicKey). */
  outputKey(source: { readonly bucket: string; readonly key: string }): string;
  /**
   * The key prefixes the worker writes under, main and side outputs (`['upper/']`): the list to give
   * RerunPipeline's `outputPrefixes`, which grants the function's role these and no other. With it,
   * a key function that returns a key elsewhere fails the record at once, not retryable
   * ({@link OutputKeyOutsidePrefixesError}), instead of meeting an AccessDenied from S3.
   * @default not declared: keys are not checked
   */
  readonly outputPrefixes?: readonly string[];
  /**
   * The buckets the worker reads, e.g. `[process.env.INPUT_BUCKETS]` (RerunPipeline and `rerun dev`
   * set INPUT_BUCKETS; read it with inputBucketsFrom): an event or a Batch Operations task naming
   * any other bucket, the output bucket included, is skipped with a reason that names it, before
   * any request (src/worker/inputScope.ts).
   * @default not declared: any bucket but the worker's own outputs (output bucket, under outputPrefixes)
   */
  readonly inputBuckets?: readonly string[];
  /**
   * The key prefixes the worker reads (`['incoming/']`): a key under none of them is skipped with
   * a reason that names it, before any request.
   * @default not declared: any key
   */
  readonly inputPrefixes?: readonly string[];
  /**
   * Deterministic keys of side outputs by name, e.g. `{ quarantine: (s) => ... }`.
   * @default {}
   */
  readonly sideOutputs?: Readonly<
    Record<string, (source: { readonly bucket: string; readonly key: string }) => string>
  >;
  /**
   * Keys where earlier releases put this input's outputs (main or side), e.g. the pre-partition
   * hashed form of an overlong key (`legacyHashedKey` in keys/deterministicKey.ts). Once the current output is published,
   * objects at these keys are removed, so a day never counts an input twice. Return [] when there
   * are none: then no request is made.
   * @default none
   */
  legacyOutputKeys?(source: { readonly bucket: string; readonly key: string }): readonly string[];
  /**
   * Decides before any request whether an event is for this worker; return a reason to skip it.
   * @default accepts every ObjectCreated event
   */
  skipReason?(object: S3ObjectEvent): string | undefined;
  /**
   * Reads the input and writes the outputs; returns a small summary stored with the output. A
   * numeric `quarantined` in it (entries written to a quarantine side output) is reported in the
   * record's outcome and counted by the outcome metrics (src/metrics/).
   */
  transform(input: TransformInput, outputs: TransformOutputs): Promise<Summary>;
  /**
   * Extra validation of an existing output from its HEAD; return a reason to rebuild it.
   * @default none
   */
  validate?(head: OutputHead): string | undefined;
  /**
   * Part size for large outputs; outputs up to this size are one PutObject.
   * @default 5 MiB (OutputWriter's DEFAULT_PART_BYTES: S3's minimum, so a large output holds two parts of memory)
   */
  readonly partBytes?: number;
  /** @default 'application/x-ndjson' */
  readonly contentType?: string;
  /**
   * How S3's own first delivery of an event starts. `'create'`: for an input of at most 8 MiB, it
   * reads the input and creates the output with `If-None-Match: *` at once, and runs the done-check
   * only when that create answers 412 (a new object costs a GET and a PUT; an overwritten one pays for
   * the failed create first); a larger input runs the done-check first.
   * `'check'`: the done-check (a HEAD) comes first, for inputs that are mostly overwritten in place.
   * `'adaptive'`: each warm sandbox chooses per delivery (src/worker/adaptiveFirstRun.ts): create
   * first while fewer than about 7 % of the recent fresh deliveries under the key's directory found an
   * output in place, check first above that (with hysteresis), and check first for a key whose output
   * this sandbox built (a re-upload of the same bytes then costs the HEAD alone).
   * Every other delivery (a retry, a redrive, rerun's own messages) runs the done-check first anyway.
   * @default 'adaptive'
   */
  readonly firstRun?: FirstRun;
}

/**
 * What {@link defineWorker} accepts: a {@link WorkerDefinition} whose `outputKey` may also be a key
 * rule as data, `deterministicKey`'s parameters (`{ prefix: 'upper/', stripPrefix: 'incoming/' }`),
 * or a custom pair `{ outputKeyOf, inputKeyOf }`: the rule a pipeline description
 * (rerun-pipeline/pipeline) holds, so the worker and the stack share one.
 */
export type WorkerDefinitionInput<Summary extends Record<string, string | number> = Record<string, string | number>> =
  Omit<WorkerDefinition<Summary>, 'outputKey'> & {
    readonly outputKey: WorkerDefinition<Summary>['outputKey'] | DeterministicKeyRule | CustomKeyRule;
  };

/** The names of {@link WorkerDefinitionInput}, checked by checkOptions (tsc fails when this list and the type differ). */
export const WORKER_DEFINITION_NAMES = {
  name: true,
  codeVersion: true,
  outputBucket: true,
  outputKey: true,
  outputPrefixes: true,
  inputBuckets: true,
  inputPrefixes: true,
  sideOutputs: true,
  legacyOutputKeys: true,
  skipReason: true,
  transform: true,
  validate: true,
  partBytes: true,
  contentType: true,
  firstRun: true,
} as const satisfies OptionNames<WorkerDefinitionInput>;

/**
 * Declares a worker. Checks the definition at start-up, so a mistake fails the deployment's first
 * invocation loudly instead of one record at a time. `outputKey` is a function, or a key rule as
 * data (`{ prefix, stripPrefix?, suffix? }`, e.g. a stage's `outputKey` from definePipeline), which
 * becomes `deterministicKey` over those parameters.
 *
 * @example
 * export const upper = defineWorker({
 *   name: 'upper',
 *   codeVersion: '1',
 *   outputBucket: 'my-output',
 *   outputKey: { prefix: 'upper/', stripPrefix: 'incoming/' }, // or (s) => deterministicKey({ prefix: 'upper/', source: s })
 *   async transform({ text }, { output }) {
 *     for await (const chunk of text()) await output.write(chunk.toUpperCase());
 *     return {};
 *   },
 * });
 */
export function defineWorker<Summary extends Record<string, string | number>>(
  input: WorkerDefinitionInput<Summary>,
): WorkerDefinition<Summary> {
  checkOptions('defineWorker', input, WORKER_DEFINITION_NAMES, (m) => new WorkerConfigurationError(m));
  const definition = { ...input, outputKey: keyFunction(input.outputKey) } as WorkerDefinition<Summary>;
  for (const field of ['name', 'codeVersion', 'outputBucket'] as const) {
    if (typeof definition[field] !== 'string' || definition[field] === '') {
      throw new WorkerConfigurationError(`defineWorker: "${field}" must be a non-empty string`);
    }
  }
  if (typeof definition.outputKey !== 'function' || typeof definition.transform !== 'function') {
    throw new WorkerConfigurationError('defineWorker: "outputKey" and "transform" must be functions');
  }
  if (definition.firstRun !== undefined && !(FIRST_RUNS as readonly unknown[]).includes(definition.firstRun)) {
    throw new WorkerConfigurationError(
      `defineWorker: "firstRun" must be ${FIRST_RUNS.map((v) => `'${v}'`).join(', ')}, not ${JSON.stringify(definition.firstRun)}`,
    );
  }
  for (const field of ['inputBuckets', 'inputPrefixes'] as const) {
    const list = definition[field];
    if (list !== undefined && (!Array.isArray(list) || list.length === 0 || list.some((v) => typeof v !== 'string'))) {
      throw new WorkerConfigurationError(`defineWorker: "${field}" must list one or more strings`);
    }
  }
  if (definition.inputBuckets?.some((b) => b === '')) {
    throw new WorkerConfigurationError('defineWorker: "inputBuckets" must not hold an empty bucket name');
  }
  const prefixes = definition.outputPrefixes;
  if (prefixes === undefined) return Object.freeze({ ...definition });
  if (
    !Array.isArray(prefixes) ||
    prefixes.length === 0 ||
    prefixes.some((p) => typeof p !== 'string' || !p.endsWith('/'))
  ) {
    throw new WorkerConfigurationError('defineWorker: "outputPrefixes" must list key prefixes, each ending with "/"');
  }
  return Object.freeze({ ...definition, ...keysWithin(definition, prefixes) });
}

/** `outputKey` as a function: as given, or the key function of a rule given as data. */
function keyFunction(outputKey: unknown): WorkerDefinition['outputKey'] {
  if (typeof outputKey === 'function') return outputKey as WorkerDefinition['outputKey'];
  // Absent or not an object: the message every release gave.
  if (typeof outputKey !== 'object' || outputKey === null) {
    throw new WorkerConfigurationError('defineWorker: "outputKey" and "transform" must be functions');
  }
  try {
    const rule = checkKeyRule(outputKey, 'outputKey', { functions: true });
    if ('custom' in rule) {
      throw new WorkerConfigurationError(
        'defineWorker: outputKey { custom: true } is how a published description says a rule is code: give the worker ' +
          'the functions ({ outputKeyOf, inputKeyOf }) or a function',
      );
    }
    return outputKeyOf(rule);
  } catch (error) {
    if (!(error instanceof PipelineDescriptionError)) throw error;
    throw new WorkerConfigurationError(
      `defineWorker: ${error.message} ("outputKey" is a function, or a key rule such as { prefix: 'upper/', stripPrefix: 'incoming/' })`,
    );
  }
}

/** The definition's key functions, each refusing a key outside `prefixes`. */
function keysWithin(
  definition: WorkerDefinition<Record<string, string | number>>,
  prefixes: readonly string[],
): Pick<WorkerDefinition, 'outputKey' | 'sideOutputs'> {
  const checked =
    (name: string, keyOf: (source: { readonly bucket: string; readonly key: string }) => string) =>
    (source: { readonly bucket: string; readonly key: string }) => {
      const key = keyOf.call(definition, source);
      if (!prefixes.some((p) => key.startsWith(p))) throw new OutputKeyOutsidePrefixesError(name, key, prefixes);
      return key;
    };
  const sides = definition.sideOutputs;
  return {
    outputKey: checked('outputKey', definition.outputKey),
    ...(sides
      ? { sideOutputs: Object.fromEntries(Object.entries(sides).map(([n, f]) => [n, checked(`sideOutputs.${n}`, f)])) }
      : {}),
  };
}
