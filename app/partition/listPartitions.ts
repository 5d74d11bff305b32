import { mapWithConcurrency } from '../../src/batch/mapWithConcurrency.js';
import {
  type FailureIndexEntry,
  failureIndexDayPrefix,
  failureIndexRoot,
  parseFailureIndexKey,
} from '../../src/failures/failureIndex.js';
import { type Day, dayOfRelativeKey, daysInWindow, partitionName } from '../../src/keys/partition.js';
import {
  type CoverageInput,
  type CoverageListing,
  classifyInputs,
  coverageCandidates,
  type InputCoverage,
  type InputRules,
  judgeInputCoverage,
  recordedSourceEtag,
} from './inputCoverage.js';
import type { PartitionListing } from './judgePartition.js';
import type { LineageEntry } from './lineage.js';
import type { S3PartitionStore } from './S3PartitionStore.js';
import { type SummaryCoverage, summaryCoverageOf } from './summaryCoverage.js';
import {
  classifySummaryKey,
  LineageKind,
  lineagePrefix,
  lineageRoot,
  type MarkerInfo,
  type SummaryLayout,
  summaryRoot,
} from './summaryLayout.js';

/** Options of {@link listPartitions}. */
export interface ListPartitionsOptions {
  readonly store: S3PartitionStore;
  /** The output bucket. */
  readonly bucket: string;
  readonly layout: SummaryLayout;
  /** First day of the window. */
  readonly from: Day;
  /** Last day of the window (included). */
  readonly to: Day;
  /**
   * Also list the window's inputs (in the input bucket) and the failure index, and judge each day's
   * input coverage (app/partition/inputCoverage.ts): two more paginated listings, and one HEAD per
   * output the listings call older than its input (coverageCandidates: only its recorded source
   * ETag tells an outdated output from identical bytes uploaded again).
   * @default undefined: outputs only
   */
  readonly inputs?: InputRules;
}

/**
 * Lists a window's partitions with three paginated listings and no per-partition request (five with
 * `inputs`: the inputs and the failure index too, for each day's input coverage): the
 * normalized outputs and the quarantine objects of the window (the lineage, with ETags) and the
 * published summaries with their manifest markers. Each listing starts at the window's first day
 * (`StartAfter`) and stops at its last, so its cost is about (objects in the window) / 1000 requests.
 *
 * @example
 * const listings = await listPartitions({ store, bucket: 'rerun-output', layout, from: '2026-01-01', to: '2026-01-30' });
 */
export async function listPartitions(options: ListPartitionsOptions): Promise<PartitionListing[]> {
  const { store, bucket, layout, from, to } = options;
  const days = daysInWindow(from, to);
  const byDay = new Map<Day, { lineage: LineageEntry[]; summary?: { etag: string }; markers: MarkerInfo[] }>(
    days.map((day) => [day, { lineage: [], markers: [] }]),
  );

  // Output and quarantine keys per day with LastModified, for the input coverage (same listings).
  const outputs = new Map<Day, Map<string, number>>(days.map((day) => [day, new Map()]));
  for (const kind of [LineageKind.NORMALIZED, LineageKind.QUARANTINE]) {
    const root = lineageRoot(layout, kind);
    for await (const object of store.list(bucket, windowListing(root, from, to))) {
      const path = object.key.slice(root.length);
      const day = dayOfRelativeKey(path);
      if (day) byDay.get(day)?.lineage.push({ kind, path, etag: object.etag });
      if (day) outputs.get(day)?.set(object.key, object.lastModified ?? 0);
    }
  }

  for await (const object of store.list(bucket, windowListing(summaryRoot(layout), from, to))) {
    const found = classifySummaryKey(layout, object.key);
    if (found.kind === 'other') continue;
    const entry = byDay.get(found.day);
    if (!entry) continue;
    if (found.kind === 'summary') entry.summary = { etag: object.etag };
    else entry.markers.push(found.marker);
  }

  const coverage = options.inputs ? await listCoverage(options, days, outputs) : undefined;
  return days.map((day) => {
    const entry = byDay.get(day) as { lineage: LineageEntry[]; summary?: { etag: string }; markers: MarkerInfo[] };
    const covered = coverage?.get(day);
    return { day, ...entry, ...(covered ? { coverage: covered } : {}) };
  });
}

/** The window's inputs and failure index entries (two more listings), with its outputs, judged per day. */
async function listCoverage(
  options: ListPartitionsOptions,
  days: readonly Day[],
  outputs: ReadonlyMap<Day, Map<string, number>>,
): Promise<Map<Day, InputCoverage>> {
  const { store, bucket, from, to } = options;
  const rules = options.inputs as InputRules;
  const perDay = new Map(
    days.map((day) => [
      day,
      {
        inputs: [] as CoverageInput[],
        outputs: outputs.get(day) ?? new Map<string, number>(),
        failures: [] as FailureIndexEntry[],
      },
    ]),
  );
  const inDay = (root: string, key: string) => perDay.get(dayOfRelativeKey(key.slice(root.length)) ?? '');
  for await (const object of store.list(rules.bucket, windowListing(rules.prefix, from, to))) {
    if (object.key.endsWith('/')) continue; // a folder marker is no input
    inDay(rules.prefix, object.key)?.inputs.push(coverageInput(object));
  }
  const indexRoot = failureIndexRoot(rules.failurePrefix, rules.bucket);
  for await (const object of store.list(bucket, windowListing(indexRoot, from, to))) {
    const entry = parseFailureIndexKey(object.key);
    if (entry) inDay(indexRoot, object.key)?.failures.push(entry);
  }
  const judged = new Map<Day, InputCoverage>();
  for (const [day, listing] of perDay) {
    const recordedSources = await readRecordedSources(store, bucket, listing, rules);
    judged.set(day, judgeInputCoverage({ ...listing, recordedSources }, rules));
  }
  return judged;
}

/**
 * An input as an input coverage reads it from a listing: its key, LastModified and ETag.
 *
 * @example
 * inputs.push(coverageInput(object)); // { key, lastModified, etag }
 */
export function coverageInput(object: { key: string; etag: string; lastModified?: number }): CoverageInput {
  return { key: object.key, lastModified: object.lastModified ?? 0, etag: object.etag };
}

/**
 * One HEAD (8 at a time) of each output the listings call older than its input, for the input ETag
 * it records: the same rule in `rerun status`, the backfill planner and the summary's own coverage
 * record, so a day whose inputs were uploaded again with identical bytes stays published.
 *
 * @example
 * const recordedSources = await readRecordedSources(store, 'rerun-output', { inputs, outputs, failures }, rules);
 */
export async function readRecordedSources(
  store: S3PartitionStore,
  bucket: string,
  listing: CoverageListing,
  rules: InputRules,
): Promise<Map<string, string>> {
  const recorded = new Map<string, string>();
  await mapWithConcurrency(coverageCandidates(listing, rules), 8, async ({ inputKey, outputKey }) => {
    const metadata = await store.headMetadata(bucket, outputKey);
    const etag = metadata && recordedSourceEtag(metadata, { bucket: rules.bucket, key: inputKey });
    if (etag) recorded.set(outputKey, etag);
  });
  return recorded;
}

/**
 * The listing of `{root}dt=from/` .. `{root}dt=to/`: keys are `{root}dt=YYYY-MM-DD/...`, and
 * fixed-width dates sort lexicographically in date order.
 */
function windowListing(root: string, from: Day, to: Day) {
  const prefix = `${root}dt=`;
  return {
    prefix,
    // `{root}dt=2026-01-05` sorts right before every key of that day (`{root}dt=2026-01-05/...`).
    startAfter: `${root}${partitionName(from)}`,
    stopAt: (key: string) => key.slice(prefix.length, prefix.length + 10) > to,
  };
}

/**
 * The lineage of one day: its normalized outputs and quarantine objects with their ETags (two
 * listings of the day's exact prefixes).
 *
 * @example
 * const lineage = await listLineage(store, 'rerun-output', layout, '2026-01-05');
 */
export async function listLineage(
  store: S3PartitionStore,
  bucket: string,
  layout: SummaryLayout,
  day: Day,
): Promise<LineageEntry[]> {
  return (await listDayOutputs(store, bucket, layout, day)).lineage;
}

/**
 * What one day's summary is made of: its lineage (as {@link listLineage}) and, with the inputs'
 * rules, which inputs of the day it covers and which it does not. That takes two more listings (the
 * day's inputs in the input bucket, the day's failure index entries) and one HEAD per output older
 * than its input, never a request per input, and judges them by the same rule as `rerun status` and
 * the backfill planner.
 *
 * @example
 * const { lineage, coverage } = await listSummaryInputs(store, 'rerun-output', layout, '2026-01-05', rules);
 */
export async function listSummaryInputs(
  store: S3PartitionStore,
  bucket: string,
  layout: SummaryLayout,
  day: Day,
  rules?: InputRules,
): Promise<{ lineage: LineageEntry[]; coverage?: SummaryCoverage }> {
  const { lineage, outputs } = await listDayOutputs(store, bucket, layout, day);
  if (!rules) return { lineage };
  return { lineage, coverage: await listDayCoverage(store, bucket, day, rules, outputs) };
}

/**
 * Which inputs of one day a summary covers, given the day's outputs (full key -> LastModified, from
 * the lineage listings): two listings (the day's inputs in the input bucket, the day's failure index
 * entries), and one HEAD of each output older than its input (its recorded source decides), judged
 * by the same rule as `rerun status` and the backfill planner.
 *
 * @example
 * const coverage = await listDayCoverage(store, 'rerun-output', '2026-01-05', rules, outputs);
 */
export async function listDayCoverage(
  store: S3PartitionStore,
  bucket: string,
  day: Day,
  rules: InputRules,
  outputs: ReadonlyMap<string, number>,
): Promise<SummaryCoverage> {
  const inputs: CoverageInput[] = [];
  for await (const object of store.list(rules.bucket, { prefix: `${rules.prefix}${partitionName(day)}/` })) {
    if (object.key.endsWith('/')) continue; // a folder marker is no input
    inputs.push(coverageInput(object));
  }
  const failures: FailureIndexEntry[] = [];
  for await (const object of store.list(bucket, {
    prefix: failureIndexDayPrefix(rules.failurePrefix, rules.bucket, day),
  })) {
    const entry = parseFailureIndexKey(object.key);
    if (entry) failures.push(entry);
  }
  const listing = { inputs, outputs, failures };
  const recordedSources = await readRecordedSources(store, bucket, listing, rules);
  return summaryCoverageOf(classifyInputs({ ...listing, recordedSources }, rules));
}

async function listDayOutputs(
  store: S3PartitionStore,
  bucket: string,
  layout: SummaryLayout,
  day: Day,
): Promise<{ lineage: LineageEntry[]; outputs: Map<string, number> }> {
  const lineage: LineageEntry[] = [];
  const outputs = new Map<string, number>();
  for (const kind of [LineageKind.NORMALIZED, LineageKind.QUARANTINE]) {
    const root = lineageRoot(layout, kind);
    for await (const object of store.list(bucket, { prefix: lineagePrefix(layout, kind, day) })) {
      lineage.push({ kind, path: object.key.slice(root.length), etag: object.etag });
      outputs.set(object.key, object.lastModified ?? 0);
    }
  }
  return { lineage, outputs };
}
