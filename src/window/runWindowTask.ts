import { PublishConflictError } from '../errors.js';
import { type Logger, silentLogger } from '../logging/logger.js';
import { withFields } from '../logging/withFields.js';
import type { PartitionWindow } from '../partitions/partitionScheme.js';
import { buildFromParts, pruneWindowParts } from './buildFromParts.js';
import { buildWindowBytes, type Restart, windowOutputWrite } from './buildWindowBytes.js';
import { WindowTooLargeError } from './errors.js';
import { judgeWindowHead, WindowOutputState } from './judgeWindowHead.js';
import { listWindowLineage } from './listWindowLineage.js';
import { ensureWindowMarker, removeIfPresent, stageValidatePublish } from './publishWindowOutput.js';
import type { CompiledWindowTask, WindowOutcome, WindowRunOptions } from './WindowTaskDefinition.js';
import { windowLineageHash } from './windowLineage.js';
import { windowOutputKeys } from './windowOutputLayout.js';

/**
 * Lineage entries one invocation builds by default: a window of at most this many directly, and each
 * part of a larger window built from its parts. Sized for a window stage's default 900 s timeout
 * (WINDOW_STAGE_DEFAULT_SETTINGS): on the bench, an input costs about 12 ms from parts behind AWS's
 * latency, so a part of 50,000 takes about 600 s, and a day of a million inputs (hours of about
 * 42,000) is built in about 15 invocations. A stage given a shorter timeout takes proportionally
 * fewer (about 55 an invocation second from parts).
 */
export const DEFAULT_MAX_WINDOW_INPUTS = 50_000;
export { DEFAULT_MAX_WINDOW_OUTPUT_BYTES } from './buildWindowBytes.js';

/**
 * Brings one window's output up to date, idempotently: a task that owns its output slice.
 *
 * 1. Lineage: list the window's inputs with their ETags (sorted; keys in no window are reported
 *    skipped, with their reason); with `recordInputs`, the task's record of its inputs too. Hash
 *    the lineage with the window's label and the code version.
 * 2. Done-check: HEAD the published output; when its integrity holds and it records this lineage
 *    hash, code version and record, it is done: only make sure its marker is right, write nothing else.
 * 3. Build: the task's build reads every input with `If-Match: <listed ETag>`; a 412/404 means an
 *    input changed meanwhile, and a body that fails mid-read a dropped connection: start over. A
 *    window above maxInputs with `parts` is built from its parts instead (buildFromParts.ts).
 * 4. Stage -> validate -> publish (publishWindowOutput.ts); a 412 means another writer published
 *    first: start over (its output may be current).
 * 5. Record the manifest marker and remove superseded ones.
 *
 * A crash at any point leaves either the previous output or the new one; a leftover staging copy or a
 * missing or extra marker is repaired by the next run (and the judge calls the window stale meanwhile).
 *
 * @throws WindowTooLargeError (not retryable) for a window above maxInputs (without parts; with parts,
 *   a part above it) or maxOutputBytes, or one whose pace cannot be read within one invocation;
 *   PublishConflictError (retryable) after maxRounds.
 * @example
 * const outcome = await runWindowTask(task, task.scheme.parseWindow('2026-12-05'), { store, reader });
 */
export async function runWindowTask<Result, InputRecord>(
  task: CompiledWindowTask<Result, InputRecord>,
  window: PartitionWindow,
  options: WindowRunOptions,
): Promise<WindowOutcome<Result>> {
  const maxRounds = options.maxRounds ?? 4;
  const label = task.definition.partitionLabel?.(window) ?? window.name;
  const logger = withFields(options.logger ?? silentLogger, { task: task.definition.name, partition: label });
  let last = '';
  for (let round = 1; round <= maxRounds; round++) {
    const result = await attempt(task, window, label, options, logger);
    if (typeof result !== 'string') return result;
    last = result;
    logger.info(`${task.words.output} attempt restarts: ${result}`, { round });
  }
  throw new PublishConflictError(
    `The ${task.words.output} of ${label} could not be completed in ${maxRounds} rounds (last: ${last}); ` +
      'the message will be retried.',
  );
}

async function attempt<Result, InputRecord>(
  task: CompiledWindowTask<Result, InputRecord>,
  window: PartitionWindow,
  label: string,
  options: WindowRunOptions,
  logger: Logger,
): Promise<WindowOutcome<Result> | Restart> {
  const { definition, words } = task;
  const { store, reader } = options;
  const { bucket } = definition.output;
  const { codeVersion } = definition;
  const keys = windowOutputKeys(task.scheme, window, definition.output);

  // 1. Lineage (and the task's record of its inputs).
  const { lineage: listed, skipped } = await listWindowLineage(task as never, window, reader);
  const maxInputs = options.maxInputs ?? DEFAULT_MAX_WINDOW_INPUTS;
  const fromParts = listed.length > maxInputs && definition.parts !== undefined;
  if (listed.length > maxInputs && !fromParts) {
    throw new WindowTooLargeError(
      `${label} has ${listed.length} lineage entries (${words.entries}), above the ${words.output}'s bound of ` +
        `${maxInputs} (maxInputs): nothing was read or written; raise maxInputs with the ${words.functionName}'s ` +
        'memory and timeout (or give the task parts of a finer grain), then redrive this task',
    );
  }
  const lineage = listed.map(({ source, path, etag }) => ({ source, path, etag }));
  const hash = windowLineageHash({ partition: label, codeVersion, entries: lineage });
  const record = await definition.recordInputs?.(window, { lineage: listed, reader });
  const recordDigest = record?.digest;
  const recorded = recordDigest !== undefined ? { recordDigest } : {};

  // 2. Done-check.
  const head = await store.head(bucket, keys.outputKey);
  const verdict = judgeWindowHead(head, {
    partition: label,
    lineageHash: hash,
    codeVersion,
    ...recorded,
    words: { output: words.output, window: words.window },
  });
  const base = { window, outputKey: keys.outputKey, lineageHash: hash, inputs: lineage.length, skipped };
  const markerTarget = { bucket, outputKey: keys.outputKey, markerPrefix: keys.markerPrefix };
  if (verdict.state === WindowOutputState.CURRENT) {
    const marker = { lineageHash: hash, outputEtag: verdict.etag, codeVersion, ...recorded };
    const repaired = await ensureWindowMarker(store, reader, markerTarget, marker);
    // A missing marker means a publish was interrupted, possibly before its staging copy was removed.
    if (repaired) await removeIfPresent(store, bucket, keys.stagingKey(hash));
    return {
      ...base,
      status: 'skipped',
      reason: `already done: ${words.output} is current (${lineage.length} inputs)${repaired ? '; manifest marker repaired' : ''}`,
      etag: verdict.etag,
      markerRepaired: repaired,
    };
  }
  if (verdict.state !== WindowOutputState.MISSING) {
    logger.info(`rebuilding ${words.output}`, { was: verdict.state, why: verdict.reason });
  }

  // 3. Build from exactly the listed versions.
  const round = { hash, lineage, record: record?.value };
  const built = fromParts
    ? await buildFromParts(task, window, label, options, logger, round, maxInputs)
    : await buildWindowBytes(task, definition.build, window, label, options, round);
  if (typeof built === 'string') return built;
  const { result } = built;
  const partCounts: { readonly total: number; readonly built: number } | undefined =
    'parts' in built ? (built.parts as { total: number; built: number }) : undefined;
  const write = windowOutputWrite(task as never, label, options, built.bytes, {
    hash,
    entries: lineage.length,
    recorded,
  });

  // 4. Stage -> validate -> publish, then 5. the marker.
  const published = await stageValidatePublish(
    {
      store,
      reader,
      bucket,
      key: keys.outputKey,
      stagingKey: keys.stagingKey(hash),
      noun: words.output,
      head: verdict.state === WindowOutputState.MISSING ? undefined : verdict,
      validate: (bytes) => {
        try {
          return definition.validate?.(bytes, { partition: label, lineageHash: hash, codeVersion });
        } catch (error) {
          // A validation that throws (JSON.parse of bad bytes) refuses the copy like one that says why.
          return `its validation threw: ${error instanceof Error ? error.message : String(error)}`;
        }
      },
    },
    write,
  );
  if (typeof published === 'string') return published;
  await ensureWindowMarker(store, reader, markerTarget, {
    lineageHash: hash,
    outputEtag: published.etag,
    codeVersion,
    ...recorded,
  });
  // 6. The parts the output no longer reads: all of them after a direct build.
  const removed = await pruneWindowParts(task as never, window, options, logger, partNamesOf(built));
  return {
    ...base,
    status: 'processed',
    reason:
      (verdict.state === WindowOutputState.MISSING
        ? `${words.output} published (${lineage.length} inputs)`
        : `${words.output} replaced (${verdict.reason})`) + partsNote(partCounts, removed),
    etag: published.etag,
    ...(verdict.state === WindowOutputState.MISSING
      ? {}
      : { previous: { state: verdict.state, reason: verdict.reason } }),
    result,
    ...(partCounts ? { parts: partCounts } : {}),
  };
}

/** The parts a build from parts combined; none for a direct build. */
function partNamesOf(built: object): readonly string[] {
  return 'partNames' in built ? (built.partNames as readonly string[]) : [];
}

/** What a processed window's reason says of its parts: how it was built from them, and those removed. */
function partsNote(counts: { readonly total: number; readonly built: number } | undefined, removed: number): string {
  return (
    (counts ? `, built from ${counts.total} parts (${counts.built} built now)` : '') +
    (removed > 0 ? `; ${removed} ${removed === 1 ? 'part' : 'parts'} no longer read removed` : '')
  );
}
