import { windowsIntersecting } from '../partitions/mapWindows.js';
import type { PartitionWindow } from '../partitions/partitionScheme.js';
import type { S3PartitionStore } from '../s3/S3PartitionStore.js';
import type { CompiledWindowTask, ListedLineageEntry, SkippedKey } from './WindowTaskDefinition.js';
import { sortWindowLineage } from './windowLineage.js';

/**
 * The inputs of one window of a task: for each of its inputs, the windows of that input's scheme
 * that intersect the window (a day's 24 hours), listed with their ETags. Where the input's windows
 * tile the task's (hours in a day), one listing of the window's prefix in the input's template
 * serves them all (`year=2026/month=12/day=05/hour=`); otherwise each intersecting window's own
 * prefixes are listed. Every listed key is classified by the input's scheme: in one of the
 * intersecting windows (an entry), in a neighbouring window (a listing that narrows: not this
 * window's), or in none (skipped, with its reason; never silently left out). An upstream window
 * task's markers and staging copies are its bookkeeping, not inputs, and other objects beside its
 * outputs are skipped with their reason.
 *
 * @example
 * const { lineage, skipped } = await listWindowLineage(task, task.scheme.parseWindow('2026-12-05'), reader);
 */
export async function listWindowLineage(
  task: CompiledWindowTask<unknown, unknown>,
  window: PartitionWindow,
  reader: S3PartitionStore,
): Promise<{ readonly lineage: ListedLineageEntry[]; readonly skipped: SkippedKey[] }> {
  const lineage: ListedLineageEntry[] = [];
  const skipped: SkippedKey[] = [];
  for (const { source, bucket, scheme, listingScheme } of task.sources) {
    const upstream = windowsIntersecting(scheme, window);
    const wanted = new Set(upstream.map((w) => w.name));
    const prefixes = listingScheme
      ? listingScheme.prefixesOf(window as never)
      : upstream.flatMap((w) => scheme.prefixesOf(w as never));
    const seen = new Set<string>();
    for (const prefix of prefixes) {
      for await (const object of reader.list(bucket, { prefix: `${source.prefix}${prefix}` })) {
        if (seen.has(object.key)) continue;
        seen.add(object.key);
        const path = object.key.slice(source.prefix.length);
        const reading = scheme.windowOfKey(path);
        const kind =
          'reason' in reading
            ? reading
            : wanted.has(reading.window.name)
              ? source.classify(path, reading.window)
              : undefined;
        if (kind === undefined || kind === 'bookkeeping') continue;
        if (kind !== 'input') skipped.push({ source: source.name, key: object.key, reason: kind.reason });
        else {
          lineage.push({
            source: source.name,
            path,
            etag: object.etag,
            key: object.key,
            lastModified: object.lastModified ?? 0,
          });
        }
      }
    }
  }
  return { lineage: sortWindowLineage(lineage), skipped };
}
