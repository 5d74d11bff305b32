import type { PartitionListing } from './judgePartition.js';
import type { LineageEntry } from './lineage.js';
import { type Day, dayOfRelativeKey, daysInWindow, partitionName } from './partition.js';
import type { S3PartitionStore } from './S3PartitionStore.js';
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
}

/**
 * Lists a window's partitions with three paginated listings and no per-partition request: the
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

  for (const kind of [LineageKind.NORMALIZED, LineageKind.QUARANTINE]) {
    const root = lineageRoot(layout, kind);
    for await (const object of store.list(bucket, windowListing(root, from, to))) {
      const path = object.key.slice(root.length);
      const day = dayOfRelativeKey(path);
      if (day) byDay.get(day)?.lineage.push({ kind, path, etag: object.etag });
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

  return days.map((day) => {
    const entry = byDay.get(day) as { lineage: LineageEntry[]; summary?: { etag: string }; markers: MarkerInfo[] };
    return { day, ...entry };
  });
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
  const entries: LineageEntry[] = [];
  for (const kind of [LineageKind.NORMALIZED, LineageKind.QUARANTINE]) {
    const root = lineageRoot(layout, kind);
    for await (const object of store.list(bucket, { prefix: lineagePrefix(layout, kind, day) })) {
      entries.push({ kind, path: object.key.slice(root.length), etag: object.etag });
    }
  }
  return entries;
}
