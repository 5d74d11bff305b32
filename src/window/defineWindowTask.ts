import { RerunError } from '../errors.js';
import { checkOptions, unknownOptionsProblem } from '../options/checkOptions.js';
import { windowsIntersecting } from '../partitions/mapWindows.js';
import { type PartitionScheme, type PartitionWindow, partitionScheme } from '../partitions/partitionScheme.js';
import { type PartitionSpec, TimeGrain } from '../partitions/partitionSpec.js';
import { grainTiles } from '../partitions/timeWindow.js';
import type { S3PartitionStore } from '../s3/S3PartitionStore.js';
import { WindowTaskConfigurationError } from './errors.js';
import { listWindowStatus, type WindowStatusReport } from './listWindowStatus.js';
import { resolveInputSource } from './resolveInputSource.js';
import { runWindowTask } from './runWindowTask.js';
import type {
  CompiledWindowTask,
  ResolvedInputSource,
  WindowOutcome,
  WindowRunOptions,
  WindowTaskDefinition,
  WindowWords,
} from './WindowTaskDefinition.js';
import { WINDOW_PARTS_NAMES, WINDOW_TASK_DEFINITION_NAMES } from './WindowTaskDefinition.js';

/** A checked window task, ready to run one window at a time. */
export interface WindowTask<Result = unknown, InputRecord = undefined> extends CompiledWindowTask<Result, InputRecord> {
  /**
   * Brings one window's output up to date (see runWindowTask): builds and publishes it when it is
   * missing or outdated, writes nothing when it is current.
   */
  run(window: string | PartitionWindow, options: WindowRunOptions): Promise<WindowOutcome<Result>>;
  /**
   * The state of each window from `from` to `to` (window names, both included), from listings alone
   * (see listWindowStatus): what status shows and what a backfill of the range runs (every window not
   * published).
   */
  status(from: string, to: string, options: { readonly reader: S3PartitionStore }): Promise<WindowStatusReport[]>;
}

const DEFAULT_WORDS: Required<WindowWords> = {
  output: 'window output',
  window: 'window',
  built: 'built',
  functionName: 'window task function',
  entries: 'inputs',
  maxBytesOption: 'maxOutputBytes',
};

/** A window of the scheme to try the definition's mappings on. */
function sampleWindow(scheme: PartitionScheme): PartitionWindow {
  const { spec } = scheme;
  if (spec.kind === 'time') return partitionScheme(spec).windowAt(0);
  return scheme.parseWindow(spec.kind === 'static' ? (spec.keys[0] ?? '') : 'all');
}

/** The input's scheme at the task's grain, when the input's windows tile the task's: one listing per window. */
function listingSchemeOf(own: PartitionSpec, input: PartitionSpec): PartitionScheme | undefined {
  if (own.kind !== 'time' || input.kind !== 'time' || !grainTiles(input.grain, own.grain)) return undefined;
  try {
    return partitionScheme({ kind: 'time', grain: own.grain, template: input.template });
  } catch {
    return undefined; // the input's template cannot be read at the task's grain: list window by window
  }
}

/**
 * Checks a window task's definition and returns the task. Every problem is found here, at start-up,
 * never mid-run: a template that cannot name its windows, an input whose windows do not map onto the
 * task's (a static list under time windows), two inputs of one name, an output layout that does not
 * give each window one prefix of its own.
 *
 * @throws WindowTaskConfigurationError, PartitionTemplateInvalidError, PartitionKeysInvalidError
 * @example
 * const task = defineWindowTask({ name: 'daily-counts', codeVersion: 'daily-counts@1', partitions, inputs, output, build });
 * await task.run('2026-12-05', { store: new S3ObjectStore(s3), reader: new S3PartitionStore(s3) });
 */
export function defineWindowTask<Result = unknown, InputRecord = undefined>(
  definition: WindowTaskDefinition<Result, InputRecord>,
): WindowTask<Result, InputRecord> {
  checkOptions(
    'defineWindowTask',
    definition,
    WINDOW_TASK_DEFINITION_NAMES,
    (m) => new WindowTaskConfigurationError(definition.name || '(unnamed)', m),
  );
  const refuse = (problem: string): never => {
    throw new WindowTaskConfigurationError(definition.name || '(unnamed)', problem);
  };
  if (!definition.name) refuse('it has no name');
  if (!definition.codeVersion) refuse('it has no codeVersion');
  if (typeof definition.build !== 'function') refuse('build is not a function');
  const { output } = definition;
  if (!output.bucket) refuse('output.bucket is empty');
  if (!output.fileName || output.fileName.includes('/')) refuse('output.fileName is empty or holds "/"');
  const scheme = partitionScheme(definition.partitions);
  const sample = sampleWindow(scheme);
  const [path, ...more] = scheme.prefixesOf(sample as never);
  if (more.length > 0 || (path !== '' && !path?.endsWith('/'))) {
    refuse(
      `its own windows have no prefix of their own (${[path, ...more].join(', ')}): give partitions a template ` +
        "whose finest field is the grain's (dt={yyyy}-{MM}-{dd} for daily)",
    );
  }
  if (definition.inputs.length === 0) refuse('it has no inputs');
  const names = new Set<string>();
  const sources = definition.inputs.map((input) => {
    const source = resolveInputSource(input, output.bucket);
    if (!source.name || names.has(source.name)) refuse(`the input name "${source.name}" is empty or appears twice`);
    names.add(source.name);
    const inputScheme = partitionScheme(source.partitions);
    try {
      windowsIntersecting(inputScheme, sample);
    } catch (error) {
      if (!RerunError.isRerunError(error)) throw error;
      refuse(`the input "${source.name}": ${error.message}`);
    }
    return {
      source,
      bucket: source.bucket,
      scheme: inputScheme,
      listingScheme: listingSchemeOf(definition.partitions, source.partitions),
    };
  });
  if (definition.parts !== undefined) {
    const problem = partsProblem(
      definition,
      sources.map((s) => s.source),
    );
    if (problem !== undefined) refuse(problem);
  }
  const compiled: CompiledWindowTask<Result, InputRecord> = {
    definition,
    scheme,
    sources,
    words: { ...DEFAULT_WORDS, ...definition.words },
  };
  return {
    ...compiled,
    run: (window, options) =>
      runWindowTask(compiled, typeof window === 'string' ? scheme.parseWindow(window) : window, options),
    status: (from, to, options) => listWindowStatus(compiled as never, scheme.windowsBetween(from, to), options.reader),
  };
}

/**
 * Why a task's `parts` cannot be used, or undefined: parts split a time window into the windows of a
 * finer grain that tile it, and each input's windows must lie inside one part.
 */
function partsProblem(
  definition: WindowTaskDefinition<unknown, unknown>,
  sources: readonly ResolvedInputSource[],
): string | undefined {
  const { parts, partitions } = definition;
  if (parts === undefined) return undefined;
  const unknown = unknownOptionsProblem('parts', parts, WINDOW_PARTS_NAMES);
  if (unknown !== undefined) return unknown;
  if (typeof parts.combine !== 'function') return 'parts.combine is not a function';
  const grains: readonly string[] = Object.values(TimeGrain);
  if (!grains.includes(parts.grain)) return `parts.grain "${String(parts.grain)}" is not one of ${grains.join(', ')}`;
  if (partitions.kind !== 'time') return `parts need a time scheme; its partitions are ${partitions.kind}`;
  if (parts.grain === partitions.grain || !grainTiles(parts.grain, partitions.grain)) {
    return `${parts.grain} parts do not split a ${partitions.grain} window (the parts' windows must be finer and tile it)`;
  }
  for (const source of sources) {
    const spec = source.partitions;
    if (spec.kind !== 'time' || !grainTiles(spec.grain, parts.grain)) {
      const what = spec.kind === 'time' ? `${spec.grain} windows` : `a ${spec.kind} scheme`;
      return `the input "${source.name}" has ${what}, which do not lie inside one ${parts.grain} part`;
    }
  }
  return undefined;
}
