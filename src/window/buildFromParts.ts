import { isRerunErrorNamed } from '../errors.js';
import type { Logger } from '../logging/logger.js';
import type { PartitionWindow } from '../partitions/partitionScheme.js';
import { type TimeWindow, timeWindowAt } from '../partitions/timeWindow.js';
import { DeleteStatus } from '../s3/S3ObjectStore.js';
import { type BuildRound, buildWindowBytes, type Restart, windowOutputWrite } from './buildWindowBytes.js';
import { WindowPartsPendingError, WindowTooLargeError } from './errors.js';
import { judgeWindowHead, WindowOutputState } from './judgeWindowHead.js';
import { stageValidatePublish } from './publishWindowOutput.js';
import type { CompiledWindowTask, WindowParts, WindowRunOptions } from './WindowTaskDefinition.js';
import { type WindowLineageEntry, windowLineageHash } from './windowLineage.js';
import { type WindowOutputKeys, windowOutputKeys } from './windowOutputLayout.js';

/**
 * A window too large for one invocation, built from its parts (WindowTaskDefinition's `parts`): the
 * window's lineage is split by the part each input lies in; each part is done-checked and, when it
 * is not current, built from exactly its share of the lineage and published with the window's own
 * protocol (staging copy, digest check, `If-None-Match: *` or `If-Match`); then `combine` reads the
 * parts pinned to the ETags just seen or written and builds the window's output. A part replaced
 * meanwhile (another writer of the window) ends the round like a changed input: start over. Parts
 * already current are not built again, so a window whose parts outlast an invocation continues on the
 * next receive; the deadline stops it between or inside parts (retryable), never half-published.
 */

/** The source name of the parts in the lineage `combine` reads. */
export const PARTS_SOURCE = '_parts';

/** The root of the parts of a task's windows, under its output prefix. */
const PARTS_DIR = '_parts/';

/** Where the parts of one window are: their root, and each part's keys. */
export interface WindowPartKeys {
  /** `{prefix}_parts/{window path}`: each part's output is `{root}{part}/{fileName}`. */
  readonly root: string;
  /** A part's output and staging keys: windowOutputKeys' layout, under the parts' roots. */
  of(part: PartitionWindow): WindowOutputKeys;
}

/**
 * The keys of a window's parts: pure functions of the window and the part, laid out as a window's
 * own (windowOutputLayout.ts) under `{prefix}_parts/` and `{stagingPrefix}_parts/`.
 *
 * @example
 * windowPartKeys(task, day).of(hour).outputKey; // 'daily/_parts/dt=2026-12-05/2026-12-05T13/counts.json'
 */
export function windowPartKeys(task: CompiledWindowTask<unknown, unknown>, window: PartitionWindow): WindowPartKeys {
  const { prefix, fileName, stagingPrefix = `${prefix}_staging/` } = task.definition.output;
  const roots = { prefix: `${prefix}${PARTS_DIR}`, stagingPrefix: `${stagingPrefix}${PARTS_DIR}` };
  const [path = ''] = task.scheme.prefixesOf(window as never);
  return {
    root: `${roots.prefix}${path}`,
    of: (part) => windowOutputKeys(task.scheme, window, { ...roots, fileName: `${part.name}/${fileName}` }),
  };
}

/** A part of a window and its share of the lineage. */
interface Part {
  readonly window: TimeWindow;
  readonly entries: WindowLineageEntry[];
}

/**
 * The window's lineage split by part, in window order (each part's entries keep the lineage's order).
 * An entry's part is the part that holds the start of the input's own window.
 */
function splitByPart(
  task: CompiledWindowTask<unknown, unknown>,
  parts: WindowParts<unknown, unknown>,
  lineage: readonly WindowLineageEntry[],
): Part[] {
  const schemes = new Map(task.sources.map((s) => [s.source.name, s.scheme]));
  const byName = new Map<string, Part>();
  for (const entry of lineage) {
    const reading = schemes.get(entry.source)?.windowOfKey(entry.path);
    // Listed entries were classified by these schemes: a time window is always found.
    if (reading === undefined || 'reason' in reading || reading.window.kind !== 'time') {
      throw new Error(`lineage entry ${entry.source}:${entry.path} has no time window`);
    }
    const part = timeWindowAt(parts.grain, reading.window.start);
    const found = byName.get(part.name) ?? { window: part, entries: [] };
    byName.set(part.name, found);
    found.entries.push(entry);
  }
  return [...byName.values()].sort((a, b) => a.window.start - b.window.start);
}

/**
 * Builds a window's output from its parts. Returns the combined bytes with what `combine` returned
 * and how many parts this run built, or a restart.
 *
 * @throws WindowTooLargeError when a part alone is above maxInputs (nothing is read);
 *   WindowPartsPendingError (retryable) when the deadline comes near after this run built a part,
 *   DeadlineNearError (retryable) when it comes near before.
 * @example
 * const built = await buildFromParts(task, day, '2026-12-05', options, logger, { hash, lineage, record }, 20_000);
 */
export async function buildFromParts<Result, InputRecord>(
  task: CompiledWindowTask<Result, InputRecord>,
  window: PartitionWindow,
  label: string,
  options: WindowRunOptions,
  logger: Logger,
  round: BuildRound<InputRecord>,
  maxInputs: number,
): Promise<
  | {
      readonly result: Result;
      readonly bytes: Buffer;
      readonly parts: { total: number; built: number };
      /** The names of the parts the output was combined from (the ones pruneWindowParts keeps). */
      readonly partNames: readonly string[];
    }
  | Restart
> {
  const { definition, words } = task;
  const parts = definition.parts as WindowParts<Result, InputRecord>;
  const generic = task as unknown as CompiledWindowTask<unknown, unknown>;
  const split = splitByPart(generic, parts as WindowParts<unknown, unknown>, round.lineage);
  const largest = split.reduce((max, p) => (p.entries.length > max.entries.length ? p : max));
  if (largest.entries.length > maxInputs) {
    throw new WindowTooLargeError(
      `${label} has ${round.lineage.length} lineage entries (${words.entries}); its ${parts.grain} part ` +
        `${largest.window.name} alone has ${largest.entries.length}, above the bound of ${maxInputs} (maxInputs): ` +
        `nothing was read or written; raise maxInputs with the ${words.functionName}'s memory and timeout ` +
        '(or give the task parts of a finer grain), then redrive this task',
    );
  }
  const { bucket, fileName } = definition.output;
  const { codeVersion } = definition;
  const noun = `${words.output} part`;
  const partKeys = windowPartKeys(generic, window);
  const read: WindowLineageEntry[] = [];
  let built = 0;
  for (const part of split) {
    const partLabel = `${label}/${part.window.name}`;
    const keys = partKeys.of(part.window);
    const hash = windowLineageHash({ partition: partLabel, codeVersion, entries: part.entries });
    const verdict = judgeWindowHead(await options.store.head(bucket, keys.outputKey), {
      partition: partLabel,
      lineageHash: hash,
      codeVersion,
      words: { output: noun, window: words.window },
    });
    let etag: string;
    if (verdict.state === WindowOutputState.CURRENT) etag = verdict.etag;
    else {
      const bytes = await buildPart(
        task,
        part,
        partLabel,
        options,
        { hash, lineage: part.entries, record: undefined },
        { label, built, current: read.length, total: split.length },
      );
      if (typeof bytes === 'string') return bytes;
      const write = windowOutputWrite(generic, partLabel, options, bytes, {
        hash,
        entries: part.entries.length,
        recorded: {},
      });
      const published = await stageValidatePublish(
        {
          store: options.store,
          reader: options.reader,
          bucket,
          key: keys.outputKey,
          stagingKey: keys.stagingKey(hash),
          noun,
          head: verdict.state === WindowOutputState.MISSING ? undefined : verdict,
          // A part is an intermediate: its digest is checked; the task's own check is for the window.
          validate: () => undefined,
        },
        write,
      );
      if (typeof published === 'string') return `${noun} ${part.window.name}: ${published}`;
      etag = published.etag;
      built++;
      logger.info(`${noun} built`, { part: part.window.name, inputs: part.entries.length });
    }
    read.push({ source: PARTS_SOURCE, path: `${part.window.name}/${fileName}`, etag });
  }
  // The parts as the inputs of `combine`, read under the parts' root with If-Match on each ETag.
  const partsTask = {
    ...task,
    sources: [{ source: { name: PARTS_SOURCE, prefix: partKeys.root }, bucket }],
  } as unknown as CompiledWindowTask<Result, InputRecord>;
  const combined = await buildWindowBytes(partsTask, parts.combine.bind(parts), window, label, options, {
    ...round,
    lineage: read,
  });
  if (typeof combined === 'string') return `${noun}s: ${combined}`;
  return { ...combined, parts: { total: split.length, built }, partNames: split.map((p) => p.window.name) };
}

/**
 * Removes the parts of `window` its output no longer reads, once it is published: every part after a
 * direct build (a window that shrank to `maxInputs` or fewer inputs), and after a build from parts
 * those outside `keep` (a part whose inputs are all gone). One listing of the window's parts; each
 * delete is conditional on the ETag listed, so a part a concurrent writer has just rewritten is kept
 * (its build reads it pinned to its ETag, and a part removed under it starts its round over).
 * Housekeeping: a failure is logged, never the window's outcome. A task without parts lists
 * nothing. Returns how many were removed.
 *
 * @example
 * await pruneWindowParts(task, day, { store, reader }, logger, ['2026-12-05T13']);
 */
export async function pruneWindowParts(
  task: CompiledWindowTask<unknown, unknown>,
  window: PartitionWindow,
  options: Pick<WindowRunOptions, 'store' | 'reader'>,
  logger: Logger,
  keep: readonly string[],
): Promise<number> {
  if (task.definition.parts === undefined) return 0;
  const { bucket, fileName } = task.definition.output;
  const { root } = windowPartKeys(task, window);
  const kept = new Set(keep);
  let removed = 0;
  try {
    for (const object of await options.reader.listAll(bucket, { prefix: root })) {
      const part = object.key.slice(root.length, object.key.length - fileName.length - 1);
      // Only a part's output: `{root}{part}/{fileName}`. Anything else under the root is left alone.
      if (!object.key.endsWith(`/${fileName}`) || part === '' || part.includes('/') || kept.has(part)) continue;
      if ((await options.store.deleteIfMatch(bucket, object.key, object.etag)) === DeleteStatus.DELETED) removed++;
    }
  } catch (error) {
    logger.warn('parts no longer read were not all removed', {
      removed,
      error: error instanceof Error ? error.message : String(error),
    });
  }
  return removed;
}

/**
 * Builds one part with the task's `build`. A deadline before it ends says how far the window got:
 * a WindowPartsPendingError once this invocation built a part (the handler goes on in a new
 * message), the DeadlineNearError itself when it built none (the message comes back as any other).
 */
async function buildPart<Result, InputRecord>(
  task: CompiledWindowTask<Result, InputRecord>,
  part: Part,
  partLabel: string,
  options: WindowRunOptions,
  round: BuildRound<InputRecord>,
  progress: { readonly label: string; readonly built: number; readonly current: number; readonly total: number },
): Promise<Buffer | Restart> {
  try {
    const built = await buildWindowBytes(task, task.definition.build, part.window, partLabel, options, round);
    return typeof built === 'string' ? built : built.bytes;
  } catch (error) {
    if (!isRerunErrorNamed(error, 'DeadlineNearError') || progress.built === 0) throw error;
    throw new WindowPartsPendingError(progress.label, progress, { cause: error });
  }
}
