import type { Readable } from 'node:stream';
import type { Logger } from '../logging/logger.js';
import type { OptionNames } from '../options/checkOptions.js';
import type { PartitionScheme, PartitionWindow } from '../partitions/partitionScheme.js';
import type { PartitionSpec, TimeGrain } from '../partitions/partitionSpec.js';
import type { S3ObjectStore } from '../s3/S3ObjectStore.js';
import type { S3PartitionStore } from '../s3/S3PartitionStore.js';
import type { WindowLineageEntry } from './windowLineage.js';

/**
 * The shapes of a window task: what a user defines (a build function over one window's inputs) and
 * what rerun needs to run it. Types only; defineWindowTask (defineWindowTask.ts) checks a definition
 * and runWindowTask (runWindowTask.ts) runs it.
 */

/**
 * One input of a window task: objects under a root, grouped by a partition scheme. A window of the
 * task reads the windows of this scheme that intersect it (a day reads its 24 hours).
 *
 * @example
 * const hourly: WindowObjectsSource = { name: 'hourly', prefix: 'events/',
 *   partitions: { kind: 'time', grain: 'hourly', template: 'year={yyyy}/month={MM}/day={dd}/hour={HH}' } };
 */
export interface WindowObjectsSource {
  /** The name its lineage entries carry (unique among the task's inputs). */
  readonly name: string;
  /**
   * The bucket holding it.
   * @default the task's output bucket
   */
  readonly bucket?: string;
  /** The root its partition template is read under (`events/`, or `''` for the bucket's root). */
  readonly prefix: string;
  readonly partitions: PartitionSpec;
}

/**
 * The published outputs of another window task as an input: a stage chained onto another. Its
 * bucket, root and scheme are that task's; only its published outputs are inputs (its manifest
 * markers and staging copies are its own bookkeeping, not inputs), and any other object under a
 * window's prefix is reported skipped with its reason.
 *
 * @example
 * const days: WindowTaskOutputsSource = { name: 'daily', outputsOf: dailyCounts };
 */
export interface WindowTaskOutputsSource {
  /** The name its lineage entries carry (unique among the task's inputs). */
  readonly name: string;
  /** The upstream task (its definition is what is read). */
  readonly outputsOf: {
    readonly definition: Pick<WindowTaskDefinition<unknown, unknown>, 'name' | 'partitions' | 'output'>;
  };
}

/** One input of a window task. */
export type WindowInputSource = WindowObjectsSource | WindowTaskOutputsSource;

/** An input as the engine reads it: where, under which scheme, and which of its keys are inputs. */
export interface ResolvedInputSource {
  readonly name: string;
  readonly bucket: string;
  readonly prefix: string;
  readonly partitions: PartitionSpec;
  /**
   * What a key (relative to `prefix`) in one of the input's windows is: an input, the upstream
   * task's bookkeeping (left out: not an input), or the reason it is skipped.
   */
  classify(path: string, window: PartitionWindow): 'input' | 'bookkeeping' | { readonly reason: string };
}

/** One input of a window as the build reads it: exactly the version its lineage names. */
export interface WindowInput {
  /** The name of the input ({@link WindowInputSource}) it comes from. */
  readonly source: string;
  readonly bucket: string;
  readonly key: string;
  /** Key relative to its source's root. */
  readonly path: string;
  /** ETag (without quotes) the lineage records; the body was read with `If-Match` on it. */
  readonly etag: string;
  readonly contentLength: number;
  /** The content, streamed. rerun destroys it when the build asks for the next input. */
  readonly body: Readable;
}

/** Where the build writes the window's output (held in memory, then staged and published whole). */
export interface WindowWriter {
  write(chunk: string | Uint8Array): void;
}

/** What the build knows about the window it builds. */
export interface WindowBuildContext<InputRecord = undefined> {
  readonly window: PartitionWindow;
  /** The window's label as its output's metadata records it. */
  readonly partition: string;
  readonly codeVersion: string;
  /** The hash the output will record: its lineage with the code version. */
  readonly lineageHash: string;
  /** Every input, sorted: the order `inputs` yields them in. */
  readonly lineage: readonly WindowLineageEntry[];
  /** The record of its inputs the task keeps ({@link WindowTaskDefinition.recordInputs}), if any. */
  readonly record: InputRecord | undefined;
  /**
   * Throws before the function's deadline (retryable when the task only started late, not when its
   * pace cannot read the window in one invocation). rerun calls it before each input; a build that
   * spends long on one input calls it now and then.
   */
  checkDeadline(): void;
}

/** A listed lineage entry with the key and time the listing gave it (for a record of the inputs). */
export interface ListedLineageEntry extends WindowLineageEntry {
  readonly key: string;
  /** S3's LastModified, epoch ms. */
  readonly lastModified: number;
}

/** A key under a listed prefix that belongs to no window of its source's scheme: skipped, with its reason. */
export interface SkippedKey {
  readonly source: string;
  readonly key: string;
  readonly reason: string;
}

/**
 * Words the task's messages and reasons use (the reference summary says "summary", "day", "summarized").
 * Every field has its default.
 */
export interface WindowWords {
  /** @default 'window output' */
  readonly output?: string;
  /** @default 'window' */
  readonly window?: string;
  /** @default 'built' */
  readonly built?: string;
  /** @default 'window task function' */
  readonly functionName?: string;
  /** What the lineage entries are. @default 'inputs' */
  readonly entries?: string;
  /** The option that bounds the output's size. @default 'maxOutputBytes' */
  readonly maxBytesOption?: string;
}

/**
 * How a window with more inputs than one invocation takes (`maxInputs`) is built: from the windows
 * of a finer grain of the task's own time scheme, its parts (a day from its 24 hours). Each part is
 * built by the task's `build` over the part's own inputs and published at a key of its own,
 * `{prefix}_parts/{window path}{part}/{fileName}`, with its own lineage hash, a staging copy and a
 * conditional publish, exactly as a window is. Then `combine` builds the window's output from the
 * parts' outputs. A part already current is not built again, so a window whose parts take more
 * than one invocation continues, on the next receive, where the last one stopped. Which way a
 * window is built depends on its lineage alone (its count against `maxInputs`), and the window's
 * output records the same lineage hash either way: status, backfills and downstream stages do not
 * see the difference.
 *
 * @example
 * const parts: WindowParts<{ records: number }> = {
 *   grain: 'hourly',
 *   async combine(hours, writer) { let records = 0; for await (const h of hours) records += JSON.parse(await text(h.body)).records; writer.write(`{"records":${records}}\n`); return { records }; },
 * };
 */
export interface WindowParts<Result = unknown, InputRecord = undefined> {
  /**
   * The parts' grain: its windows tile the task's (hours in a day; days in a week or a month), and
   * each input's windows lie inside one part (an hourly or daily input for daily parts).
   */
  readonly grain: TimeGrain;
  /**
   * Builds the window's output from its parts' outputs, in window order (each input's `source` is
   * `_parts` and its `path` is `{part name}/{fileName}`, e.g. `2026-12-05T13/counts.json`), into
   * `writer`. The context's lineage lists the parts; its `lineageHash` is the window's own. So that
   * the output does not depend on the way taken, it should give the bytes `build` gives over all the
   * window's inputs.
   */
  combine(
    parts: AsyncIterable<WindowInput>,
    writer: WindowWriter,
    context: WindowBuildContext<InputRecord>,
  ): Promise<Result>;
}

/**
 * A user's window task: how one window's output is built from its inputs. rerun does the rest: the
 * lineage (the inputs' keys and ETags, hashed), the done-check, the reads pinned to the listed
 * ETags, the staging copy, the validation, the conditional publish, the manifest marker and the judge.
 *
 * @example
 * const daily = defineWindowTask({
 *   name: 'daily-counts', codeVersion: 'daily-counts@1',
 *   partitions: { kind: 'time', grain: 'daily', template: 'dt={yyyy}-{MM}-{dd}' },
 *   inputs: [{ name: 'hourly', prefix: 'events/', partitions: { kind: 'time', grain: 'hourly', template: 'year={yyyy}/month={MM}/day={dd}/hour={HH}' } }],
 *   output: { bucket: 'out', prefix: 'daily/', fileName: 'counts.json' },
 *   async build(inputs, writer) { let n = 0; for await (const input of inputs) { n++; input.body.resume(); } writer.write(`{"files":${n}}\n`); return { files: n }; },
 * });
 */
export interface WindowTaskDefinition<Result = unknown, InputRecord = undefined> {
  /** Name used in logs and messages. */
  readonly name: string;
  /** Version of the build's code and output format; outputs of another version are rebuilt. */
  readonly codeVersion: string;
  /** The task's own windows (its time windows' template must have the grain's own unit: one prefix per window). */
  readonly partitions: PartitionSpec;
  /** What each window reads. */
  readonly inputs: readonly WindowInputSource[];
  /** Where each window's output goes: `{prefix}{window's prefix}{fileName}`, e.g. `daily/dt=2026-12-05/counts.json`. */
  readonly output: {
    readonly bucket: string;
    readonly prefix: string;
    readonly fileName: string;
    /** @default 'application/octet-stream' */
    readonly contentType?: string;
    /**
     * Root of the staging copies (one lifecycle rule can expire them all).
     * @default `${prefix}_staging/`
     */
    readonly stagingPrefix?: string;
  };
  /**
   * Builds the window's output from its inputs (sorted by source, then key) into `writer`, and
   * returns what the outcome reports. Must be a function of the inputs' bytes and the context alone
   * (no clock, no random), so a rebuild of the same lineage gives the same bytes.
   */
  build(
    inputs: AsyncIterable<WindowInput>,
    writer: WindowWriter,
    context: WindowBuildContext<InputRecord>,
  ): Promise<Result>;
  /**
   * The audit of the staged copy: the reason it must not be published, or undefined when it may.
   * rerun checks the bytes' SHA-256 itself.
   * @default no check beyond the digest
   */
  validate?(
    bytes: Uint8Array,
    context: { readonly partition: string; readonly lineageHash: string; readonly codeVersion: string },
  ): string | undefined;
  /**
   * The window's label in the output's metadata and lineage hash.
   * @default the window's name (`2026-12-05`)
   */
  partitionLabel?(window: PartitionWindow): string;
  /**
   * A record of the window's inputs the output keeps beyond its lineage (the reference summary's
   * coverage of the day's raw inputs): its digest joins the done-check, the metadata and the marker.
   * @default none
   */
  recordInputs?(
    window: PartitionWindow,
    listing: { readonly lineage: readonly ListedLineageEntry[]; readonly reader: S3PartitionStore },
  ): Promise<{ readonly digest: string; readonly value: InputRecord } | undefined>;
  /**
   * How a window above `maxInputs` is built from windows of a finer grain (a time scheme only).
   * @default none: such a window is refused ({@link WindowTooLargeError})
   */
  readonly parts?: WindowParts<Result, InputRecord>;
  /** Words of its messages. @default the generic ones */
  readonly words?: WindowWords;
}

/** The names of {@link WindowTaskDefinition}, checked by checkOptions (tsc fails when this list and the type differ). */
export const WINDOW_TASK_DEFINITION_NAMES = {
  build: true,
  codeVersion: true,
  inputs: true,
  name: true,
  output: true,
  partitionLabel: true,
  partitions: true,
  parts: true,
  recordInputs: true,
  validate: true,
  words: true,
} as const satisfies OptionNames<WindowTaskDefinition<unknown, unknown>>;

/** The names of {@link WindowParts}, checked by checkOptions (tsc fails when this list and the type differ). */
export const WINDOW_PARTS_NAMES = {
  combine: true,
  grain: true,
} as const satisfies OptionNames<WindowParts<unknown, unknown>>;

/** A checked window task: its definition with its schemes built. */
export interface CompiledWindowTask<Result = unknown, InputRecord = undefined> {
  readonly definition: WindowTaskDefinition<Result, InputRecord>;
  /** The task's own scheme. */
  readonly scheme: PartitionScheme;
  /** Each input with its scheme, and, where its windows tile the task's, its scheme at the task's grain (one listing per window). */
  readonly sources: readonly {
    readonly source: ResolvedInputSource;
    readonly bucket: string;
    readonly scheme: PartitionScheme;
    readonly listingScheme: PartitionScheme | undefined;
  }[];
  readonly words: Required<WindowWords>;
}

/** What a run needs from its environment: the clients, the logger, the deadline. */
export interface WindowRunOptions {
  /** Conditional puts, HEAD with checksum, conditional deletes. */
  readonly store: S3ObjectStore;
  /** Listings with ETags, GETs pinned to an ETag. */
  readonly reader: S3PartitionStore;
  /** @default silentLogger */
  readonly logger?: Logger;
  /**
   * Times to start over when the inputs change while they are read, or another writer publishes first.
   * @default 4
   */
  readonly maxRounds?: number;
  /**
   * The most lineage entries one invocation builds: a larger window is built from its parts
   * ({@link WindowTaskDefinition.parts}), each at most this large; without parts, or with a part
   * above it, it fails at once, not retryable ({@link WindowTooLargeError}), before anything is read.
   * @default DEFAULT_MAX_WINDOW_INPUTS (50,000, sized for a 900 s timeout)
   */
  readonly maxInputs?: number;
  /**
   * The largest output, bytes (it is built in memory and written with one PutObject).
   * @default DEFAULT_MAX_WINDOW_OUTPUT_BYTES (64 MiB)
   */
  readonly maxOutputBytes?: number;
  /** The invocation's time. @default none: no time guard */
  readonly deadline?: WindowDeadline;
  /**
   * GETs in flight, the input the build reads and those ahead of it (the build still gets the
   * inputs one at a time, in order). 1 reads one input after the other.
   * @default DEFAULT_WINDOW_READ_AHEAD (8)
   */
  readonly readAhead?: number;
}

/** The invocation's time, as a window task's guard reads it. */
export interface WindowDeadline {
  remainingTimeMs(): number;
  readonly marginMs: number;
  /** The invocation's whole time when it started (at most the function's timeout). */
  readonly timeLimitMs: number;
  /** The clock (epoch ms) that measures how long the task has read. */
  now(): number;
}

/** How a run of a window task ended (failures are thrown). */
export interface WindowOutcome<Result = unknown> {
  readonly status: 'processed' | 'skipped';
  /** Why, in words an operator reads. */
  readonly reason: string;
  readonly window: PartitionWindow;
  readonly outputKey: string;
  readonly lineageHash: string;
  /** ETag of the published output. */
  readonly etag: string;
  /** Lineage entries of the window. */
  readonly inputs: number;
  /** Keys under the window's listings that belong to no window of their scheme. */
  readonly skipped: readonly SkippedKey[];
  /** The state the done-check found before this run, and why (absent when it was missing). */
  readonly previous?: { readonly state: string; readonly reason: string };
  /** Whether the marker had to be repaired (a skipped run). */
  readonly markerRepaired?: boolean;
  /** What the build returned, when this run built the output. */
  readonly result?: Result;
  /** For a window built from its parts: how many there are, and how many this run built. */
  readonly parts?: { readonly total: number; readonly built: number };
}
